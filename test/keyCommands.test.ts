import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { verifyApiKey } from '../src/auth/apiKey.ts'

const run = promisify(execFile)
const ROOT = new URL('..', import.meta.url).pathname
const dataDir = mkdtempSync(join(tmpdir(), 'swapeazi-keys-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const SECRET = 'operator-key-secret-operator-key-secret'
const cli = (args: string[], secret = SECRET): Promise<{ stdout: string; stderr: string }> =>
  run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', SWAPEAZI_DATA_DIR: dataDir, SWAPEAZI_KEY_SECRET: secret, SWAPEAZI_LOG_LEVEL: 'silent' },
  })

describe('swapeazi keys', () => {
  it('issues a pro key under the configured secret, then revokes it by key and by id', async () => {
    const issued = JSON.parse((await cli(['issue', '--tier', 'pro'])).stdout) as { key: string; id: string; tier: string }
    expect(issued.tier).toBe('pro')
    const verified = verifyApiKey(new TextEncoder().encode(SECRET), issued.key)
    expect(verified).toEqual({ ok: true, claims: expect.objectContaining({ id: issued.id, tier: 'pro' }) })
    expect(JSON.parse((await cli(['revoke', issued.key])).stdout)).toEqual({ id: issued.id, revoked: true, alreadyRevoked: false })
    expect(JSON.parse((await cli(['revoke', issued.id])).stdout)).toEqual({ id: issued.id, revoked: true, alreadyRevoked: true })
  }, 120_000)

  it('refuses an unknown tier and a key from another secret, with a message', async () => {
    await expect(cli(['issue', '--tier', 'gold'])).rejects.toMatchObject({ stderr: expect.stringContaining('--tier must be one of free, pro') })
    const foreign = JSON.parse((await cli(['issue'], 'another-secret-another-secret-another')).stdout) as { key: string }
    await expect(cli(['revoke', foreign.key])).rejects.toMatchObject({ stderr: expect.stringContaining('revoke it by its key_ id') })
  }, 120_000)
})
