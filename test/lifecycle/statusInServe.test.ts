import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { blockTimesOf } from '../../src/app/blockTimesOf.ts'
import { runCli } from '../../src/cli/runCli.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { SwapStatusWire } from '../../src/schemas/swapStatus.ts'
import { type AnvilInstance, startAnvil } from '../chain/anvil.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

// Issue 18 items 1 and 6, through `swapeazi serve`: the status endpoints read serve's own tracker, built wherever an
// RPC is configured even when it does not poll (SWAPEAZI_TRACKER=off), and a hint is checked against the chain.

let anvil: AnvilInstance
let dir: string

beforeAll(async () => {
  ;[anvil, dir] = await Promise.all([startAnvil({ chainId: 8453 }), mkdtemp(join(tmpdir(), 'swapeazi-status-'))])
}, 60_000)
afterAll(async () => {
  await anvil?.stop()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

type Running = { url: string; stop(): Promise<number> }

/** Starts `swapeazi serve` in this process and resolves once it listens, with its URL. */
async function serve(env: Record<string, string>): Promise<Running> {
  const stdin = new PassThrough()
  stdin.end()
  const stderr = new TextSink()
  const stop = new AbortController()
  const exited = runCli(['serve'], {
    env,
    stdin,
    stdout: new TextSink(),
    stderr,
    stop: stop.signal,
    pgliteTemplate: await migratedPgliteTemplate(),
  })
  for (let waited = 0; ; waited += 20) {
    const listening = /"event":"listening","url":"([^"]+)"/.exec(stderr.text)
    if (listening?.[1] !== undefined) {
      const url = listening[1]
      return {
        url,
        stop: async () => {
          stop.abort()
          return exited
        },
      }
    }
    if (waited > 60_000) throw new Error(`serve did not listen within 60 s:\n${stderr.text}`)
    const code = await Promise.race([exited, sleep(20, undefined)])
    if (code !== undefined) throw new Error(`serve exited with ${code}:\n${stderr.text}`)
  }
}

const OWN_ROUTER = '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'

const json = async (response: Response): Promise<Record<string, unknown>> => (await response.json()) as Record<string, unknown>
const post = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

/** A keyed swap built on a serve priced from the snapshot (no RPC: a chain read live without its feeds quotes nothing). */
async function buildKeyedSwaps(dataDir: string): Promise<{ bas: SwapResult; eth: SwapResult }> {
  // A router of the operator's own: a swap against the inert default reads do_not_sign, never sign_and_broadcast.
  const running = await serve({ SWAPEAZI_PORT: '0', SWAPEAZI_DATA_DIR: dataDir, SWAPEAZI_ROUTER_ADDRESS: OWN_ROUTER })
  try {
    const { key } = (await json(await post(`${running.url}/api/v1/keys`, {}))) as { key: string }
    const build = async (chain: string, toToken: string): Promise<SwapResult> => {
      const quote = {
        fromChain: chain,
        toChain: chain,
        fromToken: 'USDC',
        toToken,
        fromAmount: '100',
        fromAddress: anvil.accounts[0]?.address,
      }
      const { quoteId } = (await json(await post(`${running.url}/api/x402/quote`, quote))) as { quoteId: string }
      const built = await post(`${running.url}/api/v1/swap`, { quoteId }, { 'x-swapeazi-key': key })
      expect(built.status).toBe(200)
      return SwapResult.parse(await built.json())
    }
    return { bas: await build('BAS', 'USDT'), eth: await build('ETH', 'USDT') }
  } finally {
    expect(await running.stop()).toBe(0)
  }
}

describe('the swap status in serve', () => {
  it("follows the chains of SWAPEAZI_RPC_URLS even with the tracker off, and checks a hint against the chain's receipt", async () => {
    const dataDir = join(dir, 'serve')
    const { bas, eth } = await buildKeyedSwaps(dataDir)
    // A transaction on the chain that is not a swap: its receipt holds no Swapped event.
    const [account] = anvil.accounts
    if (account === undefined) throw new Error('no anvil account')
    const transfer = await anvil.walletClient(account).sendTransaction({ to: '0x000000000000000000000000000000000000dEaD', value: 1n })
    await anvil.publicClient.waitForTransactionReceipt({ hash: transfer })

    const running = await serve({
      SWAPEAZI_PORT: '0',
      SWAPEAZI_DATA_DIR: dataDir,
      SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: anvil.rpcUrl }),
      // The live market would read Across's public API: nothing here may reach the internet.
      SWAPEAZI_ACROSS_API_URL: 'off',
      SWAPEAZI_TRACKER: 'off',
      SWAPEAZI_CONFIRMATIONS: '{"BAS":0}',
    })
    try {
      const basStatus = SwapStatusWire.parse(await json(await fetch(`${running.url}/api/v1/swap/${bas.swapEaziRef}/status`)))
      expect(basStatus).toMatchObject({ state: 'built', next: { action: 'sign_and_broadcast', checkAgainSec: 30 } })
      expect(basStatus.orders[0]?.isTracked).toBe(true)
      const ethStatus = SwapStatusWire.parse(await json(await fetch(`${running.url}/api/v1/swap/${eth.swapEaziRef}/status`)))
      expect(ethStatus.orders[0]?.isTracked).toBe(false)

      const mismatch = await post(`${running.url}/api/v1/swap/${bas.swapEaziRef}/transaction`, { txHash: transfer })
      expect(mismatch.status).toBe(422)
      expect(await json(mismatch)).toMatchObject({ code: 'transaction_mismatch', reason: 'not_this_swap', chain: 'BAS' })
      const unmined = await post(`${running.url}/api/v1/swap/${bas.swapEaziRef}/transaction`, { txHash: `0x${'ab'.repeat(32)}` })
      expect(await json(unmined)).toMatchObject({ code: 'transaction_mismatch', reason: 'transaction_not_found' })
      const untracked = await post(`${running.url}/api/v1/swap/${eth.swapEaziRef}/transaction`, { txHash: transfer })
      expect(untracked.status).toBe(422)
      expect(untracked.headers.get('retry-after')).toBeNull()
      expect(await json(untracked)).toMatchObject({ code: 'chain_not_tracked', chain: 'ETH' })
    } finally {
      expect(await running.stop()).toBe(0)
    }
  }, 120_000)

  it("dates an observation's blocks from the chain: blockTimesOf reads a block's time over the tracker's clients", async () => {
    const blockTimeSec = blockTimesOf({ BAS: anvil.publicClient })
    await anvil.testClient.mine({ blocks: 1 })
    const block = await anvil.publicClient.getBlock()
    expect(await blockTimeSec('BAS', block.number)).toBe(Number(block.timestamp))
    await expect(blockTimeSec('ETH', 1n)).rejects.toThrow('no RPC for ETH')
  })
})
