import { candidateRoutes } from './candidateRoutes.ts'
import { checkViability } from './checkViability.ts'
import { type QuoteAmounts, quoteAmounts } from './quoteAmounts.ts'
import { type RankedRoutes, rankRoutes } from './rankRoutes.ts'
import type { CandidateRoute, NotViableReason, PricedRoute } from './route.ts'
import { simulateRoute } from './simulateRoute.ts'
import { usdValue } from './swapOut.ts'
import type { Catalogue, Token } from './types.ts'

export type FindRoutesParameters = {
  from: Token
  to: Token
  amountIn: bigint
  slippageE18: bigint
  /**
   * Where some viable routes cannot be built as well as others (a swap on arrival on a chain without a router of the
   * operator's own): those it says false of are offered only when no other route is viable.
   */
  isPreferred?: (route: CandidateRoute) => boolean
}

/** Why a candidate was not offered, kept as data for diagnostics. */
export type Rejection = { routeId: string; reason: NotViableReason }

export type FindRoutesReturnType =
  /** No route shape joins the two tokens at any amount. */
  | { kind: 'no_route' }
  /** Routes exist but none is viable for this amount (too small for fixed costs, or too large for the venues). */
  | { kind: 'not_viable'; amounts: QuoteAmounts; candidates: number; rejected: readonly Rejection[] }
  | {
      kind: 'routes'
      amounts: QuoteAmounts
      amountUsdE18: bigint
      viable: readonly PricedRoute[]
      ranked: RankedRoutes
      candidates: number
      rejected: readonly Rejection[]
    }

/**
 * Finds and prices every route between two tokens for one amount, drops those that cannot deliver the promised
 * output, and ranks the rest. Pure: same catalogue and parameters, same answer.
 */
export function findRoutes(catalogue: Catalogue, parameters: FindRoutesParameters): FindRoutesReturnType {
  const { from, to, amountIn, slippageE18 } = parameters
  const candidates = candidateRoutes(catalogue, from, to)
  if (candidates.length === 0) return { kind: 'no_route' }
  const amounts = quoteAmounts(catalogue, from, to, amountIn, slippageE18)
  let viable: PricedRoute[] = []
  const rejected: Rejection[] = []
  for (const route of candidates) {
    const priced = simulateRoute(catalogue, route, amountIn)
    // A minimum of 0 promises nothing a transaction could check: the amount is refused as one that leaves nothing.
    const reason = amounts.toAmountMin <= 0n ? 'no_output' : checkViability(priced, amounts.toAmount, catalogue.pricing.feeBps)
    if (reason) rejected.push({ routeId: route.id, reason })
    else viable.push(priced)
  }
  if (viable.length === 0) return { kind: 'not_viable', amounts, candidates: candidates.length, rejected }
  const { isPreferred } = parameters
  const preferred = isPreferred === undefined ? viable : viable.filter((priced) => isPreferred(priced.route))
  if (preferred.length > 0 && preferred.length < viable.length) viable = preferred
  const amountUsdE18 = usdValue(from, amountIn)
  return {
    kind: 'routes',
    amounts,
    amountUsdE18,
    viable,
    ranked: rankRoutes(catalogue, viable, amountUsdE18),
    candidates: candidates.length,
    rejected,
  }
}
