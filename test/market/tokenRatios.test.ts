import pino from 'pino'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { E18 } from '../../src/engine/index.ts'
import type { TokenRatioSpec } from '../../src/market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import { snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { tokenRatioStandIns } from '../chain/tokenRatioStandIns.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// Token prices read live (market.json tokenPrices): sUSDe from a stand-in ERC-4626 vault at sUSDe's address, PYUSD from
// the EMA of the stand-in Curve PYUSD/USDC pool at the catalogue's pool address, both on Ethereum, read through the
// real chain reader in the chain's multicall.

const { files, catalogue: snapshot } = loadCatalogue(MANIFEST_DIR)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const plan = readPlanOf(feeds, 'ETH', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const ratioOf = (symbol: string): TokenRatioSpec => {
  const spec = plan.tokenRatios?.find((candidate) => candidate.symbol === symbol)
  if (spec === undefined) throw new Error(`no ${symbol} price in the ETH plan`)
  return spec
}
const SUSDE = ratioOf('sUSDe')
const PYUSD = ratioOf('PYUSD')
const VAULT = SUSDE.kind === 'erc4626' ? SUSDE.vault : fail()
const POOL = PYUSD.kind === 'curveEma' ? PYUSD.pool : fail()
const PYUSD_VENUE = 'eth-curve-pyusd-usdc'
const balances = Object.fromEntries(
  (plan.pools ?? []).map((pool) => {
    const state = files.market.venues[pool.id]
    return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
  }),
)
const usd8 = (value: number): bigint => BigInt(Math.round(value * 1e8))
const pyusdToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'PYUSD', toToken: 'USDC', fromAmount: '1000' })
/** The snapshot's USDe ratio (0.9995): sUSDe's price is its vault's USDe per share times it. */
const USDE_RATIO_E18 = 9_995n * 10n ** 14n

let chain: FeedStandIns & { stop(): Promise<void> }
let market: LiveMarket
const reader = () => createChainReader(createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) }))
const standIns = () => tokenRatioStandIns(chain.anvil)
const priceOf = (key: string): bigint | undefined => market.catalogue().tokens.get(key)?.priceUsdE18

function fail(): never {
  throw new Error('the ETH plan reads sUSDe from no vault, or PYUSD from no Curve pool')
}

beforeAll(async () => {
  chain = await startFeedStandIns({ chainId: 1 })
  await chain.placePlan(
    plan,
    { native: usd8(3000), 'fx:EUR': usd8(1.16), 'fx:GBP': usd8(1.3), 'fx:SGD': usd8(0.77) },
    balances,
    snapshotDepthPools(plan, snapshot),
  )
  // Refreshed by hand: a long interval keeps the last block fresh however slow the machine.
  market = createLiveMarket({
    files,
    feeds,
    readers: { ETH: reader() },
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
  const response = await postJson(app(), '/api/x402/quote', pyusdToUsdc)
  expect(response.status).toBe(200)
  return QuoteResult.parse(await readJson(response))
}

describe('token prices read live', () => {
  it('plans sUSDe from its vault in USDe and PYUSD from its Curve pool’s EMA in USDC; USDe is not read', () => {
    expect(plan.tokenRatios).toEqual([
      {
        symbol: 'sUSDe',
        of: 'USDe',
        kind: 'erc4626',
        vault: snapshot.tokens.get('ETH:sUSDe')?.address,
        shareDecimals: 18,
        assetDecimals: 18,
      },
      {
        symbol: 'PYUSD',
        of: 'USDC',
        kind: 'curveEma',
        pool: files.venues.venues.find((venue) => venue.id === PYUSD_VENUE)?.contract,
        coin: 0,
      },
    ])
    expect(readPlanOf(feeds, 'ARB', files.venues.venues, snapshot.tokens).tokenRatios).toBeUndefined()
  })

  it('reads the vault’s assets per share and the inverse of the pool’s EMA (PYUSD is coin 0: the EMA is USDC in PYUSD)', async () => {
    await standIns().setAssetsPerShare(VAULT, 1_203_456_789_012_345_678n)
    await standIns().setPriceOracle(POOL, 10_002n * 10n ** 14n)
    const reading = await reader()({ chain: 'ETH', feeds: [], tokenRatios: [SUSDE, PYUSD] })
    expect(reading.tokenRatios).toEqual([
      { symbol: 'sUSDe', ok: true, valueE18: 1_203_456_789_012_345_678n },
      // 10^36 / (1.0002 × 10^18), rounded down.
      { symbol: 'PYUSD', ok: true, valueE18: 999_800_039_992_001_599n },
    ])
    expect(reading.rpcCalls).toBe(3)
  })

  it('prices the tokens from the reads: sUSDe on every chain at the vault’s rate × USDe’s, PYUSD at the EMA', async () => {
    await standIns().setAssetsPerShare(VAULT, 12n * 10n ** 17n)
    await standIns().setPriceOracle(POOL, E18)
    await market.refresh()
    expect(market.status().isDegraded).toBe(false)
    expect(priceOf('ETH:sUSDe')).toBe((12n * 10n ** 17n * USDE_RATIO_E18) / E18)
    expect(priceOf('ARB:sUSDe')).toBe((12n * 10n ** 17n * USDE_RATIO_E18) / E18)
    expect(priceOf('ETH:PYUSD')).toBe(E18)
    const atPeg = await quote()
    // The pool's EMA says PYUSD fell 1% against USDC: a PYUSD quote delivers 1% less.
    await standIns().setPriceOracle(POOL, 101n * 10n ** 16n)
    await market.refresh()
    expect(priceOf('ETH:PYUSD')).toBe(10n ** 36n / (101n * 10n ** 16n))
    const fallen = await quote()
    const ratio = Number(fallen.toAmount) / Number(atPeg.toAmount)
    expect(ratio).toBeGreaterThan(1 / 1.01 - 0.000_01)
    expect(ratio).toBeLessThan(1 / 1.01 + 0.000_01)
  })

  it('refuses a price more than twice or less than half the snapshot’s: stale, named in health with why, its venue out', async () => {
    await standIns().setAssetsPerShare(VAULT, 3n * 10n ** 18n)
    await standIns().setPriceOracle(POOL, 4n * 10n ** 17n)
    await market.refresh()
    const status = market.status().chains.find((entry) => entry.chain === 'ETH')
    expect(status?.stale).toEqual(['price:sUSDe', 'price:PYUSD'])
    expect(status?.reasons?.['price:sUSDe']).toBe(
      `its price read at ETH block ${status?.block}, 2.9985 (ERC-4626 convertToAssets 3 USDe), is more than 2× away from the snapshot's 1.19: check the contract and what it answers`,
    )
    expect(status?.reasons?.['price:PYUSD']).toMatch(
      /^its price read at ETH block \d+, 2\.5 \(Curve EMA price_oracle 2\.5 USDC\), is more than 2×/,
    )
    // Never the snapshot's price in its place: PYUSD's only venue is out, and a quote only it serves is 503.
    const refused = await postJson(app(), '/api/x402/quote', pyusdToUsdc)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], venues: [PYUSD_VENUE] })
    expect(problem['detail']).toContain(`${PYUSD_VENUE}: the price of PYUSD is not fresh: its price read at ETH block`)
    // Another pair of the chain is unaffected.
    const usdcToUsdt = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000' })
    expect((await postJson(app(), '/api/x402/quote', usdcToUsdt)).status).toBe(200)
  })

  it('a read that fails is stale the same way, and the price comes back with the next good read', async () => {
    await standIns().setAssetsPerShare(VAULT, 12n * 10n ** 17n)
    await standIns().setPriceOracle(POOL, E18)
    await standIns().setPriceOracleFailing(POOL, true)
    await market.refresh()
    const status = market.status().chains.find((entry) => entry.chain === 'ETH')
    expect(status?.stale).toEqual(['price:PYUSD'])
    expect(status?.reasons?.['price:PYUSD']).toMatch(
      /^it could not be read at ETH block \d+: Curve pool 0x[0-9a-fA-F]{40} price_oracle\(0\): failed: .*price_oracle failing/,
    )
    expect((await postJson(app(), '/api/x402/quote', pyusdToUsdc)).status).toBe(503)
    await standIns().setPriceOracleFailing(POOL, false)
    await market.refresh()
    expect(market.status().isDegraded).toBe(false)
    await quote()
  })

  it('keeps the snapshot’s prices where Ethereum is not read live', () => {
    const offline = createLiveMarket({ files, feeds, readers: {}, refreshMs: 60_000, clock: Date.now, log: pino({ level: 'silent' }) })
    expect(offline.catalogue().tokens.get('ETH:sUSDe')?.priceUsdE18).toBe(snapshot.tokens.get('ETH:sUSDe')?.priceUsdE18)
    expect(offline.catalogue().tokens.get('ETH:PYUSD')?.priceUsdE18).toBe(snapshot.tokens.get('ETH:PYUSD')?.priceUsdE18)
  })
})
