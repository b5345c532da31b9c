import { ceilDiv, pow10 } from './decimal.ts'
import { solidlyStableGetAmountOut } from './solidlyStable.ts'
import { stableSwapGetDy } from './stableSwap.ts'
import { ladderKey, type QuoteLadder, type SwapEdge } from './types.ts'

const PPM = 1_000_000n

/**
 * Output of one swap edge for `amountIn` atomic units, in atomic units of the output token, rounded down.
 * Depth venues are priced as a constant product over virtual reserves worth `depthUsd` on each side, anchored on
 * the snapshot's oracle prices: exact, monotone, and never more than the oracle rate. Their fee rounds up.
 */
export function swapOut(edge: SwapEdge, amountIn: bigint): bigint {
  if (amountIn <= 0n) return 0n
  const { pricing } = edge.venue
  switch (pricing.model) {
    case 'stableswap':
      return stableSwapGetDy(pricing.pool, edge.i, edge.j, amountIn)
    case 'solidlyStable':
      return solidlyStableGetAmountOut(pricing.pool, edge.i === 0 ? 0 : 1, amountIn)
    case 'depth': {
      const reserveIn = (pricing.depthUsdE18 * pow10(edge.from.decimals)) / edge.from.priceUsdE18
      const reserveOut = (pricing.depthUsdE18 * pow10(edge.to.decimals)) / edge.to.priceUsdE18
      const gross = (reserveOut * amountIn) / (reserveIn + amountIn)
      return gross - ceilDiv(gross * edge.venue.feePpm, PPM)
    }
    case 'ladder': {
      const ladder = pricing.ladders.get(ladderKey(edge.i, edge.j))
      return ladder === undefined ? 0n : ladderOut(ladder, amountIn)
    }
  }
}

/**
 * Output of a quote ladder for `amountIn`, rounded down: linear between the points around it (from (0, 0) below the
 * first), which for a venue's concave output never promises more than the venue quoted; 0 beyond the largest point,
 * where nothing was quoted (`exceedsLadder` tells why).
 */
export function ladderOut(ladder: QuoteLadder, amountIn: bigint): bigint {
  const { amountsIn, amountsOut } = ladder
  let k = 0
  while (k < amountsIn.length && (amountsIn[k] as bigint) < amountIn) k += 1
  if (k === amountsIn.length) return 0n
  const upperIn = amountsIn[k] as bigint
  const upperOut = amountsOut[k] as bigint
  if (upperIn === amountIn) return upperOut
  const lowerIn = k === 0 ? 0n : (amountsIn[k - 1] as bigint)
  const lowerOut = k === 0 ? 0n : (amountsOut[k - 1] as bigint)
  return lowerOut + ((upperOut - lowerOut) * (amountIn - lowerIn)) / (upperIn - lowerIn)
}

/** Whether `amountIn` is beyond the largest size the edge's venue was quoted at (a live ladder quotes nothing there). */
export function exceedsLadder(edge: SwapEdge, amountIn: bigint): boolean {
  const { pricing } = edge.venue
  if (pricing.model !== 'ladder') return false
  const largest = pricing.ladders.get(ladderKey(edge.i, edge.j))?.amountsIn.at(-1)
  return largest === undefined || amountIn > largest
}

/** USD value of `amount` atomic units of a token at the snapshot price, 18-decimal fixed point, rounded down. */
export function usdValue(token: { decimals: number; priceUsdE18: bigint }, amount: bigint): bigint {
  return (amount * token.priceUsdE18) / pow10(token.decimals)
}

/** Atomic units of a token worth `usdE18`, rounded up (a cost taken from an amount). */
export function tokenAmountForUsd(token: { decimals: number; priceUsdE18: bigint }, usdE18: bigint): bigint {
  return ceilDiv(usdE18 * pow10(token.decimals), token.priceUsdE18)
}
