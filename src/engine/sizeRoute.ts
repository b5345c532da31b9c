import type { CandidateRoute, PricedRoute } from './route.ts'
import { type SwapAt, simulateRoute } from './simulateRoute.ts'
import { sizeRouteInput } from './sizeRouteInput.ts'
import { swapOut } from './swapOut.ts'
import type { Catalogue } from './types.ts'

/** A route priced at the input it will actually run, beside the margin the router keeps (amountIn = both). */
export type SizedRoute = {
  route: CandidateRoute
  /** What runs through the route: the least input that delivers toAmount. */
  routedAmount: bigint
  /** What the router sends to the treasury. */
  margin: bigint
  /** The route priced at `routedAmount`: the step amounts every call of the transaction is built from. */
  sized: PricedRoute
}

/**
 * Sizes the chosen route once (DESIGN 3): the input that delivers `toAmount`, and the route priced at it. The
 * transaction encoders take this as it is and price nothing themselves; undefined when the route cannot deliver
 * `toAmount` from `amountIn` (the quote was made on other figures, or a batch's earlier legs took the pools: `swapAt`).
 */
export function sizeRoute(
  catalogue: Catalogue,
  route: CandidateRoute,
  amountIn: bigint,
  toAmount: bigint,
  swapAt: SwapAt = swapOut,
): SizedRoute | undefined {
  const routedAmount = sizeRouteInput(catalogue, route, amountIn, toAmount, swapAt)
  const sized = simulateRoute(catalogue, route, routedAmount, swapAt)
  if (sized.amountOut < toAmount) return undefined
  return { route, routedAmount, margin: amountIn - routedAmount, sized }
}
