import type { Address } from 'viem'
import { isEvmToken, type Token } from '../engine/index.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { ServiceDeps } from './deps.ts'
import { buildRoute } from './buildSwapTransaction.ts'
import { formatSwapResult } from './formatSwapResult.ts'
import type { QuoteClaims } from './quoteToken.ts'
import { QUOTE_AGAIN, quotedRoute, verifiedClaims } from './quotedRoute.ts'
import { checkChecksum, checkRecipient, type ResolvedQuoteRequest } from './resolveQuoteRequest.ts'
import { paidRequestKey } from './payForSwap.ts'
import { preflightBuild, swapTransactionOf } from './preflightBuild.ts'
import { screenSwapAddresses } from './screenSwapAddresses.ts'
import { ServiceError } from './serviceError.ts'
import { swapRecordOf } from './swapRecordOf.ts'
import { createPooledRandomBytes } from './pooledRandomBytes.ts'
import { newSwapRef } from './swapRef.ts'

export type SwapWithQuoteParameters = {
  quoteId: string
  /** The recipient, when the quote named none (it was quoted to its sender). */
  toAddress?: Address | undefined
  /** The API key the swap is built under. */
  keyId: string
}

/** The randomness of each swap reference: the OS's CSPRNG, drawn 4 KiB at a time (a call of its own costs 8 µs). */
const swapRefRandom = createPooledRandomBytes()

/**
 * The keyed swap (spec endpoint 10, DESIGN 7.12): a quote the service signed earlier becomes a transaction, with no
 * per-call fee. The quote must verify (400 `invalid_quote`) and be unexpired (422 `quote_expired`); its route must
 * still be viable and still promise at least the quoted `toAmountMin`, else 422 `quote_expired` asks for a new quote.
 * Screening and the build are the paid swap's own; the swap is recorded under the key before it is answered.
 */
export async function swapWithQuote(deps: ServiceDeps, parameters: SwapWithQuoteParameters): Promise<SwapResult> {
  const claims = verifiedClaims(deps, parameters.quoteId)
  if (parameters.toAddress !== undefined) checkChecksum('toAddress', parameters.toAddress)
  const toAddress = recipientOf(claims, parameters.toAddress)
  const request = requestOf(deps, claims, toAddress)
  if (parameters.toAddress !== undefined) checkRecipient(deps, request.to.chain, 'toAddress', parameters.toAddress)
  await screenSwapAddresses(deps, { fromAddress: claims.fromAddress, toAddress })

  const { amounts, priced: quoted } = quotedRoute(deps, claims, request)

  const swapEaziRef = newSwapRef(deps.clock(), swapRefRandom)
  const built = buildRoute(deps, { request, amounts, priced: quoted, swapEaziRef })
  // Keyed requests are limited per key: each costs the chain's RPC a simulation, or two across a bridge.
  await preflightBuild(deps, {
    built: swapTransactionOf(built, deps.routerOn),
    requestKey: paidRequestKey(request),
    caller: `key:${parameters.keyId}`,
    isPaid: true,
  })
  await deps.store.recordKeyedSwap({ ...swapRecordOf(built, 'api_key', new Date(deps.clock())), keyId: parameters.keyId })
  deps.log.info({ event: 'swap_built', swap_ref: swapEaziRef, key_id: parameters.keyId, route: quoted.route.id }, 'swap_built')
  return formatSwapResult(built, null)
}

/** The quote's recipient; a request may name one only when the quote was to its own sender. */
function recipientOf(claims: QuoteClaims, requested: Address | undefined): Address {
  if (requested === undefined) return claims.toAddress ?? claims.fromAddress
  if (claims.toAddress === null || claims.toAddress === requested.toLowerCase()) return requested
  throw new ServiceError(
    'invalid_request',
    `The quote is bound to the recipient ${claims.toAddress}; omit toAddress, or quote again for another recipient.`,
    {
      errors: [{ field: 'toAddress', message: 'differs from the recipient the quote is bound to' }],
    },
  )
}

function requestOf(deps: ServiceDeps, claims: QuoteClaims, toAddress: Address): ResolvedQuoteRequest {
  const token = (chain: string, symbol: string): Token => {
    const found = deps.catalogue.tokensByLowerKey.get(`${chain}:${symbol.toLowerCase()}`)
    if (found === undefined || !isEvmToken(found))
      throw new ServiceError('quote_expired', `${symbol} on ${chain} is no longer served. ${QUOTE_AGAIN}`, { reason: 'token_withdrawn' })
    return found
  }
  return {
    from: token(claims.fromChain, claims.fromToken),
    to: token(claims.toChain, claims.toToken),
    amountIn: BigInt(claims.fromAmount),
    slippageE18: BigInt(claims.slippageE18),
    fromAddress: claims.fromAddress,
    toAddress,
  }
}
