import { E18 } from './decimal.ts'
import type { PricedRoute } from './route.ts'
import type { Catalogue } from './types.ts'

export const RANKINGS = ['FASTEST', 'BALANCED', 'CHEAPEST'] as const
export type Ranking = (typeof RANKINGS)[number]
export type RankedRoutes = Readonly<Record<Ranking, PricedRoute>>

/** The route's whole cost to the user's side: real costs plus the signer's source-chain gas and fees, in USD. */
export function totalCostUsdE18(priced: PricedRoute): bigint {
  return priced.realCostUsdE18 + priced.sourceCostUsdE18
}

function compare(a: bigint | number, b: bigint | number): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * DESIGN 4 ranking over viable routes: FASTEST has the least p50 duration, CHEAPEST the least total cost in USD,
 * BALANCED the least totalCostBps + λ·p95Minutes with λ from the catalogue. Ties fall to cost, then speed, then id,
 * so the same snapshot and request always give the same answer.
 */
export function rankRoutes(catalogue: Catalogue, routes: readonly PricedRoute[], amountUsdE18: bigint): RankedRoutes {
  const first = routes[0]
  if (!first) throw new RangeError('rankRoutes needs at least one route')
  const lambda = catalogue.pricing.balancedLambdaBpsPerMinuteE18
  // Score in bps × 1e18: cost share of the amount, plus λ bps for each p95 minute.
  const balancedScore = (route: PricedRoute): bigint =>
    (totalCostUsdE18(route) * 10_000n * E18) / (amountUsdE18 > 0n ? amountUsdE18 : 1n) + (lambda * BigInt(route.durationP95Sec)) / 60n
  const best = (order: (a: PricedRoute, b: PricedRoute) => number): PricedRoute =>
    routes.reduce((winner, route) => (order(route, winner) < 0 ? route : winner), first)
  const byId = (a: PricedRoute, b: PricedRoute): number => (a.route.id < b.route.id ? -1 : a.route.id > b.route.id ? 1 : 0)
  return {
    FASTEST: best((a, b) => compare(a.durationP50Sec, b.durationP50Sec) || compare(totalCostUsdE18(a), totalCostUsdE18(b)) || byId(a, b)),
    CHEAPEST: best((a, b) => compare(totalCostUsdE18(a), totalCostUsdE18(b)) || compare(a.durationP50Sec, b.durationP50Sec) || byId(a, b)),
    BALANCED: best((a, b) => compare(balancedScore(a), balancedScore(b)) || byId(a, b)),
  }
}
