import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { compileCatalogue, E18, findRoutes, formatAtomic, isEvmToken, sizeRoute, swapOut, withGasMargin } from '../../src/engine/index.ts'
import { encodeAbiParameters } from 'viem'
import { runDestinationInputs } from '../../src/tx/abis.ts'
import { buildRouteTransaction } from '../../src/tx/buildRouteTransaction.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { prepareStableSwap, stableSwapGetDy } from '../../src/engine/stableSwap.ts'
import { solidlyStableGetAmountOut } from '../../src/engine/solidlyStable.ts'
import type { ChainReading, ChainReadPlan, ReadChain } from '../../src/market/chainReading.ts'
import { COMPOSE_MESSAGE_BYTES, LADDER_USD } from '../../src/market/feedCatalogue.ts'
import { fxClosedSince, fxNextChangeMs } from '../../src/market/fxMarketHours.ts'
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
  /**
   * A depth venue's quotes by venue id: every size failing with this error, or a function of the size; the others
   * answer what the snapshot's depth model pays at the scripted EUR rate (so a quote ladder follows the FX feed).
   */
  ladders?: Readonly<Record<string, { error: string } | ((amountIn: bigint, from: string) => bigint)>>
  /** What Mento's SortedOracles answers for KES (USD per KES; default the snapshot's 0.00774), and how long ago. */
  kesUsd?: number
  kesUpdatedAgoSec?: number
  /**
   * What each LayerZero lane's quoteSend asks, in wei (default 10^12, a negligible fee), or the error it fails with;
   * `isCompose` for the quote with a compose message.
   */
  messagingFeeWei?: (bridgeId: string, to: ChainCode, isCompose: boolean) => bigint | { error: string }
  /** What a rollup's L1 data fee read answers, in wei (default 10^11, a negligible fee), or the error it fails with. */
  l1FeeWei?: bigint | { error: string }
  /** An ArbGasInfo read that answers the fee but not the prices and minimum base fee that size a gas limit. */
  arbitrumPricesMissing?: boolean
  /**
   * What a token price read answers by symbol, one whole token in its `of` token to 18 decimals (default sUSDe 1.19
   * USDe, PYUSD 0.9998 USDC), or the error it fails with.
   */
  tokenRatios?: Readonly<Record<string, bigint | { error: string }>>
}

/** What a depth venue of the snapshot pays for `amountIn` of `from` with EUR at `eurUsd`. */
function depthModelOut(venueId: string, from: string, amountIn: bigint, eurUsd: number): bigint {
  const catalogue = compileCatalogue({
    ...files,
    market: { ...files.market, fx: { ...files.market.fx, EUR: { usd: String(eurUsd), source: 'test' } } },
  })
  const venue = catalogue.venues.find((candidate) => candidate.id === venueId)
  const i = venue?.tokens.findIndex((token) => token.symbol === from) ?? -1
  const fromToken = venue?.tokens[i]
  const toToken = venue?.tokens[1 - i]
  if (venue === undefined || fromToken === undefined || toToken === undefined) throw new Error(`${venueId} has no ${from}`)
  return swapOut({ venue, i, j: 1 - i, from: fromToken, to: toToken }, amountIn)
}

/** The ladder readings a scripted chain answers for a plan's depth venues. */
function scriptedLadders(plan: ChainReadPlan, now: Script): ChainReading['ladders'] {
  return (plan.ladders ?? []).map((ladder) => ({
    id: ladder.id,
    directions: ladder.directions.map((direction) => {
      const scripted = now.ladders?.[ladder.id]
      if (scripted !== undefined && 'error' in scripted)
        return { from: direction.from, to: direction.to, points: [], end: `${direction.from} → ${direction.to}: ${scripted.error}` }
      const points: [bigint, bigint][] = []
      for (const amountIn of direction.amountsIn) {
        const amountOut =
          scripted === undefined ? depthModelOut(ladder.id, direction.from, amountIn, now.eurUsd) : scripted(amountIn, direction.from)
        if (amountOut <= (points.at(-1)?.[1] ?? 0n)) return { from: direction.from, to: direction.to, points, end: 'no more' }
        points.push([amountIn, amountOut])
      }
      return { from: direction.from, to: direction.to, points }
    }),
  }))
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
        ladders: scriptedLadders(plan, now),
        messagingFees: (plan.messagingFees ?? []).map((lane) => {
          const isCompose = lane.compose !== undefined
          const fee = now.messagingFeeWei?.(lane.bridgeId, lane.to, isCompose) ?? 10n ** 12n
          const which = { bridgeId: lane.bridgeId, to: lane.to, ...(isCompose ? { isCompose: true as const } : {}) }
          return typeof fee === 'bigint'
            ? { ...which, ok: true as const, nativeFeeWei: fee }
            : { ...which, ok: false as const, error: fee.error }
        }),
        oracles: (plan.oracles ?? []).map((oracle) => ({
          id: oracle.id,
          ok: true as const,
          answer: BigInt(Math.round((now.kesUsd ?? 0.00774) * 1e12)) * 10n ** 6n,
          decimals: 18,
          updatedAt: nowSec - (now.kesUpdatedAgoSec ?? 60),
          roundId: 0n,
        })),
        gas: { baseFeePerGas: 2_000_000_000n, priorityFeePerGas: 1_000_000_000n },
        ...(plan.l1Fee === undefined
          ? {}
          : {
              l1Fee:
                typeof now.l1FeeWei === 'object'
                  ? { ok: false as const, error: now.l1FeeWei.error }
                  : {
                      ok: true as const,
                      feeWei: now.l1FeeWei ?? 10n ** 11n,
                      // ArbGasInfo's prices (the fee read is the per-transaction price alone) and the chain's floor.
                      ...(plan.l1Fee.kind === 'arbGasInfo' && !now.arbitrumPricesMissing
                        ? { arbitrum: { perL2TxWei: now.l1FeeWei ?? 10n ** 11n, perL1CalldataByteWei: 0n, minBaseFeeWei: 20_000_000n } }
                        : {}),
                    },
            }),
        ...(plan.tokenRatios === undefined
          ? {}
          : {
              tokenRatios: plan.tokenRatios.map((spec) => {
                const scripted = now.tokenRatios?.[spec.symbol] ?? (spec.symbol === 'sUSDe' ? 119n * 10n ** 16n : 9_998n * 10n ** 14n)
                return typeof scripted === 'bigint'
                  ? { symbol: spec.symbol, ok: true as const, valueE18: scripted }
                  : { symbol: spec.symbol, ok: false as const, error: scripted.error }
              }),
            }),
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
/** Ethereum's depth venues (manifest/venues.json), quoted through QuoterV2 at the ladder of sizes. */
const ETH_DEPTH_VENUES = [
  'venue:eth-univ3-usdc-usdt-100',
  'venue:eth-univ3-eure-usdc-500',
  'venue:eth-univ3-gbpe-usdc-500',
  'venue:eth-univ3-eurc-usdc-500',
  'venue:eth-univ3-xsgd-usdc-500',
]
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
      stale: [
        'gas',
        'venue:eth-curve-3pool',
        'venue:eth-curve-pyusd-usdc',
        'venue:eth-curve-usde-usdc',
        ...ETH_DEPTH_VENUES,
        'price:sUSDe',
        'price:PYUSD',
      ],
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

  it('a read that never finishes does not keep figures past their age: the market goes stale by the clock alone', async () => {
    let nowMs = WEDNESDAY_MS
    const { market } = liveOn(
      ['ETH'],
      () => ({ eurUsd: 1.2 }),
      () => nowMs,
    )
    await market.refresh()
    const app = appOn(market)
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual([])
    // Ethereum's block time is 12 s, so its figures are good for 36 s; no read finishes after the first.
    nowMs = WEDNESDAY_MS + 36_000
    expect((await postJson(app, '/api/x402/quote', usdcToUsdt)).status).toBe(200)
    nowMs = WEDNESDAY_MS + 37_000
    expect(market.status().chains.find((c) => c.chain === 'ETH')).toMatchObject({ stale: expect.arrayContaining(['gas']), blockAgeSec: 37 })
    const refused = await postJson(app, '/api/x402/quote', usdcToUsdt)
    expect(refused.status).toBe(503)
    expect((await readJson(refused))['detail']).toContain('ETH: last read at block 1001, 37 s ago (at most 36 s)')
  })

  it('knows when FX markets next close or reopen, when the FX figures are judged again', () => {
    expect(fxNextChangeMs(WEDNESDAY_MS)).toBe(Date.parse('2026-11-27T21:00:00Z'))
    expect(fxNextChangeMs(Date.parse('2026-11-27T20:59:59Z'))).toBe(Date.parse('2026-11-27T21:00:00Z'))
    expect(fxNextChangeMs(Date.parse('2026-11-28T12:00:00Z'))).toBe(Date.parse('2026-11-29T23:00:00Z'))
    expect(fxNextChangeMs(Date.parse('2026-11-29T23:00:00Z'))).toBe(Date.parse('2026-12-04T21:00:00Z'))
  })

  it('refresh() reads afresh: a scheduled read under way, begun before a change, is waited out and read again', async () => {
    let eurUsd = 1.2
    const chain = scriptedChain(
      () => WEDNESDAY_MS,
      () => ({ eurUsd }),
    )
    let release = (): void => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    // The first read takes its figures at once (as a block is pinned), then waits; later reads answer at once.
    const read: ReadChain = async (plan) => {
      const reading = chain.read(plan)
      if (chain.calls.length === 1) await gate
      return reading
    }
    const market = createLiveMarket({
      files,
      feeds,
      readers: { ETH: read },
      refreshMs: 4000,
      clock: () => WEDNESDAY_MS,
      log: pino({ level: 'silent' }),
    })
    const underWay = market.refresh()
    eurUsd = 1.3
    const afterChange = market.refresh()
    release()
    await Promise.all([underWay, afterChange])
    expect(chain.calls).toHaveLength(2)
    expect(market.catalogue().fxUsdE18.EUR).toBe((13n * E18) / 10n)
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

  it('the pools, depth venues and token prices of a chain whose read is stale are stale too, by name', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, blockAgoSec: 60 }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual([
      'gas',
      'venue:eth-curve-3pool',
      'venue:eth-curve-pyusd-usdc',
      'venue:eth-curve-usde-usdc',
      ...ETH_DEPTH_VENUES,
      'price:sUSDe',
      'price:PYUSD',
    ])
  })

  it('an unpriceable pool state is tried once per block read, not again each time the market is composed', async () => {
    const warnings: string[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).event) })
    const chain = scriptedChain(
      () => WEDNESDAY_MS,
      () => ({ eurUsd: 1.2, pools: { [THREE_POOL]: [1n, 10n ** 60n, 1n] } }),
    )
    // Ethereum answers the same block again until told to move on, as a node does between blocks.
    let isFrozen = false
    let last: ChainReading | undefined
    const read: ReadChain = async (plan) => (isFrozen && last !== undefined ? last : (last = await chain.read(plan)))
    const market = createLiveMarket({ files, feeds, readers: { ETH: read }, refreshMs: 4000, clock: () => WEDNESDAY_MS, log })
    await market.refresh()
    expect(warnings.filter((event) => event === 'market_pool_unpriced')).toHaveLength(1)
    isFrozen = true
    await market.refresh()
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual(['venue:eth-curve-3pool'])
    expect(warnings.filter((event) => event === 'market_pool_unpriced')).toHaveLength(1)
    // A new block read is tried afresh.
    isFrozen = false
    await market.refresh()
    expect(warnings.filter((event) => event === 'market_pool_unpriced')).toHaveLength(2)
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

describe('LayerZero messaging fees with a compose, for routes that swap on arrival', () => {
  const TAXI = 'stargate-usdc-taxi'
  const usdcToEure = quoteBody({ fromChain: 'ETH', toChain: 'GNO', fromToken: 'USDC', toToken: 'EURe', fromAmount: '1000' })
  const laneOf = (market: LiveMarket, id: string, lane: string) =>
    market
      .catalogue()
      .lanes.get(lane)
      ?.find((candidate) => candidate.bridge.id === id)

  it('plans a second quote of each lane that can carry a compose, with the executor gas option and a message as long as the longest order', async () => {
    const { market, calls } = liveOn(['ETH'], () => ({ eurUsd: 1.2 }))
    await market.refresh()
    const composed = (calls[0]?.messagingFees ?? []).filter((lane) => lane.compose !== undefined)
    // Every taxi and OFT lane; never the bus, which carries no compose.
    expect(new Set(composed.map((lane) => lane.bridgeId))).toEqual(new Set([TAXI, 'stargate-usdt-taxi', 'usdt0-oft', 'usdt0-legacy-mesh']))
    const toGno = composed.find((lane) => lane.bridgeId === TAXI && lane.to === 'GNO')
    // Quoted at 32 and 288 bytes and extrapolated to the longest order's length.
    expect(toGno?.compose).toMatchObject({ sizes: [32, 288], messageBytes: COMPOSE_MESSAGE_BYTES })
    // Type 3, executor worker, 19 bytes: lzCompose (3) at index 0 with the gas, as the builder's lzComposeOptions.
    const gas = BigInt(`0x${toGno?.compose?.extraOptions.slice(-32)}`)
    expect(toGno?.compose?.extraOptions.slice(0, 18)).toBe('0x0003010013030000')
    const catalogue = compileCatalogue(files)
    const dearest = Math.max(...files.venues.venues.filter((venue) => venue.chain === 'GNO').map((venue) => venue.gasUnits))
    expect(gas).toBe(withGasMargin(catalogue, catalogue.pricing.routerOverheadGasUnits + 2n * BigInt(dearest)))
  })

  it('a route that swaps on arrival is charged the lane’s fee with a compose, and its transaction carries it; one that ends at the bridge the plain fee', async () => {
    const { market } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      // 0.0001 ETH plain, 0.0003 ETH with a compose: 0.30 and 0.90 USD at 3,000.
      messagingFeeWei: (_bridgeId, _to, isCompose) => (isCompose ? 3n * 10n ** 14n : 10n ** 14n),
    }))
    await market.refresh()
    expect(laneOf(market, TAXI, 'ETH>GNO')).toMatchObject({
      messagingFeeUsdE18: (3n * E18) / 10n,
      composeMessagingFeeUsdE18: (9n * E18) / 10n,
    })
    // The bus cannot compose: its compose fee is its plain one, never used.
    expect(laneOf(market, 'stargate-usdc-bus', 'ETH>GNO')?.composeMessagingFeeUsdE18).toBe((3n * E18) / 10n)
    const catalogue = market.catalogue()
    const token = (key: string) => {
      const found = catalogue.tokens.get(key)
      return found !== undefined && isEvmToken(found) ? found : fail()
    }
    const found = findRoutes(catalogue, {
      from: token('ETH:USDC'),
      to: token('GNO:EURe'),
      amountIn: 1_000n * 10n ** 6n,
      slippageE18: 5n * 10n ** 15n,
    })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const composing = found.viable.find((priced) => priced.route.bridge?.bridge.id === TAXI)
    expect(composing?.route.destinationSwaps.length).toBeGreaterThan(0)
    expect(composing?.messagingFeeUsdE18).toBe((9n * E18) / 10n)
    // The compose fee pays LayerZero's executor for the swaps on arrival: their gas is not taken from the bridged amount
    // again, as it is on the snapshot, where the fee was not quoted with the compose.
    expect(composing?.costs.filter((item) => item.kind === 'destination_gas')).toEqual([])
    const onSnapshot = findRoutes(compileCatalogue(files), {
      from: token('ETH:USDC'),
      to: token('GNO:EURe'),
      amountIn: 1_000n * 10n ** 6n,
      slippageE18: 5n * 10n ** 15n,
    })
    const snapshotComposing =
      onSnapshot.kind === 'routes' ? onSnapshot.viable.find((priced) => priced.route.id === composing?.route.id) : undefined
    expect(snapshotComposing?.costs.some((item) => item.kind === 'destination_gas')).toBe(true)
    const sized = composing === undefined ? undefined : sizeRoute(catalogue, composing.route, composing.amountIn, found.amounts.toAmount)
    if (sized === undefined) throw new Error('not sized')
    const built = buildRouteTransaction({
      catalogue,
      routerOn: () => routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'),
      sized,
      amounts: found.amounts,
      slippageE18: 5n * 10n ** 15n,
      sender: '0x1111111111111111111111111111111111111111',
      recipient: '0x2222222222222222222222222222222222222222',
      ref: `0x${'ab'.repeat(32)}`,
      nowSec: Math.floor(WEDNESDAY_MS / 1000),
    })
    if (!built.ok) throw new Error(built.detail)
    // The fee the lane asked, plus the 20% headroom LayerZero refunds when not used (buildRouteTransaction.ts).
    expect(BigInt(built.transactionRequest.value)).toBe((3n * 10n ** 14n * 12n) / 10n)
    // The quoted message is no shorter than the order this route sends.
    expect((encodeAbiParameters(runDestinationInputs, [built.destinationOrder ?? fail()]).length - 2) / 2).toBeLessThanOrEqual(
      COMPOSE_MESSAGE_BYTES,
    )
    const plain = findRoutes(catalogue, {
      from: token('ETH:USDC'),
      to: token('ARB:USDC'),
      amountIn: 10_000n * 10n ** 6n,
      slippageE18: 5n * 10n ** 15n,
    })
    if (plain.kind !== 'routes') throw new Error(plain.kind)
    const direct = plain.viable.find((priced) => priced.route.bridge?.bridge.id === TAXI && priced.route.destinationSwaps.length === 0)
    expect(direct?.messagingFeeUsdE18).toBe((3n * E18) / 10n)
  })

  it('a lane whose quote with a compose fails keeps its routes that end at the bridge; those that swap on arrival are 503 naming it', async () => {
    const error = 'stargate-usdc-taxi ETH → GNO with a compose: quoteSend() failed: LZ_ULN_InvalidWorkerOptions'
    const { market } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      messagingFeeWei: (bridgeId, to, isCompose) => (bridgeId === TAXI && to === 'GNO' && isCompose ? { error } : 10n ** 13n),
    }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual([`bridge:${TAXI}:ETH>GNO:compose`])
    expect(laneOf(market, TAXI, 'ETH>GNO')?.composeFeeGap).toBe(
      `its messaging fee with a compose could not be quoted at block 1001: ${error}`,
    )
    const refused = await postJson(appOn(market), '/api/x402/quote', usdcToEure)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', venues: [], lanes: [`${TAXI}:ETH>GNO:compose`] })
    expect(problem['detail']).toContain(error)
    // The lane itself stays: a deposit without a compose is still priced.
    expect(laneOf(market, TAXI, 'ETH>GNO')?.messagingFeeUsdE18).toBe((3n * E18) / 100n)
  })
})

describe('Solidly stable pools read through their router', () => {
  const AERODROME = 'bas-aerodrome-usdc-dai'
  const usdcToDai = quoteBody({ fromChain: 'BAS', toChain: 'BAS', fromToken: 'USDC', toToken: 'DAI', fromAmount: '100000' })
  /** What the Aerodrome USDC/DAI pool pays for 100,000 USDC in DAI at these reserves (manifest/venues.json: fee 500 ppm). */
  const aerodromeUsdcToDai = (reserves: readonly bigint[]): string => {
    const [usdc = 0n, dai = 0n] = reserves
    return formatAtomic(solidlyStableGetAmountOut({ reserves: [usdc, dai], decimals: [6, 18], feePpm: 500n }, 0, 100_000n * 10n ** 6n), 18)
  }

  it('plans each Solidly venue’s getReserves through its router, with the venue’s tokens, stable flag and factory', async () => {
    const { market, calls } = liveOn(['BAS'], () => ({ eurUsd: 1.2 }))
    await market.refresh()
    const token = (symbol: string) => {
      const found = compileCatalogue(files).tokens.get(`BAS:${symbol}`)
      return found !== undefined && isEvmToken(found) ? found.address : fail()
    }
    expect(calls[0]?.pools).toContainEqual({
      id: AERODROME,
      address: '0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43',
      coins: 2,
      solidly: { tokens: [token('USDC'), token('DAI')], stable: true, factory: '0x420DD381b31aEf6683db6B902084cB0FFECe40Da' },
    })
    const opt = liveOn(['OPT'], () => ({ eurUsd: 1.2 }))
    await opt.market.refresh()
    expect(opt.calls[0]?.pools?.map((pool) => pool.id)).toEqual(['opt-velodrome-usdc-usdt'])
  })

  it('prices the pool from the reserves read: moving them moves the quote by what the x³y + xy³ maths gives', async () => {
    const [usdc = 0n, dai = 0n] = snapshotBalances(AERODROME)
    let pools: NonNullable<Script['pools']> = {}
    const { market } = liveOn(['BAS'], () => ({ eurUsd: 1.2, pools }))
    await market.refresh()
    const app = appOn(market)
    const before = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', usdcToDai)))
    expect(swapStep(before)).toMatchObject({ id: AERODROME, toAmount: aerodromeUsdcToDai([usdc, dai]) })
    // A tenth of the DAI gone: the pool leans to USDC, and DAI costs more.
    const drained = [usdc, (dai * 9n) / 10n]
    pools = { [AERODROME]: drained }
    await market.refresh()
    const after = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', usdcToDai)))
    expect(swapStep(after)).toMatchObject({ id: AERODROME, toAmount: aerodromeUsdcToDai(drained) })
    expect(Number(swapStep(after).toAmount)).toBeLessThan(Number(swapStep(before).toAmount))
    expect(priceImpactUsd(after)).toBeGreaterThan(priceImpactUsd(before))
    expect(market.status().isDegraded).toBe(false)
  })

  it('a failing getReserves is a gap naming the venue: 503 with the reason, health lists it, the chain’s other routes stay', async () => {
    const error = `${AERODROME} at 0xcF77a3Ba9A5CA399B7c97c74d54e5b1Beb874E43: getReserves() failed: reverted`
    const { market } = liveOn(['BAS'], () => ({ eurUsd: 1.2, pools: { [AERODROME]: { error } } }))
    await market.refresh()
    const app = appOn(market)
    const refused = await postJson(app, '/api/x402/quote', usdcToDai)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], currencies: [], venues: [AERODROME] })
    expect(problem['detail']).toContain(`${AERODROME}: its pool could not be read at block 1001: ${error}`)
    expect(market.status().chains.find((c) => c.chain === 'BAS')?.stale).toEqual([`venue:${AERODROME}`])
    const eurc = quoteBody({ fromChain: 'BAS', toChain: 'BAS', fromToken: 'USDC', toToken: 'EURC', fromAmount: '1000' })
    expect((await postJson(app, '/api/x402/quote', eurc)).status).toBe(200)
  })

  it('a Solidly venue the plan cannot read (no factory in its params) is a gap on a live chain, never the snapshot', async () => {
    const venues = files.venues.venues.map((venue) => (venue.id === AERODROME ? { ...venue, params: { stable: true } } : venue))
    const market = createLiveMarket({
      files: { ...files, venues: { venues } },
      feeds,
      readers: {
        BAS: scriptedChain(
          () => WEDNESDAY_MS,
          () => ({ eurUsd: 1.2 }),
        ).read,
      },
      refreshMs: 4000,
      clock: () => WEDNESDAY_MS,
      log: pino({ level: 'silent' }),
    })
    await market.refresh()
    expect(market.catalogue().gaps?.venues.get(AERODROME)).toMatch(/^its reserves cannot be read: .*factory and stable flag/)
    expect(market.status().chains.find((c) => c.chain === 'BAS')?.stale).toEqual([`venue:${AERODROME}`])
  })
})

describe('depth venues priced from quotes at a ladder of sizes', () => {
  const EURC_USDC = 'eth-univ3-eurc-usdc-500'
  /** 6-decimal whole units (EURC and USDC). */
  const units = (whole: bigint): bigint => whole * 10n ** 6n
  /** A constant product over 20,000,000 EURC and 24,000,000 USDC (EUR at 1.2), less 5 bp: what the scripted quoter answers. */
  const eurcToUsdcOut = (amountIn: bigint): bigint => (units(24_000_000n) * amountIn * 9_995n) / ((units(20_000_000n) + amountIn) * 10_000n)
  /** The ladder's linear interpolation, written out: the chord between the sizes around `amountIn`, rounded down. */
  const interpolated = (sizes: readonly bigint[], out: (size: bigint) => bigint, amountIn: bigint): bigint => {
    const upper = sizes.findIndex((size) => size >= amountIn)
    const upperIn = sizes[upper] ?? 0n
    const lowerIn = upper === 0 ? 0n : (sizes[upper - 1] ?? 0n)
    const lowerOut = upper === 0 ? 0n : out(lowerIn)
    return lowerOut + ((out(upperIn) - lowerOut) * (amountIn - lowerIn)) / (upperIn - lowerIn)
  }
  const eurcAmount = (whole: string) =>
    quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'EURC', toToken: 'USDC', fromAmount: whole })

  it('quotes every depth venue of the chain both ways at the ladder sizes, and prices from the ladder read', async () => {
    const { market, calls } = liveOn(['ETH'], () => ({ eurUsd: 1.2, ladders: { [EURC_USDC]: (amountIn) => eurcToUsdcOut(amountIn) } }))
    await market.refresh()
    const ladders = calls[0]?.ladders ?? []
    expect(ladders.map((ladder) => ladder.id)).toEqual(ETH_DEPTH_VENUES.map((name) => name.slice('venue:'.length)))
    const eurc = ladders.find((ladder) => ladder.id === EURC_USDC)
    expect(eurc?.quotedBy).toBe('QuoterV2')
    expect(eurc?.directions.map((direction) => [direction.from, direction.to])).toEqual([
      ['EURC', 'USDC'],
      ['USDC', 'EURC'],
    ])
    // USD 100 to 10,000,000 at the snapshot's prices: a USDC is a dollar.
    expect(eurc?.directions[1]?.amountsIn).toEqual(LADDER_USD.map((usd) => units(usd)))
    expect(eurc?.directions[0]?.quote).toEqual({
      kind: 'quoterV2',
      quoter: '0x61fFE014bA17989E743c5F6cB21bF9697530B21e',
      tokenIn: files.tokens.tokens.find((token) => token.chain === 'ETH' && token.symbol === 'EURC')?.address,
      tokenOut: files.tokens.tokens.find((token) => token.chain === 'ETH' && token.symbol === 'USDC')?.address,
      fee: 500,
    })
    const sizes = eurc?.directions[0]?.amountsIn ?? []
    const quote = QuoteResult.parse(await readJson(await postJson(appOn(market), '/api/x402/quote', eurcAmount('2500'))))
    expect(swapStep(quote)).toMatchObject({
      id: EURC_USDC,
      toAmount: formatAtomic(interpolated(sizes, eurcToUsdcOut, units(2_500n)), 6),
    })
    expect(market.status().isDegraded).toBe(false)
  })

  it('a ladder cut short quotes below its largest size and refuses above it (above_venue_liquidity)', async () => {
    // The pool pays nothing more past 5,000 EURC: the ladder ends at the last size below.
    const { market } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      ladders: { [EURC_USDC]: (amountIn) => eurcToUsdcOut(amountIn < units(5_000n) ? amountIn : units(5_000n)) },
    }))
    await market.refresh()
    const app = appOn(market)
    expect((await postJson(app, '/api/x402/quote', eurcAmount('500'))).status).toBe(200)
    const refused = await postJson(app, '/api/x402/quote', eurcAmount('20000'))
    expect(refused.status).toBe(422)
    expect(await readJson(refused)).toMatchObject({ code: 'amount_out_of_range', limit: 'liquidity' })
    const catalogue = market.catalogue()
    const [from, to] = ['ETH:EURC', 'ETH:USDC'].map((key) => catalogue.tokens.get(key))
    if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error('no EURC or USDC')
    const found = findRoutes(catalogue, { from, to, amountIn: units(20_000n), slippageE18: 5n * 10n ** 15n })
    expect(found.kind === 'no_route' ? [] : found.rejected).toContainEqual({
      routeId: `${EURC_USDC}:EURC>USDC`,
      reason: 'above_venue_liquidity',
    })
  })

  it('a venue no size of which can be quoted is a gap: its routes go, with the reason in health, and the rest still quotes', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, ladders: { [EURC_USDC]: { error: 'the quote failed: execution reverted' } } }))
    await market.refresh()
    const app = appOn(market)
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string; stale: string[] }[] }).chains.find((c) => c.chain === 'ETH')?.stale).toEqual([
      `venue:${EURC_USDC}`,
    ])
    const refused = await postJson(app, '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', venues: [EURC_USDC] })
    expect(problem['detail']).toContain('no size could be quoted')
    expect(problem['detail']).toContain('execution reverted')
    expect((await postJson(app, '/api/x402/quote', usdcToUsdt)).status).toBe(200)
  })

  it('a depth venue with no quoter in feeds.json is a gap on a live chain, never priced from the snapshot', async () => {
    const { quoters: _, ...ethFeeds } = feeds.chains.ETH ?? fail()
    const withoutQuoter = { ...feeds, chains: { ...feeds.chains, ETH: ethFeeds } }
    const chain = scriptedChain(
      () => WEDNESDAY_MS,
      () => ({ eurUsd: 1.2 }),
    )
    const market = createLiveMarket({
      files,
      feeds: withoutQuoter,
      readers: { ETH: chain.read },
      refreshMs: 4000,
      clock: () => WEDNESDAY_MS,
      log: pino({ level: 'silent' }),
    })
    await market.refresh()
    expect(chain.calls[0]?.ladders).toEqual([])
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual(ETH_DEPTH_VENUES)
    const refused = await postJson(appOn(market), '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    expect((await readJson(refused))['detail']).toContain('no quoter for uniswap-v3 on ETH in manifest/feeds.json')
  })

  it('a direction with no quote is not offered, by name in health; the other still quotes', async () => {
    const { market } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      ladders: { [EURC_USDC]: (amountIn, from) => (from === 'USDC' ? 0n : eurcToUsdcOut(amountIn)) },
    }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual([`venue:${EURC_USDC}:USDC>EURC`])
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.reasons).toEqual({ [`venue:${EURC_USDC}:USDC>EURC`]: 'no more' })
    expect(market.status().isDegraded).toBe(true)
    const edges = market.catalogue().edgesFrom
    expect((edges.get('ETH:USDC') ?? []).some((edge) => edge.venue.id === EURC_USDC)).toBe(false)
    expect((edges.get('ETH:EURC') ?? []).some((edge) => edge.venue.id === EURC_USDC)).toBe(true)
  })
})

describe('KES from Mento’s SortedOracles on Celo', () => {
  it('prices KES from the oracle’s median at the block read, in the same plan, and says where it came from', async () => {
    const { market, calls } = liveOn(['CEL'], () => ({ eurUsd: 1.2, kesUsd: 0.0081 }))
    await market.refresh()
    expect(calls[0]?.oracles).toEqual([
      {
        id: 'oracle:KES',
        address: '0xefB84935239dAcdecF7c5bA76d8dE40b077B7b33',
        rateFeedId: '0xbAcEE37d31b9f022Ef5d232B9fD53F05a531c169',
        maxAgeSec: 900,
      },
    ])
    expect(market.catalogue().fxUsdE18.KES).toBe(81n * 10n ** 14n)
    expect(market.status().currencies).toContainEqual({ currency: 'KES', source: 'rpc', chain: 'CEL', block: expect.any(String) })
  })

  it('a median older than its maximum age is a gap for KES, with the reason', async () => {
    const { market } = liveOn(['CEL'], () => ({ eurUsd: 1.2, kesUpdatedAgoSec: 901 }))
    await market.refresh()
    const kes = market.status().currencies.find((entry) => entry.currency === 'KES')
    expect(kes?.stale).toBe('no fresh KES/USD feed (CEL Mento SortedOracles KES/USD last updated 901 s ago (max age 900 s))')
    expect(market.status().isDegraded).toBe(true)
    expect(market.catalogue().gaps?.currencies.has('KES')).toBe(true)
  })

  it('a rate upside down (KES per USD) is refused, not used: it is more than twice the snapshot’s', async () => {
    const { market } = liveOn(['CEL'], () => ({ eurUsd: 1.2, kesUsd: 129.2 }))
    await market.refresh()
    expect(market.status().currencies.find((entry) => entry.currency === 'KES')?.stale).toContain(
      "is more than 2× away from the snapshot's 0.00774: check the rate feed id and which way round it quotes",
    )
    expect(market.catalogue().gaps?.currencies.has('KES')).toBe(true)
  })
})

describe('LayerZero messaging fees from quoteSend, per lane', () => {
  const TAXI = 'stargate-usdc-taxi'
  /** The messaging fee the catalogue charges on one lane, or undefined when the lane is not offered. */
  const laneFeeOf = (market: LiveMarket, id: string, lane: string): bigint | undefined =>
    market
      .catalogue()
      .lanes.get(lane)
      ?.find((candidate) => candidate.bridge.id === id)?.messagingFeeUsdE18

  it('plans every lane leaving the chain, and charges each lane what its own quoteSend asks, in USD at the native price', async () => {
    // 0.0005 ETH at 3,000 USD: 1.50 USD to Arbitrum; USDT0's lanes ask 0.03 USD, the others 0.30.
    const { market, calls } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      messagingFeeWei: (bridgeId, to) =>
        bridgeId === TAXI && to === 'ARB' ? 5n * 10n ** 14n : bridgeId === 'usdt0-oft' ? 10n ** 13n : 10n ** 14n,
    }))
    await market.refresh()
    const taxi = (calls[0]?.messagingFees ?? []).filter((lane) => lane.bridgeId === TAXI && lane.compose === undefined)
    expect(taxi.map((lane) => lane.to)).toEqual(['ARB', 'OPT', 'POL', 'BAS', 'BNB', 'GNO'])
    expect(taxi[0]).toEqual({
      bridgeId: TAXI,
      to: 'ARB',
      oft: '0xc026395860Db2d07ee33e05fE50ed7bD583189C7',
      dstEid: 30110,
      recipient: '0x0000000000000000000000001a44076050125825900e736c501f859c50fE728c',
      amountLD: 1_000n * 10n ** 6n,
      oftCmd: '0x',
    })
    expect((calls[0]?.messagingFees ?? []).find((lane) => lane.bridgeId === 'stargate-usdc-bus')?.oftCmd).toBe('0x00')
    // Celo's legacy-mesh endpoint only receives: no lane leaves it, but ETH's lane to it is quoted.
    const plain = (calls[0]?.messagingFees ?? []).filter((lane) => lane.compose === undefined)
    expect(plain.filter((lane) => lane.bridgeId === 'usdt0-legacy-mesh').map((lane) => lane.to)).toEqual(['ARB', 'CEL'])
    expect(laneFeeOf(market, TAXI, 'ETH>ARB')).toBe((15n * E18) / 10n)
    expect(laneFeeOf(market, TAXI, 'ETH>OPT')).toBe((3n * E18) / 10n)
    // Below the bus's snapshot 0.05 or above it, each lane is what it asks: 0.30 here.
    expect(laneFeeOf(market, 'stargate-usdc-bus', 'ETH>ARB')).toBe((3n * E18) / 10n)
    expect(laneFeeOf(market, 'usdt0-oft', 'ETH>ARB')).toBe((3n * E18) / 100n)
    // Lanes leaving a chain not read live keep the bridge's snapshot figure (0.30 and 0.20), and so does the bridge.
    expect(laneFeeOf(market, TAXI, 'ARB>ETH')).toBe((3n * E18) / 10n)
    expect(laneFeeOf(market, 'usdt0-oft', 'ARB>ETH')).toBe((2n * E18) / 10n)
    expect(market.catalogue().bridges.find((bridge) => bridge.id === TAXI)?.messagingFeeUsdE18).toBe((3n * E18) / 10n)
    expect(market.status().isDegraded).toBe(false)
  })

  it('a route over a lane is charged that lane’s fee: its source cost, and the msg.value its transaction carries', async () => {
    const { market } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      messagingFeeWei: (bridgeId, to) => (bridgeId === TAXI && to === 'ARB' ? 5n * 10n ** 14n : 10n ** 14n),
    }))
    await market.refresh()
    const catalogue = market.catalogue()
    const [from, to] = ['ETH:USDC', 'ARB:USDC'].map((key) => catalogue.tokens.get(key))
    if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error('no USDC')
    const found = findRoutes(catalogue, { from, to, amountIn: 10_000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const taxi = found.viable.find((priced) => priced.route.bridge?.bridge.id === TAXI && priced.route.sourceSwaps.length === 0)
    if (taxi === undefined) throw new Error('the taxi is not viable ETH to ARB')
    expect(taxi.messagingFeeUsdE18).toBe((15n * E18) / 10n)
    const sized = sizeRoute(catalogue, taxi.route, taxi.amountIn, found.amounts.toAmount)
    if (sized === undefined) throw new Error('not sized')
    const built = buildRouteTransaction({
      catalogue,
      routerOn: () => routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e'),
      sized,
      amounts: found.amounts,
      slippageE18: 5n * 10n ** 15n,
      sender: '0x1111111111111111111111111111111111111111',
      recipient: '0x2222222222222222222222222222222222222222',
      ref: `0x${'ab'.repeat(32)}`,
      nowSec: Math.floor(WEDNESDAY_MS / 1000),
    })
    if (!built.ok) throw new Error(built.detail)
    // USD 1.50 back into wei at the native price read (3,000): exactly the 0.0005 ETH the lane's quoteSend asked.
    // The fee the lane asked, plus the 20% headroom LayerZero refunds when not used (buildRouteTransaction.ts).
    expect(BigInt(built.transactionRequest.value)).toBe((5n * 10n ** 14n * 12n) / 10n)
  })

  it('with every source chain live, each lane is what it asks, however far below the snapshot’s', async () => {
    const sources: ChainCode[] = ['ETH', 'ARB', 'OPT', 'POL', 'BAS', 'BNB', 'GNO']
    const { market } = liveOn(sources, () => ({ eurUsd: 1.2, messagingFeeWei: () => 10n ** 13n }))
    await market.refresh()
    // 10^13 wei at 3,000 USD: 0.03 USD.
    for (const lane of ['ETH>ARB', 'ARB>ETH', 'GNO>BNB']) expect(laneFeeOf(market, TAXI, lane)).toBe((3n * E18) / 100n)
  })

  it('a lane whose quote fails is taken out and named in health, never charged the snapshot’s fee', async () => {
    const error = 'stargate-usdc-taxi ETH → ARB (0xc026395860Db2d07ee33e05fE50ed7bD583189C7): quoteSend() failed: NoPeer'
    const { market } = liveOn(['ETH', 'ARB', 'OPT', 'POL', 'BAS', 'BNB', 'GNO'], () => ({
      eurUsd: 1.2,
      messagingFeeWei: (bridgeId, to, isCompose) => (bridgeId === TAXI && to === 'ARB' && !isCompose ? { error } : 10n ** 13n),
    }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')?.stale).toEqual([`bridge:${TAXI}:ETH>ARB`])
    expect(market.status().isDegraded).toBe(true)
    expect(laneFeeOf(market, TAXI, 'ETH>ARB')).toBeUndefined()
    expect(market.catalogue().gaps?.lanes.get(`${TAXI}:ETH>ARB`)).toBe(`its messaging fee could not be quoted at block 1001: ${error}`)
    // The other lanes of the bridge, and the other bridges on this lane, still carry.
    expect(laneFeeOf(market, TAXI, 'ETH>OPT')).toBe((3n * E18) / 100n)
    expect(laneFeeOf(market, 'stargate-usdc-bus', 'ETH>ARB')).toBe((3n * E18) / 100n)
  })

  it('a request only a lane whose quote failed could serve is 503 market_unavailable naming the lane and why', async () => {
    // Only Stargate reaches Gnosis, and only its taxi carries the swap to EURe on arrival.
    const error = 'stargate-usdc-taxi ETH → GNO: quoteSend() failed: NoPeer'
    const { market } = liveOn(['ETH'], () => ({
      eurUsd: 1.2,
      messagingFeeWei: (bridgeId, to, isCompose) => (bridgeId === TAXI && to === 'GNO' && !isCompose ? { error } : 10n ** 13n),
    }))
    await market.refresh()
    const refused = await postJson(
      appOn(market),
      '/api/x402/quote',
      quoteBody({ fromChain: 'ETH', toChain: 'GNO', fromToken: 'USDC', toToken: 'EURe', fromAmount: '1000' }),
    )
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('15')
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], currencies: [], venues: [], lanes: [`${TAXI}:ETH>GNO`] })
    expect(problem['detail']).toContain(`${TAXI}:ETH>GNO: its messaging fee could not be quoted at block 1001: ${error}`)
    const health = await readJson(await appOn(market).request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'ETH')).toMatchObject({
      stale: [`bridge:${TAXI}:ETH>GNO`],
    })
  })
})

describe('Arbitrum’s L1 gas prices, which size its gas limits', () => {
  it('the prices and minimum base fee ArbGasInfo answers size the L1 part of every gas limit built on ARB', async () => {
    const { market } = liveOn(['ARB'], () => ({ eurUsd: 1.2, l1FeeWei: 3n * 10n ** 12n }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ARB')?.stale).toEqual([])
    const arb = market.catalogue().chains.get('ARB')
    expect(arb?.l1GasPrices).toEqual({ perTxWei: 3n * 10n ** 12n, perByteWei: 0n, minBaseFeeWei: 20_000_000n })
    // The fee itself is still charged once, in USD: only the gas limit grows.
    expect(arb?.l1FeeUsdE18).toBe(3n * 10n ** 12n * 3000n)
    // 3·10^12 wei over a 0.02 gwei floor: 150,000 units, with the 30% margin on top of the execution estimate.
    const [from, to] = ['ARB:USDC', 'ARB:USDT'].map((key) => market.catalogue().tokens.get(key))
    if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error('no ARB tokens')
    const found = findRoutes(market.catalogue(), { from, to, amountIn: 10n ** 9n, slippageE18: 5n * 10n ** 15n })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const priced = found.ranked.BALANCED
    expect(priced.gasLimit).toBe(withGasMargin(market.catalogue(), priced.sourceGasUnits + 150_000n))
  })

  it('a read without them makes ARB stale (l1-fee): no gas limit is sized from a guess', async () => {
    const { market } = liveOn(['ARB'], () => ({ eurUsd: 1.2, arbitrumPricesMissing: true }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ARB')?.stale).toEqual(['l1-fee'])
    expect(market.catalogue().gaps?.chains.get('ARB')).toBe('the L1 gas prices were not read at block 1001')
  })

  it('a chain with no RPC sizes them from the snapshot', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2 }))
    await market.refresh()
    expect(market.catalogue().chains.get('ARB')?.l1GasPrices).toEqual(compileCatalogue(files).chains.get('ARB')?.l1GasPrices)
    expect(market.catalogue().chains.get('ARB')?.l1GasPrices?.minBaseFeeWei).toBe(10_000_000n)
  })
})

function fail(): never {
  throw new Error('no ETH feeds')
}
