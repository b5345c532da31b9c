import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { E18, formatAtomic } from '../../src/engine/index.ts'
import { prepareStableSwap, stableSwapGetDy } from '../../src/engine/stableSwap.ts'
import type { ChainReading, ChainReadPlan, ReadChain } from '../../src/market/chainReading.ts'
import { fxClosedSince } from '../../src/market/fxMarketHours.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'
import { createServer } from '../../src/app/createServer.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'

// Issue 17: the live market's rules, over a scripted chain behind the ReadChain interface (the real reader and its
// anvil stand-ins are tested in createChainReader.test.ts and liveMarketOnAnvil.test.ts).

const { files } = loadCatalogue(MANIFEST_DIR)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
/** A Wednesday, FX markets open. */
const WEDNESDAY_MS = Date.parse('2026-11-25T12:00:00Z')
const eightDecimals = (value: number): bigint => BigInt(Math.round(value * 1e8))

type Script = {
  eurUsd: number
  eurUpdatedAgoSec?: number
  blockAgoSec?: number
  fails?: string
  sequencerDown?: boolean
  /** A pool's balances by venue id, or the error its read fails with; the others answer their snapshot balances. */
  pools?: Readonly<Record<string, readonly bigint[] | { error: string }>>
}

/** The snapshot's balances of a balance-model venue (manifest/market.json). */
function snapshotBalances(id: string): bigint[] {
  const state = files.market.venues[id]
  if (state === undefined || !('balances' in state)) throw new Error(`${id} has no snapshot balances`)
  return state.balances.map(BigInt)
}

/** A chain whose reads answer what the test sets, every feed of the plan included. */
function scriptedChain(clock: () => number, script: () => Script): { read: ReadChain; calls: ChainReadPlan[] } {
  const calls: ChainReadPlan[] = []
  let block = 1000n
  return {
    calls,
    async read(plan) {
      calls.push(plan)
      const now = script()
      if (now.fails !== undefined) throw new Error(now.fails)
      const nowSec = Math.floor(clock() / 1000)
      block += 1n
      const reading: ChainReading = {
        chain: plan.chain,
        blockNumber: block,
        blockTimestamp: nowSec - (now.blockAgoSec ?? 0),
        feeds: plan.feeds.map((feed) => ({
          id: feed.id,
          ok: true as const,
          answer: eightDecimals(feed.id === 'fx:EUR' ? now.eurUsd : feed.id === 'native' ? 3000 : 1.3),
          decimals: 8,
          updatedAt: nowSec - (feed.id === 'fx:EUR' ? (now.eurUpdatedAgoSec ?? 60) : 60),
          roundId: 1n,
        })),
        pools: (plan.pools ?? []).map((pool) => {
          const scripted = now.pools?.[pool.id]
          if (scripted !== undefined && 'error' in scripted) return { id: pool.id, ok: false as const, error: scripted.error }
          return { id: pool.id, ok: true as const, balances: [...(scripted ?? snapshotBalances(pool.id))] }
        }),
        gas: { baseFeePerGas: 2_000_000_000n, priorityFeePerGas: 1_000_000_000n },
        ...(plan.sequencerUptimeFeed === undefined ? {} : { sequencer: { isUp: now.sequencerDown !== true, since: nowSec - 86_400 } }),
        rpcCalls: 2,
      }
      return reading
    },
  }
}

function liveOn(chains: ChainCode[], script: () => Script, clock = () => WEDNESDAY_MS): { market: LiveMarket; calls: ChainReadPlan[] } {
  const chain = scriptedChain(clock, script)
  const readers = Object.fromEntries(chains.map((code) => [code, chain.read]))
  const market = createLiveMarket({ files, feeds, readers, refreshMs: 4000, clock, log: pino({ level: 'silent' }) })
  return { market, calls: chain.calls }
}

function appOn(market: LiveMarket) {
  const deps = testDeps({ market, clock: () => WEDNESDAY_MS })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return createServer(deps)
}

const eurcToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'EURC', toToken: 'USDC', fromAmount: '1000' })
const usdcToUsdt = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000' })
/** Only the Curve 3pool carries DAI on Ethereum. */
const daiToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'DAI', toToken: 'USDC', fromAmount: '100000' })
const THREE_POOL = 'eth-curve-3pool'
const [DAI_BALANCE = 0n] = snapshotBalances(THREE_POOL)
/**
 * The 3pool with all but 5,000,000 of its 46,000,000 USDC and 78,000,000 USDT drained (both, so that DAI to USDT in
 * it and on to USDC elsewhere is no way around the scarce USDC).
 */
const DRAINED = [DAI_BALANCE, 5_000_000n * 10n ** 6n, 5_000_000n * 10n ** 6n]

/** What the 3pool pays for 100,000 DAI in USDC at these balances (manifest/venues.json: A 2000, fee 100 ppm). */
function threePoolDaiToUsdc(balances: readonly bigint[]): string {
  const pool = prepareStableSwap({ balances, decimals: [18, 6, 6], amp: 2000n, feePpm: 100n })
  return formatAtomic(stableSwapGetDy(pool, 0, 1, 100_000n * 10n ** 18n), 6)
}

/** The quote's only step, a swap (the test's quotes are one swap through one venue). */
const swapStep = (quote: QuoteResult) => {
  const [step, ...more] = quote.route.steps
  if (step?.type !== 'swap' || more.length > 0) throw new Error(`expected one swap step: ${quote.route.id}`)
  return step
}
const priceImpactUsd = (quote: QuoteResult): number =>
  Number(quote.route.realCost.items.find((item) => item.kind === 'price_impact')?.usd ?? Number.NaN)

describe('the live market', () => {
  it('prices from fresh reads: the FX rate, gas and native price of the block read, one plan per chain', async () => {
    let eurUsd = 1.2
    const { market, calls } = liveOn(['ETH'], () => ({ eurUsd }))
    await market.refresh()
    expect(calls).toHaveLength(1)
    expect(calls[0]?.feeds.map((feed) => feed.id).sort()).toEqual(['fx:EUR', 'fx:GBP', 'fx:SGD', 'native'])
    expect(market.catalogue().fxUsdE18.EUR).toBe((12n * E18) / 10n)
    // 3 gwei at USD 3000 per ETH.
    expect(market.catalogue().chains.get('ETH')?.gasUnitUsdE18).toBe((3n * 3000n * E18) / 1_000_000_000n)
    const status = market.status()
    expect(status.isDegraded).toBe(false)
    expect(status.currencies.find((c) => c.currency === 'EUR')).toEqual({ currency: 'EUR', source: 'rpc', chain: 'ETH', block: '1001' })
    expect(status.currencies.find((c) => c.currency === 'KES')).toEqual({ currency: 'KES', source: 'snapshot' })
    expect(status.chains.find((c) => c.chain === 'BAS')).toEqual({ chain: 'BAS', source: 'snapshot', stale: [] })

    // Moving the feed moves the next quote, within one refresh, by the rate's ratio.
    const app = appOn(market)
    const before = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', eurcToUsdc)))
    eurUsd = 1.32
    await market.refresh()
    const after = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', eurcToUsdc)))
    const ratio = Number(after.toAmount) / Number(before.toAmount)
    expect(ratio).toBeGreaterThan(1.1 * 0.999)
    expect(ratio).toBeLessThan(1.1 * 1.001)
  })

  it('a feed older than its heartbeat removes exactly the routes that need it: 503 market_unavailable naming it', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, eurUpdatedAgoSec: 2 * 86_400 }))
    await market.refresh()
    expect(market.status()).toMatchObject({ isDegraded: true })
    expect(market.status().currencies.find((c) => c.currency === 'EUR')?.stale).toMatch(
      /ETH feed last updated 172800 s ago \(heartbeat 86400 s\)/,
    )
    const app = appOn(market)
    const refused = await postJson(app, '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('15')
    expect(await readJson(refused)).toMatchObject({ code: 'market_unavailable', currencies: ['EUR'], chains: [] })
    // A dollar route needs no EUR rate.
    expect((await postJson(app, '/api/x402/quote', usdcToUsdt)).status).toBe(200)
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({
      status: 'degraded',
      market: { currencies: expect.arrayContaining([expect.objectContaining({ currency: 'EUR', source: 'rpc' })]) },
    })
  })

  it('an RPC that fails makes the chain stale: its quotes are 503, never priced from the last figures, and health degraded', async () => {
    let fails: string | undefined
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, ...(fails === undefined ? {} : { fails }) }))
    fails = 'ETH: the RPC did not answer within 5000 ms'
    await market.refresh()
    const app = appOn(market)
    const refused = await postJson(app, '/api/x402/quote', usdcToUsdt)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: ['ETH'] })
    expect(problem['detail']).toContain('ETH: not read yet (ETH: the RPC did not answer within 5000 ms)')
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'ETH')).toMatchObject({
      source: 'rpc',
      stale: ['gas', 'venue:eth-curve-3pool', 'venue:eth-curve-pyusd-usdc', 'venue:eth-curve-usde-usdc'],
      error: 'ETH: the RPC did not answer within 5000 ms',
    })
    // Other chains keep the snapshot and still quote.
    expect((await postJson(app, '/api/x402/quote', quoteBody({ fromChain: 'BAS', toChain: 'BAS' }))).status).toBe(200)
  })

  it('a read whose block is older than three refresh intervals is stale too', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, blockAgoSec: 60 }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')).toMatchObject({ stale: expect.arrayContaining(['gas']), blockAgeSec: 60 })
    // Its FX answers are not used either, though each is within its own heartbeat: the chain vouches for nothing.
    expect(market.status().currencies.find((c) => c.currency === 'EUR')?.stale).toMatch(/ETH stale: last read at block/)
    expect((await postJson(appOn(market), '/api/x402/quote', eurcToUsdc)).status).toBe(503)
  })

  it('a reading the market cannot apply is dropped, not thrown: the last market stays and the chain goes stale', async () => {
    let broken = false
    const chain = scriptedChain(
      () => WEDNESDAY_MS,
      () => ({ eurUsd: 1.2 }),
    )
    const read: ReadChain = async (plan) => {
      const reading = await chain.read(plan)
      // Balances no StableSwap maths can price would not do; an FX answer of 10^70 USD overflows nothing but is
      // absurd: the throwing case is a reading whose figures the compile refuses.
      return broken ? { ...reading, gas: { baseFeePerGas: -1n, priorityFeePerGas: 0n } } : reading
    }
    const market = createLiveMarket({
      files,
      feeds,
      readers: { ETH: read },
      refreshMs: 4000,
      clock: () => WEDNESDAY_MS,
      log: pino({ level: 'silent' }),
    })
    await market.refresh()
    const before = market.catalogue()
    broken = true
    await expect(market.refresh()).resolves.toBeUndefined()
    expect(market.status().chains.find((c) => c.chain === 'ETH')).toMatchObject({ stale: expect.arrayContaining(['gas']) })
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.error).toMatch(/^the read could not be applied: /)
    expect(market.catalogue()).not.toBe(before)
  })

  it('an L2 whose sequencer is down is not offered', async () => {
    const { market } = liveOn(['BAS'], () => ({ eurUsd: 1.2, sequencerDown: true }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'BAS')).toMatchObject({ stale: ['sequencer'] })
    const refused = await postJson(appOn(market), '/api/x402/quote', quoteBody({ fromChain: 'BAS', toChain: 'BAS' }))
    expect(refused.status).toBe(503)
  })

  it('while FX markets are closed, the last FX answer before the close stays usable', async () => {
    const saturday = Date.parse('2026-11-28T12:00:00Z')
    expect(fxClosedSince(saturday)).toBe(Date.parse('2026-11-27T21:00:00Z'))
    expect(fxClosedSince(Date.parse('2026-11-27T20:59:59Z'))).toBeUndefined()
    expect(fxClosedSince(Date.parse('2026-11-29T23:00:00Z'))).toBeUndefined()
    // Last updated Friday 20:00 UTC, 40 h before: older than its heartbeat, usable through the closure.
    const { market } = liveOn(
      ['ETH'],
      () => ({ eurUsd: 1.2, eurUpdatedAgoSec: 40 * 3600 }),
      () => saturday,
    )
    await market.refresh()
    expect(market.status()).toMatchObject({ isDegraded: false, isFxMarketClosed: true })
    expect(market.catalogue().fxUsdE18.EUR).toBe((12n * E18) / 10n)
    // And a quote priced on it says so; a dollar quote has nothing to say.
    const deps = testDeps({ market, clock: () => saturday })
    Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
    const app = createServer(deps)
    const held = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', eurcToUsdc)))
    expect(held.marketNotes).toEqual([
      expect.stringMatching(/^FX markets are closed since 2026-11-27T21:00:00.000Z: the EUR\/USD rate is the feed's last answer/),
    ])
    expect(QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', usdcToUsdt))).marketNotes).toBeUndefined()
  })

  it('reads the balance-model pools of the chain’s venues in the same plan, and prices them from the block read', async () => {
    const { market, calls } = liveOn(['ETH'], () => ({ eurUsd: 1.2 }))
    await market.refresh()
    expect(calls[0]?.pools).toEqual([
      { id: 'eth-curve-3pool', address: '0xbEbc44782C7dB0a1A60Cb6fe97d0b483032FF1C7', coins: 3 },
      { id: 'eth-curve-pyusd-usdc', address: '0x383E6b4437b59fff47B619CBA855CA29342A8559', coins: 2 },
      { id: 'eth-curve-usde-usdc', address: '0x02950460E2b9529D0E00284A5fA2d7bDF3fA4d72', coins: 2 },
    ])
    const bnb = liveOn(['BNB'], () => ({ eurUsd: 1.2 }))
    await bnb.market.refresh()
    expect(bnb.calls[0]?.pools).toEqual([
      { id: 'bnb-pancake-stable-usdt-usdc', address: '0x3EFebC418efB585248A0D2140cfb87aFcc2C63DD', coins: 2 },
    ])
  })

  it('a drained pool reprices its routes: the venue pays what its balances at the block give, its price impact grows', async () => {
    let pools: NonNullable<Script['pools']> = {}
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, pools }))
    await market.refresh()
    const app = appOn(market)
    const before = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', daiToUsdc)))
    expect(swapStep(before)).toMatchObject({ id: THREE_POOL, toAmount: threePoolDaiToUsdc(snapshotBalances(THREE_POOL)) })

    pools = { [THREE_POOL]: DRAINED }
    await market.refresh()
    const after = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', daiToUsdc)))
    expect(swapStep(after)).toMatchObject({ id: THREE_POOL, toAmount: threePoolDaiToUsdc(DRAINED) })
    // USDC is now scarce in the pool: 100,000 DAI buy less of it, and the route's price impact is a cost.
    expect(Number(swapStep(after).toAmount)).toBeLessThan(Number(swapStep(before).toAmount))
    expect(priceImpactUsd(after)).toBeGreaterThan(priceImpactUsd(before))
    expect(priceImpactUsd(after)).toBeGreaterThan(0)
    expect(market.catalogue().asOf).toBe(files.market.asOf)
    expect(market.status().isDegraded).toBe(false)
  })

  it('a pool whose read fails removes exactly its routes: another venue serves what it can, the rest is 503 naming the venue', async () => {
    const error = `eth-curve-3pool at 0xbEbc44782C7dB0a1A60Cb6fe97d0b483032FF1C7: balances(0) failed: reverted`
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, pools: { [THREE_POOL]: { error } } }))
    await market.refresh()
    const app = appOn(market)
    const served = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', usdcToUsdt)))
    expect(served.route.steps.map((step) => (step.type === 'swap' ? step.id : step.type))).not.toContain(THREE_POOL)
    const refused = await postJson(app, '/api/x402/quote', daiToUsdc)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('15')
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], currencies: [], venues: [THREE_POOL] })
    expect(problem['detail']).toContain(`eth-curve-3pool: its pool could not be read at block 1001: ${error}`)
    // The other pools of the chain were read and still route.
    const pyusd = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'PYUSD', toToken: 'USDC', fromAmount: '1000' })
    expect((await postJson(app, '/api/x402/quote', pyusd)).status).toBe(200)
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'ETH')).toMatchObject({
      source: 'rpc',
      stale: ['venue:eth-curve-3pool'],
    })
  })

  it('the pools of a chain whose read is stale are stale too, by name', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, blockAgoSec: 60 }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual([
      'gas',
      'venue:eth-curve-3pool',
      'venue:eth-curve-pyusd-usdc',
      'venue:eth-curve-usde-usdc',
    ])
  })

  it('a pool read at balances the StableSwap maths cannot price is a gap for that pool only', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, pools: { [THREE_POOL]: [1n, 10n ** 60n, 1n] } }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual(['venue:eth-curve-3pool'])
    const app = appOn(market)
    const refused = await postJson(app, '/api/x402/quote', daiToUsdc)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ venues: [THREE_POOL] })
    expect(problem['detail']).toContain('StableSwap D did not converge')
    const pyusd = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'PYUSD', toToken: 'USDC', fromAmount: '1000' })
    expect((await postJson(app, '/api/x402/quote', pyusd)).status).toBe(200)
  })
})
