import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadFeedCatalogue, marketFromConfig } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { loadConfig } from '../../src/config.ts'
import { readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createPublicClient, http } from 'viem'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import { prepareStableSwap, stableSwapGetDy } from '../../src/engine/stableSwap.ts'
import { formatAtomic } from '../../src/engine/index.ts'
import { compileCatalogue, findRoutes, isEvmToken } from '../../src/engine/index.ts'
import { type DepthPool, depthStandIns, snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { poolStandIns } from '../chain/poolStandIns.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// Issue 17 item 8: the service wired from configuration (SWAPEAZI_RPC_URLS) reads anvil through the real chain
// reader, with stand-in Chainlink feeds placed at the catalogue's own addresses (manifest/feeds.json) and stand-in
// pools at its Curve pools' addresses (manifest/venues.json), and a stand-in QuoterV2 at the catalogue's quoter address
// (manifest/feeds.json) quoting its Uniswap v3 venues from constant-product pools at the snapshot's depth.

const { files } = loadCatalogue(MANIFEST_DIR)
const snapshot = compileCatalogue(files)
const plan = readPlanOf(loadFeedCatalogue(MANIFEST_DIR), 'ETH', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const EURC_USDC = 'eth-univ3-eurc-usdc-500'
const eurcLadder = plan.ladders?.find((ladder) => ladder.id === EURC_USDC)?.directions[0]
const EURC_QUOTE = eurcLadder?.quote.kind === 'quoterV2' ? eurcLadder.quote : undefined
/** The stand-in pools at the snapshot's depth, each in the order of its venue's first direction (EURC, USDC here). */
const snapshotDepths = snapshotDepthPools(plan, snapshot)
const EURC_POOL = snapshotDepths[EURC_USDC] ?? { reserves: [0n, 0n], feePpm: 0 }
/** The ETH depth venues, all quoted by the one QuoterV2. */
const ETH_DEPTH_VENUES = (plan.ladders ?? []).map((ladder) => `venue:${ladder.id}`)
const EUR_FEED = plan.feeds.find((feed) => feed.id === 'fx:EUR')?.address ?? '0x'
const THREE_POOL = plan.pools?.find((pool) => pool.id === 'eth-curve-3pool')?.address ?? '0x'
/** Each ETH pool at its snapshot balances (manifest/market.json). */
const snapshotBalances = Object.fromEntries(
  (plan.pools ?? []).map((pool) => {
    const state = files.market.venues[pool.id]
    return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
  }),
)
const [DAI_BALANCE = 0n] = snapshotBalances['eth-curve-3pool'] ?? []
/** The 3pool with all but 5,000,000 of its USDC and USDT drained. */
const DRAINED = [DAI_BALANCE, 5_000_000n * 10n ** 6n, 5_000_000n * 10n ** 6n]
const usd8 = (value: number): bigint => BigInt(Math.round(value * 1e8))

let chain: (FeedStandIns & { stop(): Promise<void> }) | undefined
let market: LiveMarket | undefined
let isChainStopped = false

beforeAll(async () => {
  chain = await startFeedStandIns({ chainId: 1 })
  await chain.placePlan(
    plan,
    { native: usd8(3000), 'fx:EUR': usd8(1.16), 'fx:GBP': usd8(1.3), 'fx:SGD': usd8(0.77) },
    snapshotBalances,
    snapshotDepths,
  )
  const config = loadConfig({
    SWAPEAZI_RPC_URLS: JSON.stringify({ ETH: chain.anvil.rpcUrl }),
    SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
    SWAPEAZI_ACROSS_API_URL: 'off',
  })
  market = await marketFromConfig(config, files, pino({ level: 'silent' }))
}, 120_000)

afterAll(async () => {
  market?.stop()
  if (!isChainStopped) await chain?.stop()
})

function fail(): never {
  throw new Error('no chain')
}

function app() {
  const live = market
  if (live === undefined) throw new Error('no market')
  const deps = testDeps({ market: live, clock: Date.now })
  Object.defineProperty(deps, 'catalogue', { get: () => live.catalogue(), enumerable: true })
  return createServer(deps)
}

const eurcToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'EURC', toToken: 'USDC', fromAmount: '1000' })
const usdcToUsdt = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000' })
/** Only the Curve 3pool carries DAI on Ethereum. */
const daiToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'DAI', toToken: 'USDC', fromAmount: '100000' })

/** What the 3pool pays for 100,000 DAI in USDC at these balances (manifest/venues.json: A 2000, fee 100 ppm). */
function threePoolDaiToUsdc(balances: readonly bigint[]): string {
  const pool = prepareStableSwap({ balances, decimals: [18, 6, 6], amp: 2000n, feePpm: 100n })
  return formatAtomic(stableSwapGetDy(pool, 0, 1, 100_000n * 10n ** 18n), 6)
}

/** The stand-in QuoterV2 quotes the EURC/USDC pool from this pool from the next block on. */
async function setEurcPool(pool: Omit<DepthPool, 'feePpm'>): Promise<void> {
  if (EURC_QUOTE === undefined) throw new Error('the plan does not quote EURC/USDC through QuoterV2')
  await depthStandIns(chain?.anvil ?? fail()).setQuoterPool(
    EURC_QUOTE.quoter,
    [EURC_QUOTE.tokenIn, EURC_QUOTE.tokenOut],
    EURC_QUOTE.fee,
    pool,
  )
}

/**
 * What the market quotes for `amountIn` EURC through the EURC/USDC venue when its pool holds `reserves`: the
 * stand-in's constant product (fee from the input) at the two ladder sizes around it, and the chord between them.
 */
function eurcLadderOut(reserves: readonly [bigint, bigint], amountIn: bigint): bigint {
  const [reserveIn, reserveOut] = reserves
  const fee = BigInt(EURC_QUOTE?.fee ?? 0)
  const out = (size: bigint): bigint => {
    const net = (size * (1_000_000n - fee)) / 1_000_000n
    return (reserveOut * net) / (reserveIn + net)
  }
  const sizes = eurcLadder?.amountsIn ?? []
  const upper = sizes.findIndex((size) => size >= amountIn)
  const upperIn = sizes[upper] ?? 0n
  const lowerIn = upper <= 0 ? 0n : (sizes[upper - 1] ?? 0n)
  const lowerOut = upper <= 0 ? 0n : out(lowerIn)
  return lowerOut + ((out(upperIn) - lowerOut) * (amountIn - lowerIn)) / (upperIn - lowerIn)
}

/** The quote's swap steps, as venue id and what it pays. */
const swaps = (quote: QuoteResult) => quote.route.steps.map((step) => (step.type === 'swap' ? [step.id, step.toAmount] : [step.type]))

async function quote(body: Record<string, unknown>): Promise<QuoteResult> {
  const response = await postJson(app(), '/api/x402/quote', body)
  expect(response.status).toBe(200)
  return QuoteResult.parse(await readJson(response))
}

describe('the live market on anvil (SWAPEAZI_RPC_URLS)', () => {
  it('prices ETH from the block read, says so in the quote and in health, and follows the EUR feed within one refresh', async () => {
    const first = await quote(eurcToUsdc)
    const block = market?.status().chains.find((c) => c.chain === 'ETH')?.block
    expect(block).toMatch(/^[0-9]+$/)
    expect(first.pricedOn).toEqual([{ chain: 'ETH', source: 'rpc', block, asOf: expect.any(String) }])
    const health = await readJson(await app().request('/api/v1/health'))
    expect(health).toMatchObject({
      status: 'ok',
      market: { currencies: expect.arrayContaining([{ currency: 'EUR', source: 'rpc', chain: 'ETH', block }]) },
    })

    // EUR up 10%, and the EURC/USDC pool with it (as arbitrage moves it): the pool is quoted live, the feed prices
    // what the route's costs are worth.
    await chain?.setRound(EUR_FEED, usd8(1.276))
    const [eurcReserve, usdcReserve] = EURC_POOL.reserves
    await setEurcPool({ reserves: [eurcReserve, (usdcReserve * 11n) / 10n] })
    await market?.refresh()
    const moved = await quote(eurcToUsdc)
    expect(market?.catalogue().fxUsdE18.EUR).toBe(1_276n * 10n ** 15n)
    const ratio = Number(moved.toAmount) / Number(first.toAmount)
    expect(ratio).toBeGreaterThan(1.1 * 0.999)
    expect(ratio).toBeLessThan(1.1 * 1.001)
    await chain?.setRound(EUR_FEED, usd8(1.16))
    await setEurcPool(EURC_POOL)
    await market?.refresh()
  })

  it('moving the stand-in pool moves the next quote within one refresh, by what its quotes at the ladder sizes give', async () => {
    const eurc = 1_000n * 10n ** 6n
    expect(swaps(await quote(eurcToUsdc))).toEqual([[EURC_USDC, formatAtomic(eurcLadderOut(EURC_POOL.reserves, eurc), 6)]])
    const [eurcReserve, usdcReserve] = EURC_POOL.reserves
    const moved: [bigint, bigint] = [eurcReserve, (usdcReserve * 1_002n) / 1_000n]
    await setEurcPool({ reserves: moved })
    await market?.refresh()
    expect(swaps(await quote(eurcToUsdc))).toEqual([[EURC_USDC, formatAtomic(eurcLadderOut(moved, eurc), 6)]])
    await setEurcPool(EURC_POOL)
    await market?.refresh()
  })

  it('a drained pool truncates its ladder: large amounts are refused (above_venue_liquidity), small ones still quote', async () => {
    // Only 50,000 USDC can be paid out: QuoterV2's quote at the USD 100,000 size reaches the price limit.
    const [eurcReserve, usdcReserve] = EURC_POOL.reserves
    await setEurcPool({ reserves: EURC_POOL.reserves, available: [eurcReserve, 50_000n * 10n ** 6n] })
    await market?.refresh()
    expect(usdcReserve).toBeGreaterThan(50_000n * 10n ** 6n)
    expect(market?.status().isDegraded).toBe(false)
    const small = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'EURC', toToken: 'USDC', fromAmount: '5000' })
    expect(swaps(await quote(small))).toEqual([[EURC_USDC, formatAtomic(eurcLadderOut(EURC_POOL.reserves, 5_000n * 10n ** 6n), 6)]])
    const large = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'EURC', toToken: 'USDC', fromAmount: '20000' })
    const refused = await postJson(app(), '/api/x402/quote', large)
    expect(refused.status).toBe(422)
    expect(await readJson(refused)).toMatchObject({ code: 'amount_out_of_range', limit: 'liquidity' })
    const catalogue = market?.catalogue() ?? fail()
    const [from, to] = ['ETH:EURC', 'ETH:USDC'].map((key) => catalogue.tokens.get(key))
    if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error('no EURC or USDC')
    const found = findRoutes(catalogue, { from, to, amountIn: 20_000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
    expect(found.kind === 'no_route' ? [] : found.rejected).toContainEqual({
      routeId: `${EURC_USDC}:EURC>USDC`,
      reason: 'above_venue_liquidity',
    })
    await setEurcPool(EURC_POOL)
    await market?.refresh()
  })

  it('a reverting quoter makes its venues gaps: their routes go, health names them with the reason, the rest still quotes', async () => {
    if (EURC_QUOTE === undefined) throw new Error('no quoter')
    await depthStandIns(chain?.anvil ?? fail()).setFailing(EURC_QUOTE.quoter, 'StandInQuoterV2', true)
    await market?.refresh()
    const refused = await postJson(app(), '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], currencies: [], venues: [EURC_USDC] })
    expect(problem['detail']).toContain('StandInQuoterV2: failing')
    const health = await readJson(await app().request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'ETH')).toMatchObject({
      stale: ETH_DEPTH_VENUES,
    })
    // USDC to USDT has the Curve 3pool besides Uniswap.
    expect(swaps(await quote(usdcToUsdt)).map(([id]) => id)).toEqual(['eth-curve-3pool'])
    await depthStandIns(chain?.anvil ?? fail()).setFailing(EURC_QUOTE.quoter, 'StandInQuoterV2', false)
    await market?.refresh()
    expect(market?.status().isDegraded).toBe(false)
  })

  it('a feed older than its heartbeat removes exactly its routes, with the reason', async () => {
    const { timestamp } = (await chain?.latestBlock()) ?? { timestamp: 0n }
    // Four days: past the heartbeat (a day, plus 10%) even with the longest FX weekend added to it (Friday 21:00 to
    // Sunday 23:00 UTC, 50 h), through which an FX answer from before the close stays usable. Two days passed on
    // weekdays only (seen failing on a Sunday).
    await chain?.setRound(EUR_FEED, usd8(1.2), Number(timestamp) - 4 * 86_400)
    await market?.refresh()
    const refused = await postJson(app(), '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    expect(await readJson(refused)).toMatchObject({ code: 'market_unavailable', currencies: ['EUR'] })
    expect((await quote(usdcToUsdt)).pricedOn[0]?.source).toBe('rpc')
    await chain?.setRound(EUR_FEED, usd8(1.16))
    await market?.refresh()
    expect((await quote(eurcToUsdc)).pricedOn[0]?.source).toBe('rpc')
  })

  it('a drained pool reprices its routes from the balances at the block read', async () => {
    expect(swaps(await quote(daiToUsdc))).toEqual([['eth-curve-3pool', threePoolDaiToUsdc(snapshotBalances['eth-curve-3pool'] ?? [])]])
    await poolStandIns(chain?.anvil ?? fail()).setBalances(THREE_POOL, DRAINED)
    await market?.refresh()
    const drained = await quote(daiToUsdc)
    expect(swaps(drained)).toEqual([['eth-curve-3pool', threePoolDaiToUsdc(DRAINED)]])
    expect(Number(drained.route.realCost.items.find((item) => item.kind === 'price_impact')?.usd)).toBeGreaterThan(0)
    await poolStandIns(chain?.anvil ?? fail()).setBalances(THREE_POOL, snapshotBalances['eth-curve-3pool'] ?? [])
  })

  it('a pool whose read reverts removes exactly its routes: USDC to USDT goes through another venue, DAI is 503 naming it', async () => {
    await poolStandIns(chain?.anvil ?? fail()).setFailing(THREE_POOL, true)
    await market?.refresh()
    expect(swaps(await quote(usdcToUsdt)).map(([id]) => id)).not.toContain('eth-curve-3pool')
    const refused = await postJson(app(), '/api/x402/quote', daiToUsdc)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], currencies: [], venues: ['eth-curve-3pool'] })
    expect(problem['detail']).toContain('StandInPoolBalances: failing')
    const health = await readJson(await app().request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'ETH')).toMatchObject({
      stale: ['venue:eth-curve-3pool'],
    })
    await poolStandIns(chain?.anvil ?? fail()).setFailing(THREE_POOL, false)
    await market?.refresh()
    expect(swaps(await quote(daiToUsdc))).toHaveLength(1)
  })

  it('stopping the RPC makes health degraded and the chain’s quotes 503 once its last read is too old, never stale prices', async () => {
    // The same wiring with a clock the test can move: a failed read keeps the last one only for its maximum age.
    let skewMs = 0
    const url = chain?.anvil.rpcUrl ?? ''
    const clocked = createLiveMarket({
      files,
      feeds: loadFeedCatalogue(MANIFEST_DIR),
      readers: { ETH: createChainReader(createPublicClient({ transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS) })) },
      refreshMs: 4000,
      clock: () => Date.now() + skewMs,
      log: pino({ level: 'silent' }),
    })
    await clocked.refresh()
    expect(clocked.status().isDegraded).toBe(false)
    await chain?.stop()
    isChainStopped = true
    await clocked.refresh()
    expect(clocked.status().chains.find((c) => c.chain === 'ETH')?.error).toMatch(/^ETH: /)
    skewMs = 3 * 12_000 + 5_000 // three ETH block times (the refresh interval there), and more
    await clocked.refresh()
    const app = createServer(
      Object.defineProperty(testDeps({ market: clocked, clock: () => Date.now() + skewMs }), 'catalogue', {
        get: () => clocked.catalogue(),
        enumerable: true,
      }),
    )
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    const refused = await postJson(app, '/api/x402/quote', usdcToUsdt)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('15')
    expect(await readJson(refused)).toMatchObject({ code: 'market_unavailable', chains: ['ETH'] })
  }, 60_000)
})
