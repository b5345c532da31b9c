import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swapeazi-inert-router-'))
})
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** The start-up log of `swapeazi serve` under `env`, up to its first listening line. */
async function startupLog(name: string, env: Record<string, string>): Promise<string> {
  const stdin = new PassThrough()
  stdin.end()
  const stderr = new TextSink()
  const stop = new AbortController()
  const exited = runCli(['serve'], {
    env: { SWAPEAZI_PORT: '0', SWAPEAZI_DATA_DIR: join(dir, name), SWAPEAZI_TRACKER: 'off', ...env },
    stdin,
    stdout: new TextSink(),
    stderr,
    stop: stop.signal,
    pgliteTemplate: await migratedPgliteTemplate(),
  })
  for (let waited = 0; !stderr.text.includes('"event":"listening"'); waited += 20) {
    if (waited > 30_000) throw new Error(`serve did not listen within 30 s:\n${stderr.text}`)
    await sleep(20)
  }
  stop.abort()
  expect(await exited).toBe(0)
  return stderr.text
}

const warningOf = (log: string): Record<string, unknown> | undefined =>
  log
    .split('\n')
    .filter((line) => line.includes('"event":"router_default_inert"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)[0]

describe('the start-up warning about the inert default router', () => {
  it('names the chains SWAPEAZI_ROUTER_ADDRESSES leaves on the inert default, and says nothing once every chain has one', async () => {
    const own = '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'
    const some = warningOf(await startupLog('some', { SWAPEAZI_ROUTER_ADDRESSES: JSON.stringify({ BAS: own, POL: own }) }))
    // Every agent-callable chain but the two named (SOL and TRX are discovery only).
    expect(some?.['chains']).toEqual(['ETH', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL'])
    expect(some?.['msg']).toMatch(/^No router is set for ETH/)

    const none = warningOf(await startupLog('none', {}))
    expect(none?.['msg']).toMatch(/^SWAPEAZI_ROUTER_ADDRESS is not set/)

    expect(warningOf(await startupLog('all', { SWAPEAZI_ROUTER_ADDRESS: own }))).toBeUndefined()
  }, 90_000)
})
