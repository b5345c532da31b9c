import type { ChainCode, CorridorEntry } from '../schemas/catalogue.ts'
import { candidateRoutes, unbuildableSteps } from './candidateRoutes.ts'
import { corridorPairs, type TokenPair } from './corridorPairs.ts'
import { pow10 } from './decimal.ts'
import { simulateRoute } from './simulateRoute.ts'
import { usdValue } from './swapOut.ts'
import type { Catalogue } from './types.ts'
import { viableRange } from './viableRange.ts'

/** Why a corridor cell is not served: a stable reason and a sentence with the figures (no file names). */
export type NotServed = {
  reason: 'no_pair' | 'not_buildable' | 'cost_exceeds_fee' | 'no_route'
  detail: string
  /** cost_exceeds_fee: the cheapest route's real cost at the reference amount, against what the fee earns. */
  costBps?: number
  feeBps?: number
}

export type CellStatus = { isServed: true; pairs: readonly TokenPair[] } | ({ isServed: false } & NotServed)

/** Whole tokens of the source a cost is stated at (the corridors' reference amount). */
const REFERENCE_UNITS = 1000n

/** The real cost in basis points of the cheapest route of a pair at the reference amount; undefined without a route. */
function cheapestCostBps(catalogue: Catalogue, pair: TokenPair): number | undefined {
  const amountIn = REFERENCE_UNITS * pow10(pair.from.decimals)
  const inUsd = usdValue(pair.from, amountIn)
  if (inUsd === 0n) return undefined
  let best: bigint | undefined
  for (const route of candidateRoutes(catalogue, pair.from, pair.to)) {
    const cost = simulateRoute(catalogue, route, amountIn).realCostUsdE18
    if (best === undefined || cost < best) best = cost
  }
  // Rounded up: a cost we state to refuse a route must not understate it.
  return best === undefined ? undefined : Number((best * 10_000n + inUsd - 1n) / inUsd)
}

/**
 * Why no amount of `from` can be served into `to`, with the figures: steps no transaction can be built through, or
 * routes whose real cost exceeds the 0.5% fee at every amount (never sold at a loss), or no venue or bridge at all.
 */
export function pairNotServed(catalogue: Catalogue, pairs: readonly TokenPair[], what: string): NotServed {
  const feeBps = Number(catalogue.pricing.feeBps)
  const costs = pairs.map((pair) => cheapestCostBps(catalogue, pair)).filter((cost): cost is number => cost !== undefined)
  if (costs.length > 0) {
    const costBps = Math.min(...costs)
    return {
      reason: 'cost_exceeds_fee',
      detail: `${what} costs about ${costBps} bps in bridge and exchange fees, more than the ${feeBps} bps the 0.5% fee covers; SwapEazi does not sell at a loss`,
      costBps,
      feeBps,
    }
  }
  const gaps = pairs.flatMap((pair) => unbuildableSteps(catalogue, pair.from, pair.to))
  if (gaps.length > 0) {
    const details = [...new Set(gaps.map((gap) => gap.gap.detail))]
    return { reason: 'not_buildable', detail: `${what} cannot be built yet: ${details.slice(0, 3).join('; ')}` }
  }
  return { reason: 'no_route', detail: `no venue or bridge joins ${what}` }
}

/**
 * Whether a corridor row is served on a chain (DESIGN 4, 7.20), and when not, why (`pairNotServed`). A row is served
 * when any of its pairs has a viable amount range.
 */
export function cellStatus(catalogue: Catalogue, row: CorridorEntry, chain: ChainCode): CellStatus {
  const pairs = corridorPairs(catalogue, row, chain)
  if (pairs.length === 0)
    return { isServed: false, reason: 'no_pair', detail: `${row.from} and ${row.to} are not both reachable on or from ${chain}` }
  const served = pairs.filter((pair) => viableRange(catalogue, pair.from, pair.to) !== undefined)
  if (served.length > 0) return { isServed: true, pairs: served }
  return { isServed: false, ...pairNotServed(catalogue, pairs, `${row.from} to ${row.to} on ${chain}`) }
}
