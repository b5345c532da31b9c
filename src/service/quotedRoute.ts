import { type FindRoutesReturnType, findRoutes, formatAtomic, type PricedRoute, type QuoteAmounts } from '../engine/index.ts'
import type { ServiceDeps } from './deps.ts'
import { type QuoteClaims, verifyQuoteId } from './quoteToken.ts'
import type { ResolvedQuoteRequest } from './resolveQuoteRequest.ts'
import { ServiceError } from './serviceError.ts'

// A quote the service signed, built as quoted: by the keyed swap (swapWithQuote.ts) and by a paid swap that names a
// quoteId (DESIGN 7.27, buildSwapTransaction.ts).

export const QUOTE_AGAIN = 'Quote again (POST /api/v1/quote or /api/x402/quote) and send the new quoteId.'

/** The claims of a quoteId that verifies and is unexpired: 400 `invalid_quote`, or 422 `quote_expired`. */
export function verifiedClaims(deps: ServiceDeps, quoteId: string): QuoteClaims {
  const verified = verifyQuoteId(deps.quoteSecret, quoteId, deps.clock())
  if (verified.ok) return verified.claims
  if (verified.reason === 'expired')
    throw new ServiceError('quote_expired', `The quote expired: quotes live ${deps.catalogue.pricing.quoteTtlSec} s. ${QUOTE_AGAIN}`, {
      reason: 'expired',
    })
  throw new ServiceError(
    'invalid_quote',
    verified.reason === 'malformed'
      ? `quoteId is not a SwapEazi quote id; send the quoteId of a quote exactly as it was answered. ${QUOTE_AGAIN}`
      : `quoteId does not verify: it was altered, or signed by another deployment. ${QUOTE_AGAIN}`,
    { reason: verified.reason },
  )
}

/**
 * The quoted route for `request` as it prices now: still viable, and still promising at least the quoted
 * `toAmountMin`; otherwise 422 `quote_expired` (`route_not_viable`, `price_moved`) asks for a new quote.
 */
export function quotedRoute(
  deps: ServiceDeps,
  claims: QuoteClaims,
  request: ResolvedQuoteRequest,
): { amounts: QuoteAmounts; priced: PricedRoute } {
  const found: FindRoutesReturnType = findRoutes(deps.catalogue, request)
  const quoted = found.kind === 'routes' ? found.viable.find((priced) => priced.route.id === claims.routeId) : undefined
  if (found.kind !== 'routes' || quoted === undefined)
    throw new ServiceError('quote_expired', `The quoted route ${claims.routeId} is no longer viable at today's prices. ${QUOTE_AGAIN}`, {
      reason: 'route_not_viable',
    })
  const promisedMin = BigInt(claims.toAmountMin)
  if (found.amounts.toAmountMin < promisedMin)
    throw new ServiceError(
      'quote_expired',
      `Prices moved since the quote: it promised at least ${formatAtomic(promisedMin, request.to.decimals)} ${request.to.symbol}, the route now gives ${formatAtomic(found.amounts.toAmountMin, request.to.decimals)}. ${QUOTE_AGAIN}`,
      { reason: 'price_moved' },
    )
  return { amounts: found.amounts, priced: quoted }
}

/** Whether a quote's claims are for exactly this request (tokens, amount, sender, recipient, slippage). */
export function isQuoteFor(claims: QuoteClaims, request: ResolvedQuoteRequest): boolean {
  return (
    claims.fromChain === request.from.chain &&
    claims.toChain === request.to.chain &&
    claims.fromToken.toLowerCase() === request.from.symbol.toLowerCase() &&
    claims.toToken.toLowerCase() === request.to.symbol.toLowerCase() &&
    claims.fromAmount === request.amountIn.toString() &&
    claims.fromAddress.toLowerCase() === request.fromAddress.toLowerCase() &&
    (claims.toAddress ?? claims.fromAddress).toLowerCase() === request.toAddress.toLowerCase() &&
    claims.slippageE18 === request.slippageE18.toString()
  )
}
