import type * as z from 'zod'
import type { ResponseDoc } from './endpoint.ts'

/** A JSON response: one schema, or several as `oneOf`. */
export const jsonResponse = (
  body: z.ZodType | readonly z.ZodType[],
  description: string,
  headers?: ResponseDoc['headers'],
): ResponseDoc => ({
  description,
  body,
  ...(headers === undefined ? {} : { headers }),
})

/** A problem+json response. */
export const problemResponseDoc = (description: string): ResponseDoc => ({ description, isProblem: true })

/** The 401 and 429 every keyed endpoint may answer. */
export const KEY_ERRORS: Readonly<Record<number, ResponseDoc>> = {
  401: problemResponseDoc('invalid_key: the key is missing, malformed, forged, altered or revoked (`reason` says which)'),
  429: problemResponseDoc(
    "rate_limited: over the key's per-minute limit, or, on swaps and batches, its pre-flight simulations (`preflight-paid`: 120 a minute); `Retry-After` says when to retry, and `RateLimit` and `RateLimit-Policy` name the policy",
  ),
}

export const PAYLOAD_TOO_LARGE = problemResponseDoc('payload_too_large: body over 64 KiB')
export const UNSUPPORTED_MEDIA_TYPE = problemResponseDoc(
  'unsupported_media_type: Content-Type is not application/json, its charset is not UTF-8, or a Content-Encoding was sent',
)
export const ADDRESS_SCREENED = problemResponseDoc('address_screened: the sender or recipient failed compliance screening')

/** The 503 of an endpoint that prices a route on the live market (src/market) when a chain's prices went stale. */
export const MARKET_UNAVAILABLE_TEXT =
  'market_unavailable: the live prices of a chain on the route are stale (its RPC stopped answering); nothing is charged, and `Retry-After` says when to ask again'
export const MARKET_UNAVAILABLE = problemResponseDoc(MARKET_UNAVAILABLE_TEXT)
