import type { Address } from 'viem'
import { formatAtomic, type LaneOverdrawn, type PoolInflows, type PricedRoute, type QuoteAmounts, sizeRoute } from '../engine/index.ts'
import type { QuoteParams, QuoteResult, Ranking } from '../schemas/quote.ts'
import { type BuildRouteTransactionReturnType, buildRouteTransaction } from '../tx/buildRouteTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { formatQuote } from './formatQuote.ts'
import { routeQuoteRequest } from './getQuote.ts'
import { isQuoteFor, QUOTE_AGAIN, quotedRoute, verifiedClaims } from './quotedRoute.ts'
import { type ResolvedQuoteRequest, resolveQuoteRequest } from './resolveQuoteRequest.ts'
import { describeAlternatives, nearestAlternatives } from './nearestAlternatives.ts'
import { ServiceError } from './serviceError.ts'
import { swapRefToBytes32 } from './swapRef.ts'

export type BuildSwapTransactionParameters = {
  /**
   * `route`: the ranked route to build (DESIGN 7.27); default BALANCED, the free quote's. `quoteId`: a quote of this
   * same request, whose route is built as quoted.
   */
  params: QuoteParams & { route?: Ranking | undefined; quoteId?: string | undefined }
  swapEaziRef: string
  /** For a leg of a batch: what the legs before it put into the pools (priced on the pools they leave; PoolInflows). */
  inflows?: PoolInflows | undefined
}

export type BuildSwapTransactionReturnType = {
  swapEaziRef: string
  quote: QuoteResult
  build: BuildRouteTransactionReturnType
  /** Who receives the output: the request's toAddress, or its fromAddress. */
  toAddress: Address
}

/**
 * Quotes a swap and builds the transaction that executes its BALANCED route (or the ranked route `params.route`
 * names). The engine offers only routes every
 * step of which can be encoded (DESIGN 7.20), so what quotes also builds; every unservable case is a ServiceError
 * (422) naming why, what else is served, and that nothing was charged, so a paid endpoint refuses before it asks
 * for payment. A pair no route serves at any amount is `no_route_found`, the free quote's reason for the same pair.
 */
export function buildSwapTransaction(deps: ServiceDeps, parameters: BuildSwapTransactionParameters): BuildSwapTransactionReturnType {
  const { params, swapEaziRef } = parameters
  if (params.quoteId !== undefined) return buildQuoted(deps, { ...parameters, quoteId: params.quoteId })
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed) {
    const { request } = routed
    const alternatives = nearestAlternatives(deps, request)
    const why = routed.body.notServed?.detail ?? `no route joins ${routed.body.pair}`
    throw new ServiceError('no_route_found', `Not built, and nothing was charged: ${why}. ${describeAlternatives(alternatives)}`, {
      pair: routed.body.pair,
      ...(routed.body.notServed === undefined ? {} : { notServed: routed.body.notServed }),
      alternatives,
    })
  }
  const { request, found } = routed
  const priced = found.ranked[params.route ?? 'BALANCED']
  return buildRoute(deps, { request, amounts: found.amounts, priced, swapEaziRef, inflows: parameters.inflows })
}

/**
 * A paid swap that names a quoteId (DESIGN 7.27): the quote must verify, be unexpired and be for this very request;
 * its route is built while it still promises at least the quoted toAmountMin, as the keyed swap builds it.
 */
function buildQuoted(deps: ServiceDeps, parameters: BuildSwapTransactionParameters & { quoteId: string }): BuildSwapTransactionReturnType {
  const { params, swapEaziRef, quoteId } = parameters
  if (params.route !== undefined)
    throw new ServiceError('invalid_request', 'route is decided by the quoteId, which names its route: send one or the other.', {
      errors: [{ field: 'route', message: 'is not taken with quoteId (the quote names its route)' }],
    })
  const request = resolveQuoteRequest(deps, params)
  const claims = verifiedClaims(deps, quoteId)
  if (!isQuoteFor(claims, request))
    throw new ServiceError(
      'invalid_quote',
      `quoteId is a quote of another request (its tokens, amount, sender, recipient or slippage differ from this body's): send the body exactly as it was quoted, or drop quoteId to have this body priced. ${QUOTE_AGAIN}`,
      { reason: 'other_request' },
    )
  const { amounts, priced } = quotedRoute(deps, claims, request)
  return buildRoute(deps, { request, amounts, priced, swapEaziRef, inflows: parameters.inflows })
}

export type BuildRouteParameters = {
  request: ResolvedQuoteRequest
  amounts: QuoteAmounts
  /** The route to build: viable, and buildable by construction (the engine offers no other). */
  priced: PricedRoute
  swapEaziRef: string
  inflows?: PoolInflows | undefined
}

/**
 * Sizes and encodes one offered route. Paid and keyed swaps both end here, so they build identical transactions for
 * identical requests. A route the engine offered always encodes; if it ever does not, that is a bug: it fails as a
 * 500 with its cause in the log, never as a refusal that blames the request.
 */
export function buildRoute(deps: ServiceDeps, parameters: BuildRouteParameters): BuildSwapTransactionReturnType {
  const { request, amounts, priced, swapEaziRef, inflows } = parameters
  const sized = sizeRoute(deps.catalogue, priced.route, request.amountIn, amounts.toAmount, inflows?.swapAt)
  if (sized === undefined && inflows !== undefined) throw pastSharedPools(request, amounts, priced, inflows)
  if (sized === undefined) throw new Error(`offered route ${priced.route.id} cannot deliver the quoted ${amounts.toAmount}`)
  const overdrawn = inflows?.overdrawnLane(sized.sized)
  if (overdrawn !== undefined) throw pastLaneLimit(overdrawn)
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
    swapAt: inflows?.swapAt,
  })
  // The engine offered this route, so every step can be built: a refusal here is a bug (a 500, its cause logged).
  if (!build.ok) throw new Error(`offered route ${priced.route.id} refused: ${build.reason} at ${build.step}`)
  return { swapEaziRef, quote: formatQuote(deps, request, amounts, priced), build, toAddress: request.toAddress }
}

/**
 * A batch leg whose route delivers its quote alone but not after the legs before it have swapped through the same
 * pools: together they ask more of those pools than the fee covers. 422 on the leg's amount (disburse names it).
 */
function pastSharedPools(request: ResolvedQuoteRequest, amounts: QuoteAmounts, priced: PricedRoute, inflows: PoolInflows): ServiceError {
  const shared = inflows.sharedWith([...priced.route.sourceSwaps, ...priced.route.destinationSwaps])
  const pools = shared.map(({ venue, by }) => `${venue} (after recipients ${by.join(', ')})`).join(' and ')
  return new ServiceError(
    'amount_out_of_range',
    `its route swaps in ${pools || 'pools'} that the recipients before it in this batch also swap in, and after their swaps it cannot deliver ${formatAtomic(amounts.toAmount, request.to.decimals)} ${request.to.symbol} within the 0.5% fee: one transaction runs every leg, in order, on the same pools. Nothing was built or charged; send fewer or smaller legs through these pools per batch, or split the batch.`,
    { field: 'fromAmount', limit: 'liquidity', sharedWith: shared.flatMap(({ by }) => by).filter((i, k, all) => all.indexOf(i) === k) },
  )
}

/**
 * A batch leg whose deposit fits its lane alone but not after the deposits of the legs before it on the same lane:
 * its relayers could not fill them all at once (PoolInflows.overdrawnLane). 422 on the leg's amount (disburse names it).
 */
function pastLaneLimit({ lane, instantAmountIn, before, amountIn, by }: LaneOverdrawn): ServiceError {
  const units = (amount: bigint) => `${formatAtomic(amount, lane.from.decimals)} ${lane.from.symbol}`
  return new ServiceError(
    'amount_out_of_range',
    `its route deposits ${units(amountIn)} on ${lane.bridge.name} ${lane.from.chain}>${lane.to.chain}, whose relayers fill at most ${units(instantAmountIn)} at once (as last read), and the recipients before it in this batch (${by.join(', ')}) already deposit ${units(before)} there: one transaction makes every deposit. Nothing was built or charged; send fewer or smaller legs over this lane per batch, or split the batch.`,
    {
      field: 'fromAmount',
      limit: 'bridge_maximum',
      sharedWith: by.filter((i, k, all) => all.indexOf(i) === k),
    },
  )
}
