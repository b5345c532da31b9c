import type { Address } from 'viem'
import { formatAtomic, type PricedRoute, type QuoteAmounts, sizeRoute } from '../engine/index.ts'
import type { QuoteParams, QuoteResult } from '../schemas/quote.ts'
import { type BuildRouteTransactionReturnType, buildRouteTransaction } from '../tx/buildRouteTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { formatQuote } from './formatQuote.ts'
import { routeQuoteRequest } from './getQuote.ts'
import type { ResolvedQuoteRequest } from './resolveQuoteRequest.ts'
import { ServiceError } from './serviceError.ts'
import { swapRefToBytes32 } from './swapRef.ts'

export type BuildSwapTransactionParameters = { params: QuoteParams; swapEaziRef: string }

export type BuildSwapTransactionReturnType = {
  swapEaziRef: string
  quote: QuoteResult
  build: BuildRouteTransactionReturnType
  /** Who receives the output: the request's toAddress, or its fromAddress. */
  toAddress: Address
}

/**
 * Quotes a swap and builds the transaction that executes it: the BALANCED route, or the next best viable route
 * when the catalogue cannot yet encode a call the better one needs. Every unservable case is a ServiceError
 * (422), so a paid endpoint can refuse before it asks for payment.
 */
export function buildSwapTransaction(deps: ServiceDeps, parameters: BuildSwapTransactionParameters): BuildSwapTransactionReturnType {
  const { params, swapEaziRef } = parameters
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed)
    throw new ServiceError(
      'route_not_executable',
      `No route joins ${params.fromToken} on ${params.fromChain} and ${params.toToken} on ${params.toChain}. GET /api/v1/corridors lists what is served.`,
      { pair: routed.body.pair },
    )
  const { request, found } = routed
  const ordered: PricedRoute[] = [found.ranked.BALANCED, ...found.viable.filter((route) => route !== found.ranked.BALANCED)]
  return buildFirstEncodable(deps, { request, amounts: found.amounts, ordered, swapEaziRef })
}

export type BuildFirstEncodableParameters = {
  request: ResolvedQuoteRequest
  amounts: QuoteAmounts
  /** Viable routes, best first. */
  ordered: readonly PricedRoute[]
  swapEaziRef: string
}

/**
 * Builds the first of `ordered` whose calls the catalogue can encode; 422 `route_not_executable` when none can.
 * Paid and keyed swaps both end here, so they build identical transactions for identical requests.
 */
export function buildFirstEncodable(deps: ServiceDeps, parameters: BuildFirstEncodableParameters): BuildSwapTransactionReturnType {
  const { request, amounts, ordered, swapEaziRef } = parameters
  const failures: string[] = []
  for (const priced of ordered) {
    // Sized once by the engine; the encoder prices nothing itself.
    const sized = sizeRoute(deps.catalogue, priced.route, request.amountIn, amounts.toAmount)
    if (sized === undefined) {
      failures.push(`${priced.route.id}: cannot deliver the quoted amount`)
      continue
    }
    try {
      const build = buildRouteTransaction({
        catalogue: deps.catalogue,
        routerOn: deps.routerOn,
        sized,
        amounts,
        slippageE18: request.slippageE18,
        sender: request.fromAddress,
        recipient: request.toAddress,
        ref: swapRefToBytes32(swapEaziRef),
        nowSec: Math.floor(deps.clock() / 1000),
      })
      const quote = formatQuote(deps, request, amounts, priced)
      return { swapEaziRef, quote, build, toAddress: request.toAddress }
    } catch (error) {
      failures.push(`${priced.route.id}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  deps.log.warn({ event: 'route_not_executable', routes: failures }, 'no viable route could be encoded')
  throw new ServiceError(
    'route_not_executable',
    `${formatAtomic(request.amountIn, request.from.decimals)} ${request.from.symbol} on ${request.from.chain} to ${request.to.symbol} on ${request.to.chain} can be quoted but not yet executed: a venue on every route lacks the on-chain parameters the transaction needs. Try another destination token or chain.`,
    { routes: failures.length },
  )
}
