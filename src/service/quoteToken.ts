import { timingSafeEqual } from 'node:crypto'
import * as z from 'zod'
import { AddressSchema } from '../schemas/address.ts'
import { hmacSha256 } from './hmacSha256.ts'

const PREFIX = 'q1.'

/** What a quote token binds: the normalised request, the route and the promised amounts (atomic units). */
export const QuoteClaims = z.object({
  fromChain: z.string(),
  toChain: z.string(),
  fromToken: z.string(),
  toToken: z.string(),
  fromAmount: z.string(),
  fromAddress: AddressSchema,
  /**
   * The recipient on the destination chain, lowercase; null when it is the sender (none was named), and a keyed
   * swap may then name one.
   */
  toAddress: AddressSchema.nullable(),
  slippageE18: z.string(),
  routeId: z.string(),
  toAmount: z.string(),
  toAmountMin: z.string(),
  asOf: z.string(),
  /**
   * What the quote was priced on, per chain of its route: `ETH:rpc:21000000` (a live read at that block) or
   * `ETH:snapshot`, joined with commas, so a keyed swap can tell how old its quote's market is (issue 17).
   */
  market: z.string(),
  /** Expiry, unix seconds. */
  exp: z.number().int(),
})
export type QuoteClaims = z.infer<typeof QuoteClaims>

export type VerifyQuoteIdReturnType = { ok: true; claims: QuoteClaims } | { ok: false; reason: 'malformed' | 'bad_signature' | 'expired' }

function mac(secret: Uint8Array, payload: string): string {
  return hmacSha256(secret, PREFIX + payload, 'base64url')
}

/** Printable ASCII other than `"` and `\`: JSON needs no escape inside quotes. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

function jsonText(value: string): string {
  return PLAIN_JSON_TEXT.test(value) ? `"${value}"` : JSON.stringify(value)
}

/**
 * `JSON.stringify(claims)`, byte for byte, in the schema's key order: the quote path signs every answer, and
 * spelling out the one flat shape costs less than half of stringifying it generically. A test holds the two equal.
 */
function claimsJson(c: QuoteClaims): string {
  return (
    `{"fromChain":${jsonText(c.fromChain)},"toChain":${jsonText(c.toChain)},"fromToken":${jsonText(c.fromToken)},` +
    `"toToken":${jsonText(c.toToken)},"fromAmount":${jsonText(c.fromAmount)},"fromAddress":${jsonText(c.fromAddress)},` +
    `"toAddress":${c.toAddress === null ? 'null' : jsonText(c.toAddress)},"slippageE18":${jsonText(c.slippageE18)},` +
    `"routeId":${jsonText(c.routeId)},"toAmount":${jsonText(c.toAmount)},"toAmountMin":${jsonText(c.toAmountMin)},` +
    `"asOf":${jsonText(c.asOf)},"market":${jsonText(c.market)},"exp":${JSON.stringify(c.exp)}}`
  )
}

/** DESIGN 7.12: a stateless quote token, `q1.` + base64url(claims) + `.` + base64url(HMAC-SHA256). */
export function signQuoteId(secret: Uint8Array, claims: QuoteClaims): string {
  const payload = Buffer.from(claimsJson(claims)).toString('base64url')
  return `${PREFIX}${payload}.${mac(secret, payload)}`
}

/** Checks a quote token's MAC in constant time, then its expiry against `nowMs`. */
export function verifyQuoteId(secret: Uint8Array, token: string, nowMs: number): VerifyQuoteIdReturnType {
  if (!token.startsWith(PREFIX)) return { ok: false, reason: 'malformed' }
  const [payload, signature, ...rest] = token.slice(PREFIX.length).split('.')
  if (!payload || !signature || rest.length > 0) return { ok: false, reason: 'malformed' }
  const expected = Buffer.from(mac(secret, payload), 'base64url')
  const given = Buffer.from(signature, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' }
  let claims: QuoteClaims
  try {
    claims = QuoteClaims.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')))
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  if (claims.exp * 1000 <= nowMs) return { ok: false, reason: 'expired' }
  return { ok: true, claims }
}
