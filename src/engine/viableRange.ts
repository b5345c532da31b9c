import { candidateRoutes } from './candidateRoutes.ts'
import { checkViability } from './checkViability.ts'
import { quoteAmounts, smallestQuotableAmount } from './quoteAmounts.ts'
import type { CandidateRoute } from './route.ts'
import { simulateRoute } from './simulateRoute.ts'
import type { Catalogue, Token } from './types.ts'

/** The smallest and largest input, in atomic units of the source token, that some route can serve. */
export type ViableRange = { minIn: bigint; maxIn: bigint }

const MULTIPLIERS = [1n, 2n, 5n] as const
/** Grid of whole-token amounts from 10^-4 to 5·10^11: wide enough for currencies worth a thousandth of a dollar. */
const MIN_EXPONENT = -4
const MAX_EXPONENT = 11

const memo = new WeakMap<Catalogue, Map<string, ViableRange | undefined>>()

function isViable(catalogue: Catalogue, route: CandidateRoute, amountIn: bigint): boolean {
  const { toAmount } = quoteAmounts(catalogue, route.from, route.to, amountIn, 0n)
  return checkViability(simulateRoute(catalogue, route, amountIn), toAmount, catalogue.pricing.feeBps) === undefined
}

function grid(decimals: number): bigint[] {
  const points: bigint[] = []
  for (let exponent = MIN_EXPONENT; exponent <= MAX_EXPONENT; exponent += 1) {
    const shift = exponent + decimals
    if (shift < 0) continue
    for (const multiplier of MULTIPLIERS) points.push(multiplier * 10n ** BigInt(shift))
  }
  return points
}

/** Binary search for the boundary between `bad` and `good` (either order): the good amount nearest to bad. */
function boundary(catalogue: Catalogue, route: CandidateRoute, good: bigint, bad: bigint): bigint {
  let goodEnd = good
  let badEnd = bad
  while (goodEnd - badEnd > 1n || badEnd - goodEnd > 1n) {
    const middle = (goodEnd + badEnd) / 2n
    if (isViable(catalogue, route, middle)) goodEnd = middle
    else badEnd = middle
  }
  return goodEnd
}

function routeRange(catalogue: Catalogue, route: CandidateRoute, points: readonly bigint[]): ViableRange | undefined {
  const viable = points.map((amount) => isViable(catalogue, route, amount))
  const first = viable.indexOf(true)
  if (first < 0) return undefined
  const last = viable.lastIndexOf(true)
  const firstPoint = points[first] as bigint
  const lastPoint = points[last] as bigint
  const below = first > 0 ? (points[first - 1] as bigint) : 0n
  const above = points[last + 1]
  return {
    minIn: boundary(catalogue, route, firstPoint, below),
    maxIn: above === undefined ? lastPoint : boundary(catalogue, route, lastPoint, above),
  }
}

/** The span of the routes' own ranges. */
function spanOf(catalogue: Catalogue, routes: readonly CandidateRoute[], points: readonly bigint[]): ViableRange | undefined {
  let range: ViableRange | undefined
  for (const route of routes) {
    const own = routeRange(catalogue, route, points)
    if (!own) continue
    range = range
      ? { minIn: own.minIn < range.minIn ? own.minIn : range.minIn, maxIn: own.maxIn > range.maxIn ? own.maxIn : range.maxIn }
      : own
  }
  return range
}

/**
 * DESIGN 3: the smallest and largest amounts a pair can take fall out of the rule that a route never costs more
 * than the fee it earns. Scans a log grid of amounts per route and refines both edges by bisection; the pair's
 * range is the span of its routes' ranges. Undefined when no amount is viable.
 *
 * `isUsable`: only the routes it says true of count (those a deployment sells); that range is not memoised, so a
 * caller keeps it where it is asked for often.
 */
export function viableRange(
  catalogue: Catalogue,
  from: Token,
  to: Token,
  isUsable?: (route: CandidateRoute) => boolean,
): ViableRange | undefined {
  const points = grid(from.decimals)
  if (isUsable !== undefined) return spanOf(catalogue, candidateRoutes(catalogue, from, to).filter(isUsable), points)
  let cache = memo.get(catalogue)
  if (!cache) {
    cache = new Map()
    memo.set(catalogue, cache)
  }
  const key = `${from.key}>${to.key}`
  if (cache.has(key)) return cache.get(key)
  const range = spanOf(catalogue, candidateRoutes(catalogue, from, to), points)
  cache.set(key, range)
  return range
}

/**
 * The range a quote at this slippage takes: viableRange (the routes' own, at no slippage) with its least amount raised
 * to the least whose minimum is not 0 (smallestQuotableAmount). What the quote's 422, the corridor listing and probes
 * advertise, so an amount inside it is never refused for its size. Undefined when no amount is viable. `isUsable` as
 * for viableRange.
 */
export function quotableRange(
  catalogue: Catalogue,
  from: Token,
  to: Token,
  slippageE18: bigint,
  isUsable?: (route: CandidateRoute) => boolean,
): ViableRange | undefined {
  const range = viableRange(catalogue, from, to, isUsable)
  if (range === undefined) return undefined
  const quotable = smallestQuotableAmount(catalogue, from, to, slippageE18, range.maxIn) ?? range.minIn
  return quotable > range.minIn ? { minIn: quotable, maxIn: range.maxIn } : range
}
