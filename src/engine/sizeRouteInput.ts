import { ceilDiv } from './decimal.ts'
import type { CandidateRoute } from './route.ts'
import { type SwapAt, simulateRoute } from './simulateRoute.ts'
import { swapOut } from './swapOut.ts'
import type { Catalogue } from './types.ts'

/**
 * DESIGN 3: the router runs through the route only the input needed to deliver `toAmount`; the rest of the input
 * is our margin. Returns the least input (at most `amountIn`) whose simulated output reaches `toAmount`, or
 * `amountIn` when even the whole input falls short. Swaps are priced by `swapAt` (simulateRoute).
 *
 * Output is monotone but stepped where decimals shrink (18 → 6) or rates are coarse, so a secant step alone can
 * crawl along a flat step; secant and bisection steps alternate, which halves the bracket at least every other
 * simulation and ends on the exact least input.
 */
export function sizeRouteInput(
  catalogue: Catalogue,
  route: CandidateRoute,
  amountIn: bigint,
  toAmount: bigint,
  swapAt: SwapAt = swapOut,
): bigint {
  const output = (input: bigint): bigint => simulateRoute(catalogue, route, input, swapAt).amountOut
  const full = output(amountIn)
  if (full < toAmount || full === 0n) return amountIn
  // Invariant: output(low) < toAmount <= output(high).
  let low = 0n
  let high = amountIn
  let guess = ceilDiv(amountIn * toAmount, full)
  for (let step = 0; high - low > 1n; step += 1) {
    const isSecantStep = step % 2 === 0
    if (!isSecantStep || guess <= low || guess >= high) guess = low + (high - low) / 2n
    const out = output(guess)
    if (out >= toAmount) {
      high = guess
      guess = out > 0n ? guess - ((out - toAmount) * guess) / out : low
    } else {
      low = guess
      guess = out > 0n ? guess + ceilDiv((toAmount - out) * guess, out) : high
    }
  }
  return high
}
