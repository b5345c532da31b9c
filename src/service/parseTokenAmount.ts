import { formatAtomic, MAX_UINT256, maxAmountIn, parseUnitsExact, type Token } from '../engine/index.ts'
import type { FieldError } from '../schemas/problem.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

export type ParseTokenAmountReturnType =
  | { ok: true; value: bigint }
  /** 400: not an amount of this token at all (excess precision, zero, more than a uint256 holds in atomic units). */
  | { ok: false; reason: 'invalid'; error: FieldError }
  /** 422 `amount_out_of_range` (`token_supply`): an amount, but more than the token could ever hold. */
  | { ok: false; reason: 'above_max'; value: bigint; maxIn: bigint }

/**
 * A decimal amount of `token` in atomic units, bounded (DESIGN 3): excess precision, zero and anything a uint256
 * cannot hold are refused as invalid, and an amount above `maxAmountIn` (more than the token's whole supply could
 * ever be) as out of range, before any arithmetic or encoding sees it.
 */
export function parseTokenAmount(
  deps: Pick<ServiceDeps, 'catalogue'>,
  text: string,
  token: Token,
  field: string,
): ParseTokenAmountReturnType {
  const parsed = parseUnitsExact(text, token.decimals, { strict: false })
  const invalid = (message: string): ParseTokenAmountReturnType => ({ ok: false, reason: 'invalid', error: { field, message } })
  if (!parsed.ok)
    return invalid(`${token.symbol} on ${token.chain} has ${token.decimals} decimals; send at most ${token.decimals} fraction digits`)
  if (parsed.value === 0n) return invalid('must be greater than 0')
  const maxIn = maxAmountIn(deps.catalogue, token)
  if (parsed.value > MAX_UINT256)
    return invalid(
      `is more than a uint256 can hold in atomic units of ${token.symbol} (${token.decimals} decimals), so no token can carry it; send whole tokens ("1000" is 1000 ${token.symbol}), at most ${formatAtomic(maxIn, token.decimals)}`,
    )
  if (parsed.value > maxIn) return { ok: false, reason: 'above_max', value: parsed.value, maxIn }
  return { ok: true, value: parsed.value }
}

export type AmountAboveMaxParameters = {
  token: Token
  value: bigint
  maxIn: bigint
  field: string
  /** The range the route, or the transfer, can carry, when there is one to offer. */
  viable?: { minIn: bigint; maxIn: bigint } | undefined
}

/** The 422 for an amount above what its token could ever hold: the bound, and what to send instead. */
export function amountAboveMax(parameters: AmountAboveMaxParameters): ServiceError {
  const { token, value, maxIn, field, viable } = parameters
  const max = formatAtomic(maxIn, token.decimals)
  const range =
    viable === undefined
      ? undefined
      : { min: formatAtomic(viable.minIn, token.decimals), max: formatAtomic(viable.maxIn, token.decimals), token: token.symbol }
  return new ServiceError(
    'amount_out_of_range',
    `${formatAtomic(value, token.decimals)} ${token.symbol} is more than ${token.symbol} on ${token.chain} could ever hold: one amount carries at most ${max} ${token.symbol}, more than the token's whole supply. Check the amount: it is in whole tokens, not atomic units ("1000" is 1000 ${token.symbol}).${range === undefined ? '' : ` Send between ${range.min} and ${range.max} ${token.symbol}.`}`,
    { field, limit: 'token_supply', maxAmount: max, ...(range === undefined ? {} : { viableRange: range }) },
  )
}
