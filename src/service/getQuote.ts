import {
  type Catalogue,
  findRoutes,
  formatAtomic,
  type FindRoutesReturnType,
  type NotViableReason,
  pairNotServed,
  viableRange,
} from '../engine/index.ts'
import type { AmountLimit } from '../schemas/problem.ts'
import type { QuoteParams, QuoteResult, RankedQuote, UnsupportedPair } from '../schemas/quote.ts'
import type { ServiceDeps } from './deps.ts'
import { formatQuote } from './formatQuote.ts'
import { type ResolvedQuoteRequest, resolveQuoteRequest } from './resolveQuoteRequest.ts'
import { ServiceError } from './serviceError.ts'

export type GetQuoteReturnType = { kind: 'quote'; quote: QuoteResult } | { kind: 'unsupported'; body: UnsupportedPair }
export type GetRankedQuoteReturnType = { kind: 'ranked'; body: RankedQuote } | { kind: 'unsupported'; body: UnsupportedPair }

/** A pair no route serves at any amount: the spec's answer, and the request it was for. */
export type Unsupported = { kind: 'unsupported'; body: UnsupportedPair; request: ResolvedQuoteRequest }

export type Routed = { request: ResolvedQuoteRequest; found: Extract<FindRoutesReturnType, { kind: 'routes' }> }

/**
 * Resolves and routes a quote request. An unroutable pair is a value (spec 2.3); an amount no route can serve is a
 * 422 `amount_out_of_range` naming the viable range (DESIGN 3, 7.2).
 */
export function routeQuoteRequest(deps: ServiceDeps, params: QuoteParams): Routed | Unsupported {
  const request = resolveQuoteRequest(deps, params)
  const found = findRoutes(deps.catalogue, request)
  // Why, with the figures (DESIGN 7.20): the spec's answer keeps its shape, the cause rides beside it.
  const unsupported = (): Unsupported => ({
    kind: 'unsupported',
    request,
    body: {
      supported: false,
      reason: 'no_route_found',
      pair: `${request.from.symbol}->${request.to.symbol}`,
      notServed: pairNotServed(
        deps.catalogue,
        [{ from: request.from, to: request.to }],
        `${request.from.symbol} on ${request.from.chain} to ${request.to.symbol} on ${request.to.chain}`,
      ),
    },
  })
  if (found.kind !== 'routes') refuseOnMarketGaps(deps.catalogue, request)
  if (found.kind === 'no_route') return unsupported()
  if (found.kind === 'not_viable') {
    const range = viableRange(deps.catalogue, request.from, request.to)
    if (!range) return unsupported()
    const { from } = request
    const viable = { min: formatAtomic(range.minIn, from.decimals), max: formatAtomic(range.maxIn, from.decimals), token: from.symbol }
    const limit = bindingLimit(
      found.rejected.map((rejection) => rejection.reason),
      request.amountIn < range.minIn,
    )
    throw new ServiceError(
      'amount_out_of_range',
      `${formatAtomic(request.amountIn, from.decimals)} ${from.symbol} cannot be routed to ${request.to.symbol} on ${request.to.chain} within the ${Number(deps.catalogue.pricing.feeBps) / 100}% all-in fee: ${LIMIT_TEXT[limit]}. Send between ${viable.min} and ${viable.max} ${from.symbol}.`,
      { field: 'fromAmount', viableRange: viable, limit },
    )
  }
  return { request, found }
}

/** Seconds a client waits before asking again while the live market lacks a figure (a few refreshes). */
export const MARKET_RETRY_AFTER_SEC = 15

/**
 * DESIGN 5: a request the full market would route, but not the market the live reads can vouch for now, is 503
 * `market_unavailable` naming what is missing; it is never quoted from stale figures, nor told "no route".
 */
function refuseOnMarketGaps(catalogue: Catalogue, request: ResolvedQuoteRequest): void {
  const gaps = catalogue.gaps
  if (gaps === undefined) return
  const full = findRoutes(gaps.ungapped, request)
  if (full.kind !== 'routes') return
  const { route } = full.ranked.BALANCED
  const tokens = [
    ...route.sourceSwaps.flatMap((edge) => [edge.from, edge.to]),
    ...(route.bridge === undefined ? [] : [route.bridge.from, route.bridge.to]),
    ...route.destinationSwaps.flatMap((edge) => [edge.from, edge.to]),
    route.from,
    route.to,
  ]
  const chains = [...new Set(tokens.map((token) => token.chain))].filter((chain) => gaps.chains.has(chain))
  const currencies = [...new Set(tokens.map((token) => token.currency))].filter((currency) => gaps.currencies.has(currency))
  const venues = [...new Set([...route.sourceSwaps, ...route.destinationSwaps].map((edge) => edge.venue.id))].filter((id) =>
    gaps.venues.has(id),
  )
  const lane = route.bridge
  const laneId = lane === undefined ? undefined : `${lane.bridge.id}:${lane.from.chain}>${lane.to.chain}`
  const laneIds = laneId === undefined ? [] : route.destinationSwaps.length > 0 ? [laneId, `${laneId}:compose`] : [laneId]
  const lanes = laneIds.filter((id) => gaps.lanes.has(id))
  const reasons = [
    ...chains.map((chain) => `${chain}: ${gaps.chains.get(chain)}`),
    ...currencies.map((currency) => `${currency}/USD: ${gaps.currencies.get(currency)}`),
    ...venues.map((id) => `${id}: ${gaps.venues.get(id)}`),
    ...lanes.map((id) => `${id}: ${gaps.lanes.get(id)}`),
  ]
  throw new ServiceError(
    'market_unavailable',
    `${request.from.symbol} on ${request.from.chain} to ${request.to.symbol} on ${request.to.chain} is not quoted now: the live market cannot vouch for every figure its routes need (${reasons.join('; ')}). Nothing is priced from stale data; ask again in ${MARKET_RETRY_AFTER_SEC} s, and GET /api/v1/health shows the market's state.`,
    { chains, currencies, venues, lanes, retryAfterSec: MARKET_RETRY_AFTER_SEC },
  )
}

/** What bounds the viable range on the side the amount fell: the fee against fixed costs, a bridge cap, or depth. */
type BindingLimit = Exclude<AmountLimit, 'token_supply'>

const LIMIT_TEXT: Readonly<Record<BindingLimit, string>> = {
  fee: "at this size the route's fixed costs (bridge fees, destination gas) exceed what the fee earns",
  bridge_minimum: 'it is below the smallest amount the bridges take',
  bridge_maximum: 'it is above the largest amount the bridges take',
  liquidity: "at this size the venues' liquidity is too thin: their price impact exceeds what the fee earns",
}

function bindingLimit(reasons: readonly NotViableReason[], isTooSmall: boolean): BindingLimit {
  if (isTooSmall) return reasons.length > 0 && reasons.every((reason) => reason === 'below_bridge_minimum') ? 'bridge_minimum' : 'fee'
  return reasons.length > 0 && reasons.every((reason) => reason === 'above_bridge_maximum') ? 'bridge_maximum' : 'liquidity'
}

/** The free quote (spec 2.2): the BALANCED route, as the swap would use it. */
export function getQuote(deps: ServiceDeps, params: QuoteParams): GetQuoteReturnType {
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed) return routed
  const { request, found } = routed
  return { kind: 'quote', quote: formatQuote(deps, request, found.amounts, found.ranked.BALANCED) }
}

/** The v1 ranked quote: full quotes for the FASTEST, BALANCED and CHEAPEST routes, each with its own quoteId. */
export function getRankedQuote(deps: ServiceDeps, params: QuoteParams): GetRankedQuoteReturnType {
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed) return routed
  const { request, found } = routed
  const routes = (['FASTEST', 'BALANCED', 'CHEAPEST'] as const).map((ranking) => ({
    ranking,
    ...formatQuote(deps, request, found.amounts, found.ranked[ranking]),
  }))
  return { kind: 'ranked', body: { routes, viableRoutes: found.viable.length, candidateRoutes: found.candidates } }
}
