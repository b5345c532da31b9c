import { ceilDiv, E18, pow10 } from './decimal.ts'
import type { Catalogue, Token } from './types.ts'

const BPS = 10_000n

/** What the user is promised and charged for an input, independent of the route that will deliver it. */
export type QuoteAmounts = {
  /** floor(amountIn × price(from) / price(to) × (1 − fee)), in the destination token's atomic units. */
  toAmount: bigint
  /** floor(toAmount × (1 − slippage)). */
  toAmountMin: bigint
  /** The all-in fee in the source token, rounded up: what we charge. */
  feeAmount: bigint
}

/**
 * DESIGN 3: the user's output is the oracle value of the input less the 0.5% all-in fee, rounded down once at the
 * end; the route's real costs come out of that fee, never out of the user's amount.
 */
export function quoteAmounts(catalogue: Catalogue, from: Token, to: Token, amountIn: bigint, slippageE18: bigint): QuoteAmounts {
  const { feeBps } = catalogue.pricing
  const numerator = amountIn * from.priceUsdE18 * (BPS - feeBps) * pow10(to.decimals)
  const denominator = to.priceUsdE18 * BPS * pow10(from.decimals)
  const toAmount = numerator / denominator
  return {
    toAmount,
    toAmountMin: (toAmount * (E18 - slippageE18)) / E18,
    feeAmount: ceilDiv(amountIn * feeBps, BPS),
  }
}
