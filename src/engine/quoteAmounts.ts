import { ceilDiv, E18, pow10 } from './decimal.ts'
import type { Catalogue, Token } from './types.ts'

const BPS = 10_000n

/** What the user is promised and charged for an input, independent of the route that will deliver it. */
export type QuoteAmounts = {
  /** floor((amountIn − feeAmount) × price(from) / price(to)), in the destination token's atomic units. */
  toAmount: bigint
  /** floor(toAmount × (1 − slippage)). */
  toAmountMin: bigint
  /** The all-in fee in the source token, ceil(amountIn × fee): what we charge. */
  feeAmount: bigint
}

/**
 * DESIGN 3: the user's output is the oracle value of the input less the 0.5% all-in fee, rounded down; the route's
 * real costs come out of that fee, never out of the user's amount. The fee is charged in whole atomic units of the
 * source token (rounded up), so what is promised is the value of what is left once it is taken: a transaction can
 * only run whole units through its route, and a promise of a fraction of a unit it cannot run is one it cannot keep.
 */
export function quoteAmounts(catalogue: Catalogue, from: Token, to: Token, amountIn: bigint, slippageE18: bigint): QuoteAmounts {
  const feeAmount = ceilDiv(amountIn * catalogue.pricing.feeBps, BPS)
  const numerator = (amountIn - feeAmount) * from.priceUsdE18 * pow10(to.decimals)
  const denominator = to.priceUsdE18 * pow10(from.decimals)
  const toAmount = numerator / denominator
  return { toAmount, toAmountMin: (toAmount * (E18 - slippageE18)) / E18, feeAmount }
}

/**
 * The least input whose quote promises something at this slippage (toAmountMin of at least one atomic unit): below
 * it the fee, rounded up, leaves nothing, or a minimum that rounds to 0 and so protects nothing. Undefined when no
 * input up to `ceiling` does.
 */
export function smallestQuotableAmount(
  catalogue: Catalogue,
  from: Token,
  to: Token,
  slippageE18: bigint,
  ceiling: bigint,
): bigint | undefined {
  const isQuotable = (amountIn: bigint): boolean => quoteAmounts(catalogue, from, to, amountIn, slippageE18).toAmountMin > 0n
  if (!isQuotable(ceiling)) return undefined
  // Invariant: !isQuotable(low) and isQuotable(high); toAmountMin is monotone in the input.
  let low = 0n
  let high = ceiling
  while (high - low > 1n) {
    const middle = low + (high - low) / 2n
    if (isQuotable(middle)) high = middle
    else low = middle
  }
  return high
}
