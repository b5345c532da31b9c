import pino from 'pino'
import { createPublicClient, http, toRlp } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { ceilDiv, compileCatalogue, E18, findRoutes, isEvmToken, parseFixed, sizeRoute } from '../../src/engine/index.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { L1_FEE_TX_BYTES } from '../../src/engine/index.ts'
import { L1_FEE_ORACLES, readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import type { Currency } from '../../src/schemas/catalogue.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import { buildRouteTransaction } from '../../src/tx/buildRouteTransaction.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { l1FeeStandIns } from '../chain/l1FeeStandIns.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// A rollup's L1 data fee read live (routing.md 5.2): a stand-in GasPriceOracle at the OP-stack predeploy address and
// a stand-in ArbGasInfo at Arbitrum's precompile address, read through the real chain reader in the chain's multicall;
// the live market charges the fee, in USD at the chain's native price read, on every transaction from the chain.

const { files, catalogue: snapshot } = loadCatalogue(MANIFEST_DIR)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const plan = readPlanOf(feeds, 'BAS', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const GAS_PRICE_ORACLE = L1_FEE_ORACLES.BAS ?? fail('no L1 fee read on BAS')
const ARB_GAS_INFO = L1_FEE_ORACLES.ARB ?? fail('no L1 fee read on ARB')
const usd8 = (value: string): bigint => BigInt(Math.round(Number(value) * 1e8))
/** Base's native price in the stand-in feed: half a dollar off a whole one, so a fee in USD has a part to round. */
const ETH_USD = '3100.5'
const answers = Object.fromEntries(
  plan.feeds.map((feed) => [feed.id, usd8(feed.id === 'native' ? ETH_USD : (files.market.fx[feed.id.slice(3) as Currency]?.usd ?? '0'))]),
)
const balances = Object.fromEntries(
  (plan.pools ?? []).map((pool) => {
    const state = files.market.venues[pool.id]
    return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
  }),
)
const usdcToDai = quoteBody({ fromChain: 'BAS', toChain: 'BAS', fromToken: 'USDC', toToken: 'DAI', fromAmount: '1000' })
/** USD of `wei` at ETH_USD, 18 decimals, rounded up as the market rounds a cost. */
const usdOf = (wei: bigint): bigint => ceilDiv(wei * parseFixed(ETH_USD), E18)

let chain: FeedStandIns & { stop(): Promise<void> }
let market: LiveMarket
const reader = () => createChainReader(createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) }))

function fail(why: string): never {
  throw new Error(why)
}

beforeAll(async () => {
  chain = await startFeedStandIns()
  await chain.placePlan(plan, answers, balances, snapshotDepthPools(plan, snapshot))
  await l1FeeStandIns(chain.anvil).place(ARB_GAS_INFO, 0n, 0n)
  // Refreshed by hand: a long interval keeps the last block fresh however slow the machine.
  market = createLiveMarket({
    files,
    feeds,
    readers: { BAS: reader() },
    refreshMs: 60_000,
    clock: Date.now,
    log: pino({ level: 'silent' }),
  })
}, 120_000)

afterAll(async () => {
  await chain?.stop()
})

function app() {
  const deps = testDeps({ market, clock: Date.now })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return createServer(deps)
}

async function quote(): Promise<QuoteResult> {
  const response = await postJson(app(), '/api/x402/quote', usdcToDai)
  expect(response.status).toBe(200)
  return QuoteResult.parse(await readJson(response))
}

describe('the size an L1 data fee is read for', () => {
  it('covers every router transaction the catalogue builds, with the transaction’s other fields', () => {
    const tokens = [...snapshot.tokensByLowerKey.values()].filter(isEvmToken)
    let largest = 0
    for (const from of tokens)
      for (const to of tokens) {
        if (from.key === to.key) continue
        const found = findRoutes(snapshot, { from, to, amountIn: 1_000n * 10n ** BigInt(from.decimals), slippageE18: 5n * 10n ** 15n })
        if (found.kind !== 'routes') continue
        for (const priced of found.viable) {
          const sized = sizeRoute(snapshot, priced.route, priced.amountIn, found.amounts.toAmount)
          if (sized === undefined) continue
          const built = buildRouteTransaction({
            catalogue: snapshot,
            routerOn: () => routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'),
            sized,
            amounts: found.amounts,
            slippageE18: 5n * 10n ** 15n,
            sender: '0x1111111111111111111111111111111111111111',
            recipient: '0x2222222222222222222222222222222222222222',
            ref: `0x${'ab'.repeat(32)}`,
            nowSec: 1_800_000_000,
          })
          if (!built.ok) continue
          // The unsigned EIP-1559 transaction at its largest: every number field at 32 bytes, no access list.
          const { transactionRequest: tx } = built
          const word = `0x${'ff'.repeat(32)}` as const
          const unsigned = toRlp([word, word, word, word, word, tx.to, word, tx.data, []])
          const bytes = 1 + (unsigned.length - 2) / 2
          expect(bytes, priced.route.id).toBeLessThanOrEqual(L1_FEE_TX_BYTES)
          largest = Math.max(largest, bytes)
        }
      }
    // The catalogue's largest is a route with swaps on both sides of a bridge: the size is no far-off guess.
    expect(largest).toBeGreaterThan(3_000)
  })
})

describe('the L1 data fee read live', () => {
  it('reads the GasPriceOracle’s upper bound for the size, and ArbGasInfo’s per-transaction plus per-byte prices', async () => {
    await l1FeeStandIns(chain.anvil).setL1Fee(GAS_PRICE_ORACLE, 7n * 10n ** 9n, 3n * 10n ** 8n)
    await l1FeeStandIns(chain.anvil).setL1Fee(ARB_GAS_INFO, 5n * 10n ** 10n, 2n * 10n ** 8n)
    const read = reader()
    expect((await read({ chain: 'BAS', feeds: [], l1Fee: GAS_PRICE_ORACLE })).l1Fee).toEqual({
      ok: true,
      feeWei: 7n * 10n ** 9n + 3n * 10n ** 8n * BigInt(L1_FEE_TX_BYTES),
    })
    const arbitrum = await read({ chain: 'ARB', feeds: [], l1Fee: ARB_GAS_INFO })
    // With the prices and the minimum base fee that size the L1 part of a gas limit on Arbitrum.
    expect(arbitrum.l1Fee).toEqual({
      ok: true,
      feeWei: 5n * 10n ** 10n + 2n * 10n ** 8n * BigInt(L1_FEE_TX_BYTES),
      arbitrum: { perL2TxWei: 5n * 10n ** 10n, perL1CalldataByteWei: 2n * 10n ** 8n, minBaseFeeWei: 10_000_000n },
    })
    expect(arbitrum.rpcCalls).toBe(3)
    // A floor of 0 would size no limit: the read fails.
    await l1FeeStandIns(chain.anvil).setMinimumGasPrice(ARB_GAS_INFO, 0n)
    expect((await read({ chain: 'ARB', feeds: [], l1Fee: ARB_GAS_INFO })).l1Fee).toEqual({
      ok: false,
      error: 'ArbGasInfo 0x000000000000000000000000000000000000006C getMinimumGasPrice(): answered 0, not a positive base fee',
    })
    await l1FeeStandIns(chain.anvil).setMinimumGasPrice(ARB_GAS_INFO, 20_000_000n)
    await l1FeeStandIns(chain.anvil).setFailing(ARB_GAS_INFO, true)
    expect((await read({ chain: 'ARB', feeds: [], l1Fee: ARB_GAS_INFO })).l1Fee).toEqual({
      ok: false,
      error: expect.stringMatching(/^ArbGasInfo 0x0+6C getPricesInWei\(\): failed: .*StandInArbGasInfo: failing/),
    })
  })

  it('charges the fee read, at the native price read and rounded up, on every route from the chain', async () => {
    const lowWei = 10n ** 8n * BigInt(L1_FEE_TX_BYTES)
    await l1FeeStandIns(chain.anvil).setL1Fee(GAS_PRICE_ORACLE, 0n, 10n ** 8n)
    await market.refresh()
    expect(market.status().isDegraded).toBe(false)
    const bas = () => market.catalogue().chains.get('BAS')
    expect(bas()?.l1FeeUsdE18).toBe(usdOf(lowWei))
    expect(bas()?.l1FeeUsdE18).not.toBe(snapshot.chains.get('BAS')?.l1FeeUsdE18)
    const low = await quote()
    // About USD 31 of L1 fee: the quote's source-chain cost moves by it (gas itself moves a few cents between blocks).
    const highWei = 10n ** 16n + 1n
    await l1FeeStandIns(chain.anvil).setL1Fee(GAS_PRICE_ORACLE, highWei, 0n)
    await market.refresh()
    expect(bas()?.l1FeeUsdE18).toBe(usdOf(highWei))
    // Rounded up: 10^16 + 1 wei at 3,100.5 USD is 31.005 USD and 3,100.5 attodollars, charged as 3,101.
    expect(usdOf(highWei)).toBe(31_005_000_000_000_003_101n)
    const high = await quote()
    const added = Number(high.estimatedGasUSD) - Number(low.estimatedGasUSD)
    expect(added).toBeGreaterThan(31.005 - 0.0013 - 0.5)
    expect(added).toBeLessThan(31.005 - 0.0013 + 0.5)
    expect(Number(high.estimatedGasUSD)).toBeGreaterThanOrEqual(31.005)
  })

  it('a failing read makes the chain stale: its routes are 503 naming the L1 data fee, health lists l1-fee', async () => {
    await l1FeeStandIns(chain.anvil).setFailing(GAS_PRICE_ORACLE, true)
    await market.refresh()
    const refused = await postJson(app(), '/api/x402/quote', usdcToDai)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: ['BAS'] })
    expect(problem['detail']).toMatch(
      /BAS: the L1 data fee could not be read at block \d+: GasPriceOracle .*StandInGasPriceOracle: failing/,
    )
    expect(market.status().chains.find((status) => status.chain === 'BAS')).toMatchObject({ stale: ['l1-fee'] })
    // Never the snapshot's figure in its place: the chain's tokens are out of the catalogue until a read succeeds.
    expect(market.catalogue().gaps?.chains.get('BAS')).toMatch(/^the L1 data fee could not be read/)
    await l1FeeStandIns(chain.anvil).setFailing(GAS_PRICE_ORACLE, false)
    await market.refresh()
    expect(market.status().isDegraded).toBe(false)
    await quote()
  })
})

describe('a chain with no RPC', () => {
  it('keeps the snapshot’s L1 data fee', () => {
    expect(market.catalogue().chains.get('OPT')?.l1FeeUsdE18).toBe(compileCatalogue(files).chains.get('OPT')?.l1FeeUsdE18)
    expect(market.status().chains.find((status) => status.chain === 'OPT')).toEqual({ chain: 'OPT', source: 'snapshot', stale: [] })
  })
})
