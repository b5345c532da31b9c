import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { type AcrossStandIn, startAcrossStandIn } from '../market/acrossStandIn.ts'
import { closedPort } from '../support/closedPort.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

// `swapeazi serve` stops its live market before it closes the store: the market's Across refresh writes each lane's
// read to the store, and one left running reads Across on and writes to a closed store.

let stand: AcrossStandIn
let dir: string

beforeAll(async () => {
  ;[stand, dir] = await Promise.all([startAcrossStandIn(), mkdtemp(join(tmpdir(), 'swapeazi-stop-market-'))])
})
afterAll(async () => {
  await stand?.close()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe('serve at shutdown', () => {
  it('stops the live market before the store closes: no Across read and no store write after it has stopped', async () => {
    const stdin = new PassThrough()
    stdin.end()
    const stderr = new TextSink()
    const stop = new AbortController()
    const exited = runCli(['serve'], {
      env: {
        SWAPEAZI_PORT: '0',
        SWAPEAZI_DATA_DIR: join(dir, 'data'),
        // An RPC for Gnosis (no Across lane) turns the live market on; it is never reached.
        SWAPEAZI_RPC_URLS: JSON.stringify({ GNO: `http://127.0.0.1:${await closedPort()}` }),
        SWAPEAZI_ACROSS_API_URL: stand.url,
        SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: '20',
        SWAPEAZI_TRACKER: 'off',
      },
      stdin,
      stdout: new TextSink(),
      stderr,
      stop: stop.signal,
      pgliteTemplate: await migratedPgliteTemplate(),
    })
    // Stopped while its first refresh of the Across lanes (about 100 requests) is under way.
    for (let waited = 0; !stderr.text.includes('"event":"listening"') || stand.requests.length < 4; waited += 20) {
      if (waited > 30_000) throw new Error(`serve did not listen and read Across within 30 s:\n${stderr.text}`)
      await sleep(20)
    }
    stop.abort()
    expect(await exited).toBe(0)
    const afterStop = stand.requests.length
    await sleep(600)
    expect(stand.requests.length - afterStop).toBe(0)
    expect(stderr.text).not.toContain('market_across_keep_failed')
    expect(stderr.text).not.toContain('market_across_failed')
    expect(stderr.text).toContain('"event":"stopped"')
  }, 60_000)
})
