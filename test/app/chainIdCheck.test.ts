import { PassThrough } from 'node:stream'
import pino from 'pino'
import { createWalletClient, defineChain } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { chainIdChecksFromConfig, checkedRpcTransport } from '../../src/app/chainIdCheck.ts'
import { simulatorsFromConfig } from '../../src/app/simulatorsFromConfig.ts'
import { startRelaying } from '../../src/app/startRelaying.ts'
import { trackerFromConfig } from '../../src/app/trackerFromConfig.ts'
import { loadConfig } from '../../src/config.ts'
import { testDeps } from '../http/testApp.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { type ChainIdStandIn, SECRET, startChainIdStandIn } from '../support/chainIdStandIn.ts'

// An RPC URL of SWAPEAZI_RPC_URLS that serves another chain is never tracked from, relayed on (our key's transactions
// sent to the wrong chain) or simulated on, even when its chain id could not be read at start: every client made from
// it waits for the check, and a mismatch is logged once, naming the variable and never the URL.

/** Anvil's tenth default key: a relayer key that must send nothing here. */
const RELAYER_KEY = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6'

function logs(level = 'info'): { log: pino.Logger; lines: () => Record<string, unknown>[]; text: () => string } {
  const sink = new PassThrough()
  let text = ''
  sink.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  return {
    log: pino({ level }, sink),
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  }
}

const settle = (ms = 50): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
/** BAS (8453) configured with an RPC that serves Optimism (10). */
const wrongChain = (standIn: ChainIdStandIn, extra: Record<string, string> = {}) =>
  loadConfig({ SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: standIn.url }), SWAPEAZI_ACROSS_API_URL: 'off', ...extra })
const mismatchLines = (lines: Record<string, unknown>[]) => lines.filter((line) => line['event'] === 'rpc_chain_mismatch')

let opened: OpenedStore
let standIn: ChainIdStandIn
beforeAll(async () => {
  opened = await storeDrivers()[0]!.open()
})
afterAll(() => opened?.cleanup())
afterEach(() => standIn?.close())

describe('the chain-id check of every client made from SWAPEAZI_RPC_URLS', () => {
  it('the tracker: down at start, then serving another chain, it reads nothing from it and says so once', async () => {
    standIn = await startChainIdStandIn(10)
    standIn.down = true
    // At debug: the polls that fail on the mismatch log there.
    const { log, lines, text } = logs('debug')
    const config = wrongChain(standIn)
    const tracker = trackerFromConfig(config, {
      store: opened.store,
      catalogue: () => testDeps().catalogue,
      routerOn: testDeps().routerOn,
      clock: Date.now,
      log,
      chainIds: chainIdChecksFromConfig(config, log),
    })
    if (tracker === undefined) throw new Error('no tracker')
    await tracker.pollOnce()
    // Unreachable: its chain id is asked, nothing else, and nothing is decided.
    expect(new Set(standIn.methods)).toEqual(new Set(['eth_chainId']))
    expect(mismatchLines(lines())).toEqual([])

    standIn.down = false
    await tracker.pollOnce()
    await tracker.pollOnce()
    // Once found serving another chain, BAS is not scanned again, and its lease is left to replicas that can read it.
    const failedScans = lines().filter((line) => line['event'] === 'tracker_scan_failed').length
    await tracker.pollOnce()
    expect(lines().filter((line) => line['event'] === 'tracker_scan_failed')).toHaveLength(failedScans)
    expect(await opened.store.sql.query(`select holder from leases where name = 'tracker:chain:BAS'`)).toEqual([])
    await tracker.stop()
    expect(new Set(standIn.methods)).toEqual(new Set(['eth_chainId']))
    const [mismatch, ...more] = mismatchLines(lines())
    expect(more).toEqual([])
    expect(mismatch).toMatchObject({
      level: 50,
      chain: 'BAS',
      variable: 'SWAPEAZI_RPC_URLS.BAS',
      served_chain_id: 10,
      expected_chain_id: 8453,
      msg: 'invalid configuration: SWAPEAZI_RPC_URLS.BAS: the RPC serves chain 10, not BAS (8453); give BAS an RPC of its own chain; until then BAS is not read, tracked, relayed on or simulated',
    })
    // The polls that fail on it do not repeat it above debug (the ones while it was down said so, at warn).
    const all = lines()
    const afterMismatch = all.slice(all.findIndex((line) => line['event'] === 'rpc_chain_mismatch') + 1)
    expect(afterMismatch.filter((line) => Number(line['level']) >= 40)).toEqual([])
    expect(lines().filter((line) => line['event'] === 'tracker_scan_failed').length).toBeGreaterThan(0)
    expect(text()).not.toContain(SECRET)
  })

  it('the relayer: its key reads no balance from, and sends nothing to, an RPC of another chain', async () => {
    standIn = await startChainIdStandIn(10)
    const { log, lines, text } = logs()
    const config = wrongChain(standIn, { SWAPEAZI_RELAYER_PRIVATE_KEY: RELAYER_KEY })
    const relaying = startRelaying(config, { ...testDeps({ store: opened.store }), log, chainIds: chainIdChecksFromConfig(config, log) })
    try {
      // The key's balance is read at start on each chain it sends on.
      for (let waited = 0; mismatchLines(lines()).length === 0 && waited < 5_000; waited += 50) await settle()
      await settle()
      expect(new Set(standIn.methods)).toEqual(new Set(['eth_chainId']))
      expect(mismatchLines(lines())).toHaveLength(1)
      expect(text()).toContain('CCTP relayer on for BAS')
      expect(text()).not.toContain(SECRET)
    } finally {
      await relaying.stop()
    }
  })

  it("a wallet client over the checked transport never sends the key's transaction to an RPC of another chain", async () => {
    standIn = await startChainIdStandIn(10)
    const { log } = logs()
    const checks = chainIdChecksFromConfig(wrongChain(standIn), log)
    const wallet = createWalletClient({
      chain: defineChain({
        id: 8453,
        name: 'BAS',
        nativeCurrency: { name: 'native', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [standIn.url] } },
      }),
      transport: checkedRpcTransport(checks, 'BAS', standIn.url),
      account: privateKeyToAccount(RELAYER_KEY),
    })
    await expect(
      wallet.sendTransaction({
        to: '0x000000000000000000000000000000000000dEaD',
        value: 1n,
        gas: 21_000n,
        maxFeePerGas: 1n,
        maxPriorityFeePerGas: 1n,
        nonce: 0,
      }),
    ).rejects.toThrow(/the RPC serves chain 10, not BAS \(8453\)/)
    expect(new Set(standIn.methods)).toEqual(new Set(['eth_chainId']))
    expect(checks.BAS?.isMismatched()).toBe(true)
  })

  it('the pre-flight: a simulation on an RPC of another chain is inconclusive and sends it nothing but eth_chainId', async () => {
    standIn = await startChainIdStandIn(10)
    const { log, lines, text } = logs()
    const simulators = simulatorsFromConfig(wrongChain(standIn), chainIdChecksFromConfig(wrongChain(standIn), log))
    const simulate = simulators.BAS
    if (simulate === undefined) throw new Error('no simulator for BAS')
    const outcome = await simulate({
      from: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      to: '0x000000000000000000000000000000000000dEaD',
      data: '0x',
      value: 0n,
      input: { token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: 1n, spender: '0x000000000000000000000000000000000000dEaD' },
    })
    expect(outcome.ok).toBe('unknown')
    expect(new Set(standIn.methods)).toEqual(new Set(['eth_chainId']))
    expect(mismatchLines(lines())).toHaveLength(1)
    expect(text()).not.toContain(SECRET)
    if (outcome.ok === 'unknown') expect(outcome.why).not.toContain(SECRET)
  })

  it('clients of a chain whose RPC answers its own id read through, having asked it once', async () => {
    standIn = await startChainIdStandIn(8453)
    const { log, lines } = logs()
    const checks = chainIdChecksFromConfig(wrongChain(standIn), log)
    const simulators = simulatorsFromConfig(wrongChain(standIn), checks)
    await simulators.BAS?.({
      from: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      to: '0x000000000000000000000000000000000000dEaD',
      data: '0x',
      value: 0n,
      input: { token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: 1n, spender: '0x000000000000000000000000000000000000dEaD' },
    })
    expect(standIn.methods.filter((method) => method === 'eth_chainId')).toEqual(['eth_chainId'])
    expect(standIn.methods).toContain('eth_call')
    expect(mismatchLines(lines())).toEqual([])
  })
})
