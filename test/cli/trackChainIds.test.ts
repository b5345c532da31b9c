import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { type ChainIdStandIn, SECRET, startChainIdStandIn } from '../support/chainIdStandIn.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

// `swapeazi track` checks each RPC URL's chain id once, at start, as `serve` does, and shares that one check between
// the tracker's clients and the relayer's: a URL of another chain ends it with one line; one that does not answer
// only warns, and is asked again before the chain's first use.

/** Anvil's tenth default key: a relayer key that sends nothing here. */
const RELAYER_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'

let dir: string
let standIn: ChainIdStandIn | undefined
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'swapeazi-track-chain-ids-'))
})
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})
afterEach(async () => {
  await standIn?.close()
  standIn = undefined
})

type Track = { exited: Promise<number>; stderr: TextSink; stop(): Promise<number> }

/** `swapeazi track` in this process, with the relayer key, BAS (8453) on the stand-in; `stop()` ends it as SIGTERM does. */
async function track(url: string, dataDir: string): Promise<Track> {
  const stdin = new PassThrough()
  stdin.end()
  const stderr = new TextSink()
  const controller = new AbortController()
  const exited = runCli(['track'], {
    env: {
      SWAPEAZI_DATA_DIR: join(dir, dataDir),
      SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: url }),
      SWAPEAZI_RELAYER_PRIVATE_KEY: RELAYER_KEY,
      SWAPEAZI_TRACKER_POLL_MS: '100',
    },
    stdin,
    stdout: new TextSink(),
    stderr,
    stop: controller.signal,
    pgliteTemplate: await migratedPgliteTemplate(),
  })
  return {
    exited,
    stderr,
    stop: async () => {
      controller.abort()
      return exited
    },
  }
}

/** Waits until `isDone`, or throws with the logs after 10 s. */
async function until(isDone: () => boolean, run: Track): Promise<void> {
  for (let waited = 0; !isDone(); waited += 20) {
    if (waited > 10_000) throw new Error(`not within 10 s:\n${run.stderr.text}`)
    await sleep(20)
  }
}

const events = (text: string, event: string): number => text.split('\n').filter((line) => line.includes(`"event":"${event}"`)).length

describe('swapeazi track: the chain-id check', () => {
  it('a URL of another chain ends it at start with one line, having asked it nothing but its chain id, once', async () => {
    standIn = await startChainIdStandIn(10)
    const run = await track(standIn.url, 'mismatch')
    // Without the start-up check it would run on: stopped after 5 s, it would exit 0.
    const code = await Promise.race([run.exited, sleep(5_000).then(() => run.stop())])
    expect(code).toBe(1)
    expect(run.stderr.text).toBe(
      'swapeazi: invalid configuration: SWAPEAZI_RPC_URLS.BAS: the RPC serves chain 10, not BAS (8453); give BAS an RPC of its own chain\n',
    )
    expect(standIn.methods).toEqual(['eth_chainId'])
  })

  it('a URL that does not answer at start only warns; found serving another chain later, it is logged once', async () => {
    standIn = await startChainIdStandIn(10)
    standIn.down = true
    const run = await track(standIn.url, 'unchecked')
    await until(() => events(run.stderr.text, 'tracker_started') > 0, run)
    expect(events(run.stderr.text, 'rpc_chain_id_unchecked')).toBe(1)
    standIn.down = false
    // The tracker polls every 100 ms and the relayer's balance check waits for the same check: both meet the mismatch.
    await until(() => events(run.stderr.text, 'rpc_chain_mismatch') > 0, run)
    await sleep(500)
    expect(await run.stop()).toBe(0)
    expect(events(run.stderr.text, 'rpc_chain_mismatch')).toBe(1)
    expect(new Set(standIn.methods)).toEqual(new Set(['eth_chainId']))
    expect(run.stderr.text).not.toContain(SECRET)
  })

  it('a URL of its own chain is asked its chain id once, for the tracker and the relayer together', async () => {
    standIn = await startChainIdStandIn(8453)
    const run = await track(standIn.url, 'verified')
    // The relayer reads its key's balance at start, and the tracker reads the chain at its first poll.
    await until(() => standIn!.methods.includes('eth_getBalance') && standIn!.methods.includes('eth_blockNumber'), run)
    expect(await run.stop()).toBe(0)
    expect(standIn.methods.filter((method) => method === 'eth_chainId')).toEqual(['eth_chainId'])
  })
})
