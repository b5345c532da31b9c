/** Fixed-point scale used for prices, USD values and fractions inside the engine. */
export const E18 = 10n ** 18n

const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/
const LOOSE_DECIMAL = /^[0-9]+(\.[0-9]+)?$/

export type ParseUnitsExactResult =
  | { ok: true; value: bigint }
  | { ok: false; reason: 'not_decimal' | 'too_many_decimals'; maxDecimals: number }

/**
 * Parses a decimal string into atomic units of a token with `decimals` places. Unlike viem's `parseUnits` it rejects,
 * never rounds: more fraction digits than the token has is an error (a result, not a throw), so a caller is never
 * charged or promised a figure other than the one it wrote.
 */
export function parseUnitsExact(text: string, decimals: number, { strict = true }: { strict?: boolean } = {}): ParseUnitsExactResult {
  if (!(strict ? DECIMAL : LOOSE_DECIMAL).test(text)) return { ok: false, reason: 'not_decimal', maxDecimals: decimals }
  const [whole = '0', fraction = ''] = text.split('.')
  if (fraction.length > decimals) return { ok: false, reason: 'too_many_decimals', maxDecimals: decimals }
  return { ok: true, value: BigInt(whole + fraction.padEnd(decimals, '0')) }
}

/** Parses a trusted catalogue decimal (already schema-checked) into `decimals` places; throws on excess precision. */
export function parseFixed(text: string, decimals = 18): bigint {
  const parsed = parseUnitsExact(text, decimals, { strict: false })
  if (!parsed.ok) throw new RangeError(`"${text}" is not a decimal with at most ${decimals} fraction digits`)
  return parsed.value
}

const POW10: readonly bigint[] = Array.from({ length: 78 }, (_, exponent) => 10n ** BigInt(exponent))

/** 10^exponent from a table: exponentiation of bigints on every price or amount conversion is measurable. */
export function pow10(exponent: number): bigint {
  return POW10[exponent] ?? 10n ** BigInt(exponent)
}

const ZERO = 48 // '0'

/**
 * Formats atomic units as a plain decimal string without trailing zeros ("1.5", "0.000001", "12"). Its output equals
 * viem's `formatUnits` for every value (the tests compare them); the engine has its own because it imports only
 * `schemas` (DESIGN), never viem.
 */
export function formatAtomic(value: bigint, decimals: number): string {
  const negative = value < 0n
  const digits = (negative ? -value : value).toString()
  if (decimals === 0) return negative ? `-${digits}` : digits
  const padded = digits.length > decimals ? digits : digits.padStart(decimals + 1, '0')
  const point = padded.length - decimals
  let end = padded.length
  while (end > point && padded.charCodeAt(end - 1) === ZERO) end -= 1
  const text = end === point ? padded.slice(0, point) : `${padded.slice(0, point)}.${padded.slice(point, end)}`
  return negative ? `-${text}` : text
}

/** Formats an 18-decimal fixed-point value with at most `places` fraction digits, rounding up (costs, estimates). */
export function formatFixedUp(valueE18: bigint, places: number): string {
  const step = pow10(18 - places)
  const rounded = ceilDiv(valueE18, step) * step
  return formatAtomic(rounded, 18)
}

/** Formats an 18-decimal fixed-point value with at most `places` fraction digits, rounding down (rates we show). */
export function formatFixedDown(valueE18: bigint, places: number): string {
  const step = pow10(18 - places)
  return formatAtomic((valueE18 / step) * step, 18)
}

/** Integer division rounding towards positive infinity, for non-negative numerators and positive divisors. */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (numerator <= 0n) return numerator / denominator
  return (numerator + denominator - 1n) / denominator
}

/**
 * Converts a JSON number such as a slippage fraction into 18-decimal fixed point without float arithmetic: the
 * number's shortest decimal representation is exact for what the caller typed. Returns undefined when the value has
 * more than 18 fraction digits, is negative or is not finite.
 */
export function numberToFixed(value: number): bigint | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined
  const text = value.toString()
  const match = /^([0-9]+)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/.exec(text)
  if (!match) return undefined
  const [, whole = '0', fraction = '', exponentText = '0'] = match
  const digits = whole + fraction
  const scale = fraction.length - Number(exponentText)
  if (scale > 18) return undefined
  return BigInt(digits) * pow10(18 - scale)
}
