import { ceilDiv } from './decimal.ts'
import type { CandidateRoute } from './route.ts'
import { simulateRoute } from './simulateRoute.ts'
import type { Catalogue } from './types.ts'

const MAX_STEPS = 16

/**
 * DESIGN 3: the router runs through the route only the input needed to deliver `toAmount`; the rest of the input
 * is our margin. Returns that input (at most `amountIn`), found by linear steps on the route's near-affine output
 * and confirmed by simulation, so `simulateRoute(route, result).amountOut >= toAmount` always holds.
 */
export function sizeRouteInput(catalogue: Catalogue, route: CandidateRoute, amountIn: bigint, toAmount: bigint): bigint {
  const full = simulateRoute(catalogue, route, amountIn).amountOut
  if (full < toAmount || full === 0n) return amountIn
  let low = 0n
  let high = amountIn
  let guess = ceilDiv(amountIn * toAmount, full)
  for (let step = 0; step < MAX_STEPS && high - low > 1n; step += 1) {
    if (guess <= low || guess >= high) guess = low + (high - low) / 2n
    const out = simulateRoute(catalogue, route, guess).amountOut
    if (out >= toAmount) {
      high = guess
      guess = guess - ceilDiv((out - toAmount) * guess, out > 0n ? out : 1n) + 1n
    } else {
      low = guess
      guess = guess + ceilDiv((toAmount - out) * guess, out > 0n ? out : 1n) + 1n
    }
  }
  return high
}
