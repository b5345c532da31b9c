import { E18, pow10 } from './decimal.ts'
import type { Catalogue, Token } from './types.ts'

/** The most a uint256 holds: an amount, a sum of amounts or a calldata word beyond it cannot exist on chain. */
export const MAX_UINT256 = 2n ** 256n - 1n

/**
 * USD 10^12 (18-decimal fixed point): more than any stablecoin's whole supply has been (the largest, USDT, is under
 * USD 2·10^11) and more than all of them together. docs/money.md explains the bound.
 */
const MAX_AMOUNT_USD_E18 = 10n ** 12n * E18

/** Far past any currency's bound; stops the search should a rate ever be 0. */
const MAX_EXPONENT = 30

const memo = new WeakMap<Pick<Catalogue, 'fxUsdE18'>, Map<string, bigint>>()

/**
 * The most whole tokens one amount may carry, so more than the token's whole supply could ever be: the largest
 * power of ten of whole tokens worth at most USD 10^12 at the catalogue's rate for the token's currency. 10^12 for
 * a USD token, 10^11 for a euro token, 10^15 for a naira token.
 */
export function maxWholeTokens(catalogue: Pick<Catalogue, 'fxUsdE18'>, token: Pick<Token, 'currency'>): bigint {
  const usdE18 = catalogue.fxUsdE18[token.currency]
  let whole = 1n
  for (let exponent = 0; exponent < MAX_EXPONENT && whole * 10n * usdE18 <= MAX_AMOUNT_USD_E18; exponent += 1) whole *= 10n
  return whole
}

/** `maxWholeTokens` in the token's atomic units, which a uint256 always holds (decimals are at most 36). */
export function maxAmountIn(catalogue: Pick<Catalogue, 'fxUsdE18'>, token: Pick<Token, 'key' | 'currency' | 'decimals'>): bigint {
  let byToken = memo.get(catalogue)
  if (byToken === undefined) memo.set(catalogue, (byToken = new Map()))
  const known = byToken.get(token.key)
  if (known !== undefined) return known
  const atomic = maxWholeTokens(catalogue, token) * pow10(token.decimals)
  byToken.set(token.key, atomic)
  return atomic
}
