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
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { poolStandIns } from '../chain/poolStandIns.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// Issue 17 item 8: the service wired from configuration (SWAPEAZI_RPC_URLS) reads anvil through the real chain
// reader, with stand-in Chainlink feeds placed at the catalogue's own addresses (manifest/feeds.json) and stand-in
// pools at its Curve pools' addresses (manifest/venues.json).

const { files } = loadCatalogue(MANIFEST_DIR)
const plan = readPlanOf(loadFeedCatalogue(MANIFEST_DIR), 'ETH', files.venues.venues)
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
  chain = await startFeedStandIns()
  await chain.placePlan(plan, { native: usd8(3000), 'fx:EUR': usd8(1.16), 'fx:GBP': usd8(1.3), 'fx:SGD': usd8(0.77) }, snapshotBalances)
  const config = loadConfig({ SWAPEAZI_RPC_URLS: JSON.stringify({ ETH: chain.anvil.rpcUrl }), SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR })
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

    await chain?.setRound(EUR_FEED, usd8(1.276))
    await market?.refresh()
    const moved = await quote(eurcToUsdc)
    const ratio = Number(moved.toAmount) / Number(first.toAmount)
    expect(ratio).toBeGreaterThan(1.1 * 0.999)
    expect(ratio).toBeLessThan(1.1 * 1.001)
  })

  it('a feed older than its heartbeat removes exactly its routes, with the reason', async () => {
    const { timestamp } = (await chain?.latestBlock()) ?? { timestamp: 0n }
    await chain?.setRound(EUR_FEED, usd8(1.2), Number(timestamp) - 2 * 86_400)
    await market?.refresh()
    const refused = await postJson(app(), '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    expect(await readJson(refused)).toMatchObject({ code: 'market_unavailable', currencies: ['EUR'] })
    expect((await quote(usdcToUsdt)).pricedOn[0]?.source).toBe('rpc')
    await chain?.setRound(EUR_FEED, usd8(1.2))
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
