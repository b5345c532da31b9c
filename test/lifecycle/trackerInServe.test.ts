// `swapeazi serve` runs the tracker where an RPC is configured (issue 18 item 3) and stops it before its store closes;
// SWAPEAZI_TRACKER=off leaves it out; `swapeazi track` runs it apart, with the relayer where a key is set. The tracker's first poll leaves its cursor in
// the store, which the test reads once the process has let go of it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { createLifecycleStore } from '../../src/store/createLifecycleStore.ts'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import { type AnvilInstance, startAnvil } from '../chain/anvil.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

/** Anvil's tenth default key (index 9): a relayer key that sends nothing here. */
const RELAYER_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'

let anvil: AnvilInstance
let dir: string

beforeAll(async () => {
  ;[anvil, dir] = await Promise.all([startAnvil({ chainId: 8453 }), mkdtemp(join(tmpdir(), 'swapeazi-tracker-'))])
}, 60_000)
afterAll(async () => {
  await anvil?.stop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Runs a command in this process until `until` appears in its logs, then stops it as SIGTERM would. */
async function runUntil(argv: string[], env: Record<string, string>, until: RegExp): Promise<{ code: number; logs: string }> {
  const stdin = new PassThrough()
  stdin.end()
  const stderr = new TextSink()
  const stop = new AbortController()
  const exited = runCli(argv, {
    env,
    stdin,
    stdout: new TextSink(),
    stderr,
    stop: stop.signal,
    pgliteTemplate: await migratedPgliteTemplate(),
  })
  for (let waited = 0; !until.test(stderr.text); waited += 20) {
    if (waited > 60_000) throw new Error(`${argv[0]}: no ${until} within 60 s:\n${stderr.text}`)
    const code = await Promise.race([exited, sleep(20, undefined)])
    if (code !== undefined) throw new Error(`${argv[0]} exited with ${code}:\n${stderr.text}`)
  }
  stop.abort()
  return { code: await exited, logs: stderr.text }
}

const env = (dataDir: string, extra: Record<string, string> = {}): Record<string, string> => ({
  SWAPEAZI_PORT: '0',
  SWAPEAZI_DATA_DIR: dataDir,
  SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: anvil.rpcUrl }),
  // The live market would read Across's public API: nothing here may reach the internet.
  SWAPEAZI_ACROSS_API_URL: 'off',
  SWAPEAZI_TRACKER_POLL_MS: '100',
  SWAPEAZI_CONFIRMATIONS: '{"BAS":0}',
  ...extra,
})

async function cursorIn(dataDir: string): Promise<bigint | undefined> {
  const sql = await openPgliteSql(dataDir)
  try {
    return (await createLifecycleStore(sql).getCursor('BAS'))?.block
  } finally {
    await sql.close()
  }
}

describe('the tracker in serve and track', () => {
  it('serve runs it on the configured chains and stops it before the store closes', async () => {
    const dataDir = join(dir, 'serve')
    const head = await anvil.publicClient.getBlockNumber()
    const { code, logs } = await runUntil(['serve'], env(dataDir), /"event":"tracker_cursor_started"/)
    expect(code).toBe(0)
    expect(logs).toMatch(/"event":"tracker_started".*"chains":\["BAS"\]/)
    expect(logs).not.toMatch(/tracker_scan_failed|tracker_follow_failed/)
    expect(logs.indexOf('"event":"tracker_cursor_started"')).toBeLessThan(logs.indexOf('"event":"stopped"'))
    expect((await cursorIn(dataDir))! >= head).toBe(true)
  })

  it('SWAPEAZI_TRACKER=off leaves it out of serve', async () => {
    const dataDir = join(dir, 'off')
    const { code, logs } = await runUntil(['serve'], env(dataDir, { SWAPEAZI_TRACKER: 'off' }), /"event":"listening"/)
    expect(code).toBe(0)
    expect(logs).not.toContain('tracker_started')
    expect(await cursorIn(dataDir)).toBeUndefined()
  })

  it('swapeazi track runs it apart, with the relayer and compose retries where a key is set, and refuses to start with no chain to follow', async () => {
    const dataDir = join(dir, 'track')
    await anvil.testClient.mine({ blocks: 3 })
    const head = await anvil.publicClient.getBlockNumber()
    const { code, logs } = await runUntil(['track'], env(dataDir), /"event":"tracker_cursor_started"/)
    expect(code).toBe(0)
    expect(await cursorIn(dataDir)).toBe(head)
    expect(logs).toMatch(/"event":"cctp_relayer","available":false,"reason":"SWAPEAZI_RELAYER_PRIVATE_KEY is not set"/)

    // With the relayer key, track delivers CCTP messages and retries LayerZero composes on BAS as serve would.
    const keyed = await runUntil(
      ['track'],
      env(join(dir, 'track-relayer'), { SWAPEAZI_RELAYER_PRIVATE_KEY: RELAYER_KEY }),
      /"event":"tracker_cursor_started"/,
    )
    expect(keyed.code).toBe(0)
    expect(keyed.logs).toMatch(/"event":"cctp_relayer","available":true,"relayer":"0x[0-9a-fA-F]{40}","chains":\["BAS"\]/)
    expect(keyed.logs).toMatch(/"event":"lz_compose_retrier","available":true,"chains":\["BAS"\]/)
    expect(keyed.logs).toMatch(/"event":"payment_reconciler","available":false/)
    const stderr = new TextSink()
    const refused = await runCli(['track'], {
      env: { SWAPEAZI_DATA_DIR: join(dir, 'none') },
      stdin: new PassThrough(),
      stdout: new TextSink(),
      stderr,
    })
    expect(refused).toBe(1)
    expect(stderr.text).toBe(
      'swapeazi: nothing to track: SWAPEAZI_RPC_URLS names no chain; set it to the JSON-RPC URL of each chain to follow\n',
    )
  })
})
