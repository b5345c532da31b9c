import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Challenge, Credential } from 'mppx'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { buildAppDeps } from '../../src/app/buildAppDeps.ts'
import { type Config, loadConfig } from '../../src/config.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'swapeazi-mpp-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const silent = pino({ level: 'silent' })
const env = {
  SWAPEAZI_DATA_DIR: dataDir,
  SWAPEAZI_TEMPO_RPC_URL: 'http://127.0.0.1:9',
  SWAPEAZI_TEMPO_PAY_TO: '0x3333333333333333333333333333333333333333',
  SWAPEAZI_PUBLIC_URL: 'https://api.swapeazi.test',
}

/** The configuration of `variables`, its embedded store starting from the run's migrated template (seconds saved). */
async function configOf(variables: Record<string, string>): Promise<Config> {
  const config = loadConfig(variables)
  if (config.store.driver !== 'pglite') throw new Error('expected the embedded store')
  return { ...config, store: { ...config.store, template: await migratedPgliteTemplate() } }
}

/** A credential answering `challengeHeader` with a made-up hash: enough for `identify`, which checks only our HMAC. */
function credentialFor(challengeHeader: string): string {
  const challenge = Challenge.deserialize(challengeHeader)
  return Credential.serialize(Credential.from({ challenge, payload: { type: 'hash', hash: `0x${'ab'.repeat(32)}` } }))
}

describe('buildAppDeps and the MPP rail', () => {
  it('builds no rail without a Tempo RPC', async () => {
    const deps = await buildAppDeps(await configOf({ SWAPEAZI_DATA_DIR: 'memory://' }), silent)
    try {
      expect(deps.mpp).toBeUndefined()
    } finally {
      await deps.store.sql.close()
    }
  })

  it('builds the rail from configuration, with a generated secret kept in the store, so a restart verifies old challenges', async () => {
    const first = await buildAppDeps(await configOf(env), silent)
    let header: string
    try {
      expect(first.mpp).toMatchObject({
        realm: 'api.swapeazi.test',
        chainId: 4217,
        recipient: env.SWAPEAZI_TEMPO_PAY_TO,
        amountAtomic: 20_000n,
      })
      header = (await first.mpp?.challengeHeader()) ?? ''
      expect(first.mpp?.identify(credentialFor(header))).toBeDefined()
    } finally {
      await first.store.sql.close()
    }
    const second = await buildAppDeps(await configOf(env), silent)
    try {
      expect(second.mpp?.identify(credentialFor(header))).toBeDefined()
    } finally {
      await second.store.sql.close()
    }
    // Another secret does not recognise it.
    const other = await buildAppDeps(
      loadConfig({ ...env, SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_MPP_SECRET_KEY: 'o'.repeat(32) }),
      silent,
    )
    try {
      expect(other.mpp?.identify(credentialFor(header))).toBeUndefined()
    } finally {
      await other.store.sql.close()
    }
  })
})
