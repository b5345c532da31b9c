import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { findRoutes } from '../../src/engine/findRoutes.ts'
import { rankRoutes } from '../../src/engine/rankRoutes.ts'
import type { PricedRoute } from '../../src/engine/route.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import type { Token } from '../../src/engine/types.ts'

const { catalogue, files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)

const E18 = 10n ** 18n

function token(key: string): Token {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`no token ${key}`)
  return found
}

/** λ in bps per p95 minute, read from the manifest text as a ratio. */
const LAMBDA = (() => {
  const [whole = '0', fraction = ''] = files.pricing.balancedLambdaBpsPerMinute.split('.')
  return { n: BigInt(whole + fraction), d: 10n ** BigInt(fraction.length) }
})()

const total = (p: PricedRoute): bigint => p.realCostUsdE18 + p.sourceCostUsdE18
/** What the user pays beyond the fee: source gas and messaging fees. */
const userCost = (p: PricedRoute): bigint => p.sourceCostUsdE18

/**
 * BALANCED score totalCostBps + λ·p95Minutes as an exact rational, scaled by the common denominator
 * amountUsd × 60 × λd so scores compare as integers: cost·10⁴·60·λd + λn·p95Sec·amountUsd.
 */
const balancedScaled = (p: PricedRoute, amountUsdE18: bigint): bigint =>
  total(p) * 10_000n * 60n * LAMBDA.d + LAMBDA.n * BigInt(p.durationP95Sec) * amountUsdE18

/** The routes with the least value of `key`, then their least id: the winner the design calls for. */
function winner(routes: readonly PricedRoute[], ...keys: ((p: PricedRoute) => bigint | number)[]): string {
  const sorted = [...routes].sort((a, b) => {
    for (const key of keys) {
      const [x, y] = [key(a), key(b)]
      if (x !== y) return x < y ? -1 : 1
    }
    return a.route.id < b.route.id ? -1 : a.route.id > b.route.id ? 1 : 0
  })
  return sorted[0]?.route.id ?? ''
}

describe('rankRoutes on real routes', () => {
  it('BAS USDC → POL USDC for 1,000 USDC: Across fastest and cheapest for the user (least source gas), CCTP fast balanced', () => {
    const result = findRoutes(catalogue, { from: token('BAS:USDC'), to: token('POL:USDC'), amountIn: 1_000_000_000n, slippageE18: 0n })
    if (result.kind !== 'routes') throw new Error(result.kind)
    expect(result.viable).toHaveLength(5)
    const { viable, amountUsdE18, ranked } = result
    expect(amountUsdE18).toBe(1000n * E18)

    const leastP50 = Math.min(...viable.map((p) => p.durationP50Sec))
    expect(ranked.FASTEST.durationP50Sec).toBe(leastP50)
    expect(ranked.FASTEST.route.id).toBe('across-usdc:BAS>POL')

    for (const p of viable) expect(userCost(ranked.CHEAPEST) <= userCost(p)).toBe(true)
    expect(ranked.CHEAPEST.route.id).toBe('across-usdc:BAS>POL')

    for (const p of viable) expect(balancedScaled(ranked.BALANCED, amountUsdE18) <= balancedScaled(p, amountUsdE18)).toBe(true)
    expect(ranked.BALANCED.route.id).toBe('cctp-v2-fast:BAS>POL')
  })

  it.each([
    ['BAS:USDC', 'POL:USDC', 5n],
    ['BAS:USDC', 'POL:USDC', 250_000n],
    ['ETH:USDC', 'ARB:USDT', 1000n],
    ['ETH:USDC', 'GNO:EURe', 2000n],
    ['ETH:USDC', 'ETH:USDT', 1000n],
    ['BAS:USDC', 'ETH:USDC', 50n],
    ['BAS:USDC', 'ETH:USDC', 100_000n],
    ['OPT:USDT', 'BNB:USDC', 3000n],
  ])('%s → %s for %s: each ranking is the independent minimum', (fromKey, toKey, whole) => {
    const from = token(fromKey)
    const result = findRoutes(catalogue, { from, to: token(toKey), amountIn: whole * 10n ** BigInt(from.decimals), slippageE18: 0n })
    if (result.kind !== 'routes') throw new Error(result.kind)
    const { viable, amountUsdE18, ranked } = result
    expect(ranked.FASTEST.route.id).toBe(winner(viable, (p) => p.durationP50Sec, total))
    expect(ranked.CHEAPEST.route.id).toBe(winner(viable, userCost, total, (p) => p.durationP50Sec))
    expect(ranked.BALANCED.route.id).toBe(winner(viable, (p) => balancedScaled(p, amountUsdE18)))
  })
})

describe('rankRoutes on hand-made routes: ties and trade-offs', () => {
  const real = findRoutes(catalogue, { from: token('BAS:USDC'), to: token('POL:USDC'), amountIn: 1_000_000_000n, slippageE18: 0n })
  if (real.kind !== 'routes') throw new Error(real.kind)
  const base = real.viable[0] as PricedRoute
  const AMOUNT = 1000n * E18

  /** A priced route with the given id, durations and costs (USD in 1e-4 steps to keep the arithmetic readable). */
  function make(id: string, p50: number, p95: number, realCost: bigint, sourceCost = 0n): PricedRoute {
    return {
      ...base,
      route: { ...base.route, id },
      durationP50Sec: p50,
      durationP95Sec: p95,
      realCostUsdE18: realCost,
      sourceCostUsdE18: sourceCost,
    }
  }

  const usd = (dollars: number): bigint => BigInt(Math.round(dollars * 10_000)) * 10n ** 14n

  it('uses λ = 1 bp per p95 minute', () => {
    expect(catalogue.pricing.balancedLambdaBpsPerMinuteE18).toBe(E18)
    expect(LAMBDA).toEqual({ n: 1n, d: 1n })
  })

  it('FASTEST: equal p50 goes to the cheaper route, then to the smaller id', () => {
    const routes = [make('b', 30, 60, usd(2)), make('c', 30, 60, usd(1)), make('a', 40, 60, usd(0))]
    expect(rankRoutes(catalogue, routes, AMOUNT).FASTEST.route.id).toBe('c')
    expect(rankRoutes(catalogue, [...routes].reverse(), AMOUNT).FASTEST.route.id).toBe('c')
    const tied = [make('y', 30, 60, usd(1)), make('x', 30, 90, usd(0.5), usd(0.5))]
    expect(rankRoutes(catalogue, tied, AMOUNT).FASTEST.route.id).toBe('x')
    expect(rankRoutes(catalogue, [...tied].reverse(), AMOUNT).FASTEST.route.id).toBe('x')
  })

  it('CHEAPEST: ranks by what the user pays (source gas and fees), then total cost, then p50, then id', () => {
    // toAmount is the same on every route: 'b' asks the least of the user (0.5 of source gas), though our real cost
    // on it is the highest; 'c' has the least total.
    const routes = [make('a', 10, 20, usd(1), usd(2)), make('b', 50, 60, usd(1.5), usd(0.5)), make('c', 20, 30, usd(0.5), usd(1.5))]
    expect(rankRoutes(catalogue, routes, AMOUNT).CHEAPEST.route.id).toBe('b')
    expect(rankRoutes(catalogue, [...routes].reverse(), AMOUNT).CHEAPEST.route.id).toBe('b')
    const sameGas = [make('d', 10, 20, usd(2), usd(1)), make('e', 50, 60, usd(1), usd(1))]
    expect(rankRoutes(catalogue, sameGas, AMOUNT).CHEAPEST.route.id).toBe('e')
    const tied = [make('n', 20, 30, usd(1)), make('m', 20, 90, usd(1))]
    expect(rankRoutes(catalogue, tied, AMOUNT).CHEAPEST.route.id).toBe('m')
    expect(rankRoutes(catalogue, [...tied].reverse(), AMOUNT).CHEAPEST.route.id).toBe('m')
  })

  it('BALANCED: trades cost share against p95 minutes at λ', () => {
    // On 1,000 USD: 'slow' costs 1 USD = 10 bps and waits 60 min → 70; 'quick' costs 20 bps, waits 1 min → 21.
    const routes = [make('slow', 600, 3600, usd(1)), make('quick', 30, 60, usd(2))]
    expect(rankRoutes(catalogue, routes, AMOUNT).BALANCED.route.id).toBe('quick')
    // 'thrifty' costs 0.1 USD and waits 60 min; 'pricey' costs 10 USD and waits 1 min.
    const pair = [make('thrifty', 600, 3600, usd(0.1)), make('pricey', 30, 60, usd(10))]
    // On 1,000 USD: 1 + 60 = 61 against 100 + 1 = 101.
    expect(rankRoutes(catalogue, pair, AMOUNT).BALANCED.route.id).toBe('thrifty')
    // On 100,000 USD the same dollars are a hundredth of the share: 0.01 + 60 against 1 + 1.
    expect(rankRoutes(catalogue, pair, 100_000n * E18).BALANCED.route.id).toBe('pricey')
  })

  it('BALANCED: equal scores go to the smaller id', () => {
    // 10 bps + 20 min = 30 = 20 bps + 10 min.
    const tied = [make('zeta', 60, 1200, usd(1)), make('alpha', 60, 600, usd(2))]
    expect(rankRoutes(catalogue, tied, AMOUNT).BALANCED.route.id).toBe('alpha')
    expect(rankRoutes(catalogue, [...tied].reverse(), AMOUNT).BALANCED.route.id).toBe('alpha')
  })

  it('refuses an empty list', () => {
    expect(() => rankRoutes(catalogue, [], AMOUNT)).toThrow(RangeError)
  })

  it('picks the independent minimum whatever the order of the input (property)', () => {
    const arbitraryRoute = fc.record({
      p50: fc.integer({ min: 1, max: 3600 }),
      extra: fc.integer({ min: 0, max: 3600 }),
      // Costs in steps of 0.0001 USD so score rounding in the engine cannot reorder near ties.
      realSteps: fc.bigInt({ min: 0n, max: 200_000n }),
      sourceSteps: fc.bigInt({ min: 0n, max: 50_000n }),
    })
    fc.assert(
      fc.property(fc.array(arbitraryRoute, { minLength: 1, maxLength: 8 }), fc.nat(), (specs, seed) => {
        const routes = specs.map((s, i) =>
          make(`r${String(i).padStart(2, '0')}`, s.p50, s.p50 + s.extra, s.realSteps * 10n ** 14n, s.sourceSteps * 10n ** 14n),
        )
        const shuffled = [...routes].sort((a, b) => ((a.durationP95Sec * 7919 + seed) % 97) - ((b.durationP95Sec * 7919 + seed) % 97))
        const ranked = rankRoutes(catalogue, shuffled, AMOUNT)
        expect(ranked.FASTEST.route.id).toBe(winner(routes, (p) => p.durationP50Sec, total))
        expect(ranked.CHEAPEST.route.id).toBe(winner(routes, userCost, total, (p) => p.durationP50Sec))
        expect(ranked.BALANCED.route.id).toBe(winner(routes, (p) => balancedScaled(p, AMOUNT)))
      }),
      { numRuns: 1000 },
    )
  })
})
