import { E18 } from './decimal.ts'
import type { PricedRoute } from './route.ts'
import type { Catalogue } from './types.ts'

export const RANKINGS = ['FASTEST', 'BALANCED', 'CHEAPEST'] as const
export type Ranking = (typeof RANKINGS)[number]
export type RankedRoutes = Readonly<Record<Ranking, PricedRoute>>

/** The route's whole cost: real costs (paid out of the 0.5% fee) plus the signer's source-chain gas and fees, in USD. */
export function totalCostUsdE18(priced: PricedRoute): bigint {
  return priced.realCostUsdE18 + priced.sourceCostUsdE18
}

/**
 * What the user pays beyond the fee (DESIGN 7.21): the signer's source-chain gas and any native messaging fee, in
 * USD. `toAmount` is the same on every viable route, so this, not our margin, is what makes one route cheaper for them.
 */
export function userCostUsdE18(priced: PricedRoute): bigint {
  return priced.sourceCostUsdE18
}

function compare(a: bigint | number, b: bigint | number): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function byId(a: PricedRoute, b: PricedRoute): number {
  return a.route.id < b.route.id ? -1 : a.route.id > b.route.id ? 1 : 0
}

/**
 * DESIGN 4 ranking over viable routes: FASTEST has the least p50 duration; CHEAPEST the least the user pays (source
 * gas and messaging fees, DESIGN 7.21; ties to the lesser total cost); BALANCED the least totalCostBps + λ·p95Minutes
 * with λ from the catalogue. Ties fall to cost, then speed, then id, so the same snapshot and request always give the
 * same answer.
 */
export function rankRoutes(catalogue: Catalogue, routes: readonly PricedRoute[], amountUsdE18: bigint): RankedRoutes {
  const first = routes[0]
  if (!first) throw new RangeError('rankRoutes needs at least one route')
  const lambda = catalogue.pricing.balancedLambdaBpsPerMinuteE18
  const amount = amountUsdE18 > 0n ? amountUsdE18 : 1n
  // One pass with each route's figures computed once. No closures here: the quote path runs this per request, and
  // under tsx every named function expression also pays a defineProperty for its name.
  let fastest = first
  let fastestCost = totalCostUsdE18(first)
  let cheapest = first
  let cheapestCost = fastestCost
  let cheapestUserCost = userCostUsdE18(first)
  let balanced = first
  // Score in bps × 1e18: cost share of the amount, plus λ bps for each p95 minute.
  let balancedScore = (fastestCost * 10_000n * E18) / amount + (lambda * BigInt(first.durationP95Sec)) / 60n
  for (let index = 1; index < routes.length; index++) {
    const route = routes[index] as PricedRoute
    const cost = totalCostUsdE18(route)
    if ((compare(route.durationP50Sec, fastest.durationP50Sec) || compare(cost, fastestCost) || byId(route, fastest)) < 0) {
      fastest = route
      fastestCost = cost
    }
    const userCost = userCostUsdE18(route)
    if (
      (compare(userCost, cheapestUserCost) ||
        compare(cost, cheapestCost) ||
        compare(route.durationP50Sec, cheapest.durationP50Sec) ||
        byId(route, cheapest)) < 0
    ) {
      cheapest = route
      cheapestCost = cost
      cheapestUserCost = userCost
    }
    const score = (cost * 10_000n * E18) / amount + (lambda * BigInt(route.durationP95Sec)) / 60n
    if ((compare(score, balancedScore) || byId(route, balanced)) < 0) {
      balanced = route
      balancedScore = score
    }
  }
  return { FASTEST: fastest, CHEAPEST: cheapest, BALANCED: balanced }
}
