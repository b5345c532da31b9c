import pino from 'pino'
import { type Abi, createPublicClient, http, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { findRoutes, isEvmToken } from '../../src/engine/index.ts'
import type { LadderSpec, TradingLimitsSpec } from '../../src/market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import type { TradingLimitConfig, TradingLimitState } from '../../src/market/mentoTradingLimits.ts'
import type { Currency } from '../../src/schemas/catalogue.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import type { CatalogueOnChains } from '../chain/deployCatalogue.ts'
import { deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { depthStandIns } from '../chain/depthStandIns.ts'
import { l1FeeStandIns } from '../chain/l1FeeStandIns.ts'
import { feedStandIns } from '../chain/feedStandIns.ts'
import { executeSwap, planSwap, setupOf } from '../chain/routeExecution.ts'
import { standInAbi } from '../chain/standIns.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// Mento's trading limits in the live market (docs/live-market.md): Celo's catalogue on anvil (test/chain/
// deployCatalogue.ts) with its Broker stand-in, which quotes at the oracle rate and enforces the Broker's trading
// limits on swapIn (test/chain/contracts/MentoTradingLimits.sol), read through the real chain reader with stand-in
// feeds at manifest/feeds.json's addresses. A quote above what the limits leave is refused, one below is quoted and
// its built swap runs on the stand-in, and a swap above them reverts there as the Broker's would.

const { files: manifest } = loadCatalogue(MANIFEST_DIR)
/**
 * USDT and cUSD are hub tokens on Celo (routes pass through them, nobody is quoted them alone): listed here, so the
 * API quotes the Mento hop between them on its own.
 */
const original = (() => {
  const files = structuredClone(manifest)
  for (const token of files.tokens.tokens) if (token.chain === 'CEL' && ['USDT', 'cUSD'].includes(token.symbol)) delete token.hub
  files.chains.chains.find((chain) => chain.id === 'CEL')?.tokens.push('USDT', 'cUSD')
  return files
})()
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const VENUE = 'cel-mento-usdt-cusd'
const NO_LIMIT: TradingLimitConfig = { timestep0: 0, timestep1: 0, limit0: 0n, limit1: 0n, limitGlobal: 0n, flags: 0 }
const NO_FLOW: TradingLimitState = { lastUpdated0: 0, lastUpdated1: 0, netflow0: 0n, netflow1: 0n, netflowGlobal: 0n }
/** cUSD may flow out of the exchange at most 5,000 whole tokens a day. */
const CUSD_LIMIT: TradingLimitConfig = { ...NO_LIMIT, timestep0: 86_400, limit0: 5_000n, flags: 1 }
const usd8 = (value: string): bigint => BigInt(Math.round(Number(value) * 1e8))

let world: CatalogueOnChains
let market: LiveMarket
let limits: TradingLimitsSpec & { usdt: Address; cusd: Address }

type Address = `0x${string}`

beforeAll(async () => {
  world = await deployCatalogueOnChains(original, ['CEL'])
  const { instance } = setupOf(world, 'CEL')
  const plan = readPlanOf(feeds, 'CEL', world.files.venues.venues, world.catalogue.tokens, world.files.bridges.bridges)
  // Celo's L1 data fee (GasPriceOracle) asking a negligible fee.
  if (plan.l1Fee !== undefined) await l1FeeStandIns(instance).place(plan.l1Fee, 0n, 10n ** 8n)
  // Every Chainlink feed of Celo at the snapshot's figure (KES's SortedOracles is not placed: KES is a gap here).
  for (const feed of plan.feeds)
    await feedStandIns(instance).placeFeed(feed.address, {
      answer: usd8(
        feed.id === 'native'
          ? (original.market.chains.CEL?.nativeUsd ?? '0')
          : (original.market.fx[feed.id.slice(3) as Currency]?.usd ?? '0'),
      ),
    })
  const ladder: LadderSpec | undefined = plan.ladders?.find((candidate) => candidate.id === VENUE)
  const spec = ladder?.tradingLimits
  const [usdt, cusd] = spec?.tokens ?? []
  if (spec === undefined || usdt?.symbol !== 'USDT' || cusd?.symbol !== 'cUSD') throw new Error(`${VENUE} plans no trading limits`)
  limits = { ...spec, usdt: usdt.address, cusd: cusd.address }
  expect(limits.broker).toBe(world.files.venues.venues.find((venue) => venue.id === VENUE)?.contract)
  const { timestamp } = await instance.publicClient.getBlock()
  await setCusdLimit({ ...NO_FLOW, lastUpdated0: Number(timestamp) })
  // Refreshed by hand: a long interval keeps the last block fresh however slow the machine.
  market = createLiveMarket({
    files: world.files,
    feeds,
    readers: { CEL: createChainReader(createPublicClient({ transport: http(instance.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) })) },
    refreshMs: 60_000,
    clock: Date.now,
    log: pino({ level: 'silent' }),
  })
  await market.refresh()
}, 240_000)

afterAll(async () => {
  await world?.stop()
})

async function setCusdLimit(state: TradingLimitState, config: TradingLimitConfig = CUSD_LIMIT): Promise<void> {
  await depthStandIns(setupOf(world, 'CEL').instance).setTradingLimit(limits.broker, limits.exchangeId, limits.cusd, config, state)
}

/** The Broker stand-in's netflows of cUSD in the exchange, as its `tradingLimitsState` answers them. */
async function cusdState(): Promise<readonly [number, number, number, number, number]> {
  const { instance } = setupOf(world, 'CEL')
  const limitId = await instance.publicClient.readContract({
    address: limits.broker,
    abi: standInAbi('MentoBrokerStandIn') as Abi,
    functionName: 'tradingLimitId',
    args: [limits.exchangeId, limits.cusd],
  })
  return (await instance.publicClient.readContract({
    address: limits.broker,
    abi: standInAbi('MentoBrokerStandIn') as Abi,
    functionName: 'tradingLimitsState',
    args: [limitId],
  })) as readonly [number, number, number, number, number]
}

function app() {
  const deps = testDeps({ market, clock: Date.now, files: world.files })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return createServer(deps)
}

const usdtToCusd = (fromAmount: string) => quoteBody({ fromChain: 'CEL', toChain: 'CEL', fromToken: 'USDT', toToken: 'cUSD', fromAmount })
const swaps = (quote: QuoteResult) => quote.route.steps.map((step) => (step.type === 'swap' ? step.id : step.type))
const live = (): CatalogueOnChains => ({ ...world, catalogue: market.catalogue() })

/** Why the live catalogue's routes of `units` USDT to cUSD were rejected, by route id. */
function rejections(units: bigint): readonly { routeId: string; reason: string }[] {
  const catalogue = market.catalogue()
  const [from, to] = ['CEL:USDT', 'CEL:cUSD'].map((key) => catalogue.tokens.get(key))
  if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error('no USDT or cUSD on CEL')
  const found = findRoutes(catalogue, { from, to, amountIn: units * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
  return found.kind === 'no_route' ? [] : found.rejected
}

describe('Mento’s trading limits in the live market, on anvil', () => {
  it('refuses a quote above what the limit leaves (amount_out_of_range, liquidity) and quotes one below it', async () => {
    const refused = await postJson(app(), '/api/x402/quote', usdtToCusd('6000'))
    expect(refused.status).toBe(422)
    expect(await readJson(refused)).toMatchObject({ code: 'amount_out_of_range', limit: 'liquidity' })
    expect(rejections(6_000n)).toContainEqual({ routeId: `${VENUE}:USDT>cUSD`, reason: 'above_venue_liquidity' })
    const quoted = await postJson(app(), '/api/x402/quote', usdtToCusd('4000'))
    expect(quoted.status).toBe(200)
    const quote = QuoteResult.parse(await readJson(quoted))
    expect(swaps(quote)).toEqual([VENUE])
    expect(quote.pricedOn).toEqual([{ chain: 'CEL', source: 'rpc', block: expect.any(String), asOf: expect.any(String) }])
    // The limit bounds cUSD's netflow either way: 6,000 cUSD in is refused too, 4,000 quoted.
    const back = (fromAmount: string) => quoteBody({ fromChain: 'CEL', toChain: 'CEL', fromToken: 'cUSD', toToken: 'USDT', fromAmount })
    const refusedBack = await postJson(app(), '/api/x402/quote', back('6000'))
    expect(refusedBack.status).toBe(422)
    expect(await readJson(refusedBack)).toMatchObject({ code: 'amount_out_of_range', limit: 'liquidity' })
    expect((await postJson(app(), '/api/x402/quote', back('4000'))).status).toBe(200)
  })

  it('the swap built below the limit runs on the Broker stand-in, one above it reverts there, and the next read follows', async () => {
    const planned = await planSwap(live(), 'CEL:USDT', 'CEL:cUSD', 4_000n, (id) => id === `${VENUE}:USDT>cUSD`)
    const receipt = await executeSwap(world, planned)
    expect(receipt.status).toBe('success')
    // About 4,000 cUSD out: the stand-in's netflow of cUSD is down by the whole tokens it paid.
    const [paid] = parseEventLogs({ abi: standInAbi('MentoBrokerStandIn') as Abi, eventName: 'SwapInCalled', logs: receipt.logs })
    const amountOut = (paid?.args as { amountOut?: bigint } | undefined)?.amountOut ?? 0n
    expect(amountOut).toBeGreaterThan(3_900n * 10n ** 18n)
    const [, , netflow0] = await cusdState()
    expect(netflow0).toBe(-Number(amountOut / 10n ** 18n))

    // Another 2,000 would take cUSD's netflow past 5,000: the Broker stand-in refuses it as the Broker would.
    const { instance } = setupOf(world, 'CEL')
    const provider = world.files.venues.venues.find((venue) => venue.id === VENUE)?.params?.exchangeProvider as Address
    await expect(
      instance.publicClient.simulateContract({
        account: instance.accounts[2]?.address,
        address: limits.broker,
        abi: standInAbi('MentoBrokerStandIn') as Abi,
        functionName: 'swapIn',
        args: [provider, limits.exchangeId, limits.usdt, limits.cusd, 2_000n * 10n ** 6n, 0n],
      }),
    ).rejects.toThrow(/L0 Exceeded/)

    // Read again: about 1,000 cUSD are left, so 2,000 USDT is refused and 500 quoted.
    await market.refresh()
    expect((await postJson(app(), '/api/x402/quote', usdtToCusd('2000'))).status).toBe(422)
    expect(rejections(2_000n)).toContainEqual({ routeId: `${VENUE}:USDT>cUSD`, reason: 'above_venue_liquidity' })
    expect((await postJson(app(), '/api/x402/quote', usdtToCusd('500'))).status).toBe(200)
    const small = await planSwap(live(), 'CEL:USDT', 'CEL:cUSD', 500n, (id) => id === `${VENUE}:USDT>cUSD`)
    expect((await executeSwap(world, small)).status).toBe('success')
  })

  it('a direction with no whole token left is not offered, health names it, and the other direction still quotes', async () => {
    // cUSD's day window full the way out: none can leave, 5,000 can come in (the -5,000 is not counted on).
    const { timestamp } = await setupOf(world, 'CEL').instance.publicClient.getBlock()
    await setCusdLimit({ ...NO_FLOW, lastUpdated0: Number(timestamp), netflow0: -5_000n })
    await market.refresh()
    const cel = market.status().chains.find((chain) => chain.chain === 'CEL')
    expect(cel?.stale).toContain(`venue:${VENUE}:USDT>cUSD`)
    expect(cel?.stale).not.toContain(`venue:${VENUE}`)
    // Health says why: cUSD's L0 leaves nothing to flow out.
    const health = await readJson(await app().request('/api/v1/health'))
    const celHealth = (health['market'] as { chains: { chain: string; reasons?: Record<string, string> }[] }).chains.find(
      (chain) => chain.chain === 'CEL',
    )
    expect(celHealth?.reasons).toEqual({
      [`venue:${VENUE}:USDT>cUSD`]: "USDT → cUSD: Mento's trading limit leaves no room (cUSD's L0 leaves 0 whole cUSD to flow out)",
    })
    // Not offered, as a direction with no ladder point: no route joins the pair now.
    expect(await readJson(await postJson(app(), '/api/x402/quote', usdtToCusd('100')))).toMatchObject({
      supported: false,
      reason: 'no_route_found',
    })
    const back = quoteBody({ fromChain: 'CEL', toChain: 'CEL', fromToken: 'cUSD', toToken: 'USDT', fromAmount: '100' })
    expect((await postJson(app(), '/api/x402/quote', back)).status).toBe(200)
  })

  it('limits that cannot be read make the venue a gap with the reason: its routes are 503, never quoted as unlimited', async () => {
    const { instance } = setupOf(world, 'CEL')
    await depthStandIns(instance).setTradingLimitsFailing(limits.broker, true)
    await setCusdLimit(NO_FLOW, NO_LIMIT)
    await market.refresh()
    const refused = await postJson(app(), '/api/x402/quote', usdtToCusd('100'))
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', venues: [VENUE] })
    expect(problem['detail']).toContain('tradingLimitsConfig() failed')
    expect(market.status().chains.find((chain) => chain.chain === 'CEL')?.stale).toContain(`venue:${VENUE}`)
    await depthStandIns(instance).setTradingLimitsFailing(limits.broker, false)
    await market.refresh()
    expect((await postJson(app(), '/api/x402/quote', usdtToCusd('100'))).status).toBe(200)
  })
})
