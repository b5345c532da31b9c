import { pow10 } from './decimal.ts'

/**
 * Solidly / Velodrome v2 / Aerodrome stable-pool maths from the invariant f(x, y) = x³y + y³x ≥ k, with both
 * reserves normalised to 18 decimals. f is evaluated exactly in bigint (no 1e18 truncation inside k), so the
 * answer is the largest output that keeps f(x', y') ≥ f(x, y).
 */

export type SolidlyStablePool = {
  /** Atomic units of token 0 and token 1. */
  reserves: readonly [bigint, bigint]
  decimals: readonly [number, number]
  /** Fee on the input in parts per million (Velodrome's 5 bps = 500). */
  feePpm: bigint
}

const MAX_ITERATIONS = 255
const PPM = 1_000_000n

/** Output in atomic units of the other token for amountIn atomic units of token i, after the input fee. */
export function solidlyStableGetAmountOut(pool: SolidlyStablePool, i: 0 | 1, amountIn: bigint): bigint {
  if (i !== 0 && i !== 1) throw new RangeError(`Solidly token index must be 0 or 1, got ${String(i)}`)
  if (amountIn < 0n) throw new RangeError(`Solidly amountIn must be non-negative, got ${amountIn}`)
  if (pool.feePpm < 0n || pool.feePpm >= PPM) {
    throw new RangeError(`Solidly feePpm must be in [0, 1000000), got ${pool.feePpm}`)
  }
  const o = i === 0 ? 1 : 0
  const reserveIn = pool.reserves[i]
  const reserveOut = pool.reserves[o]
  if (reserveIn <= 0n || reserveOut <= 0n) {
    throw new RangeError(`Solidly reserves must be positive, got ${pool.reserves[0]} and ${pool.reserves[1]}`)
  }
  const scaleIn = decimalsScale(pool.decimals[i])
  const scaleOut = decimalsScale(pool.decimals[o])
  if (amountIn === 0n) return 0n
  // The pool keeps the fee out of the invariant and rounds the fee down, in the trader's favour.
  const inAfterFee = amountIn - (amountIn * pool.feePpm) / PPM
  const x0 = reserveIn * scaleIn
  const y0 = reserveOut * scaleOut
  const x1 = x0 + inAfterFee * scaleIn
  const y1 = solveY(x1, x0 * y0 * (x0 * x0 + y0 * y0), y0)
  // Floor again on the way back to atomic units, so the pool always keeps the remainder.
  return (y0 - y1) / scaleOut
}

function decimalsScale(decimals: number): bigint {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 18) {
    throw new RangeError(`Solidly decimals must be an integer in [0, 18], got ${decimals}`)
  }
  return pow10(18 - decimals)
}

/**
 * The smallest integer y with x³y + xy³ ≥ k, by Newton from yStart (which must satisfy it). f is increasing and
 * convex in y, so a floored Newton step from above never overshoots the root; the last wei is settled by hand.
 */
function solveY(x: bigint, k: bigint, yStart: bigint): bigint {
  const x3 = x * x * x
  let y = yStart
  for (let it = 0; it < MAX_ITERATIONS; it++) {
    const excess = x3 * y + x * y * y * y - k
    const step = excess / (x3 + 3n * x * y * y)
    if (step === 0n) {
      // Within about a wei of the root: walk down while the invariant still holds.
      while (y > 1n && x3 * (y - 1n) + x * (y - 1n) ** 3n >= k) y -= 1n
      return y
    }
    y -= step
  }
  throw new RangeError(`Solidly y did not converge in ${MAX_ITERATIONS} iterations`)
}
