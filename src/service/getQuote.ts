import {
  type Catalogue,
  findRoutes,
  formatAtomic,
  type FindRoutesReturnType,
  type NotViableReason,
  pairNotServed,
  type PricedRoute,
  type QuoteAmounts,
  quotableRange,
} from '../engine/index.ts'
import { acrossLaneExpectedByMs } from '../market/acrossLaneFees.ts'
import type { AmountLimit } from '../schemas/problem.ts'
import type { QuoteParams, QuoteResult, RankedQuote, UnsupportedPair } from '../schemas/quote.ts'
import type { ServiceDeps } from './deps.ts'
import { formatQuote } from './formatQuote.ts'
import { preferredRoutes } from './inertRouter.ts'
import { routeNotSold, soldRangeFilter, soldRoutesOf } from './routerNotSold.ts'
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
  // Where some chains have no router of the operator's own, a route that needs none there goes first.
  const isPreferred = preferredRoutes(deps.catalogue, deps.routerOn)
  const found = findRoutes(deps.catalogue, isPreferred === undefined ? request : { ...request, isPreferred })
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
  if (found.kind !== 'routes') refuseOnMarketGaps(deps.catalogue, request, deps.clock())
  if (found.kind === 'no_route') return unsupported()
  if (found.kind === 'not_viable') {
    // The routes' range, its least amount one whose minimum at the request's slippage is not 0: the sold routes'
    // where some are not sold here, as the corridor listing shows it (else every route's).
    const isSold = soldRangeFilter(soldRoutesOf(deps), deps.catalogue, request.from, request.to)
    const range =
      (isSold === undefined ? undefined : quotableRange(deps.catalogue, request.from, request.to, request.slippageE18, isSold)) ??
      quotableRange(deps.catalogue, request.from, request.to, request.slippageE18)
    if (!range) return unsupported()
    const { from } = request
    const { minIn } = range
    const viable = { min: formatAtomic(minIn, from.decimals), max: formatAtomic(range.maxIn, from.decimals), token: from.symbol }
    const isInside = request.amountIn >= minIn && request.amountIn <= range.maxIn
    // Inside the range, nearer its low end (geometrically): what binds there is the fee against costs and rounding.
    const isTooSmall = request.amountIn < minIn || (isInside && request.amountIn * request.amountIn < minIn * range.maxIn)
    const reasons = found.rejected.map((rejection) => rejection.reason)
    const limit = bindingLimit(reasons, isTooSmall)
    const why =
      limit === 'fee'
        ? feeLimitText(request, reasons, found.amounts)
        : `${LIMIT_TEXT[limit]}${limit === 'bridge_maximum' && hasAcrossLane(deps.catalogue, request) ? ACROSS_INSTANT_TEXT : ''}`
    const head = `${formatAtomic(request.amountIn, from.decimals)} ${from.symbol} cannot be routed to ${request.to.symbol} on ${request.to.chain} within the ${Number(deps.catalogue.pricing.feeBps) / 100}% all-in fee: ${why}`
    if (!isInside)
      throw new ServiceError('amount_out_of_range', `${head}. Send between ${viable.min} and ${viable.max} ${from.symbol}.`, {
        field: 'fromAmount',
        viableRange: viable,
        limit,
      })
    // Inside the range: whole atomic units make the fee (rounded up) and what is promised (rounded down) step, so
    // the costs can exceed the fee at a few amounts between viable ones. Told to "send between min and max", a
    // caller that already had was left to guess (audit of issue 15): the amounts next to it that route are named.
    const nearby = nearbyViableAmounts(deps, request, range, isPreferred).map((amount) => formatAtomic(amount, from.decimals))
    const instead =
      nearby.length === 0
        ? `amounts a little ${isTooSmall ? 'larger' : 'smaller'} may route`
        : `${nearby.join(' or ')} ${from.symbol}, next to it, route${nearby.length === 1 ? 's' : ''}`
    throw new ServiceError(
      'amount_out_of_range',
      `${head}, at this exact amount (whole atomic units make the fee and what is delivered step, so a few amounts inside the viable range, ${viable.min} to ${viable.max} ${from.symbol}, are not viable): ${instead}.`,
      { field: 'fromAmount', viableRange: viable, limit, ...(nearby.length === 0 ? {} : { viableNearby: nearby }) },
    )
  }
  return { request, found }
}

/** How many atomic units on each side of a refused amount inside the viable range are tried for one that routes. */
const NEARBY_STEPS = 16n

/**
 * The nearest amounts below and above `request.amountIn`, within NEARBY_STEPS atomic units and inside `range`, that a
 * route serves: at most 2 × NEARBY_STEPS route searches, on a refusal only.
 */
function nearbyViableAmounts(
  deps: ServiceDeps,
  request: ResolvedQuoteRequest,
  range: { minIn: bigint; maxIn: bigint },
  isPreferred: ReturnType<typeof preferredRoutes>,
): bigint[] {
  const routes = (amountIn: bigint): boolean =>
    findRoutes(deps.catalogue, isPreferred === undefined ? { ...request, amountIn } : { ...request, amountIn, isPreferred }).kind ===
    'routes'
  const first = (step: bigint): bigint | undefined => {
    for (let k = 1n; k <= NEARBY_STEPS; k++) {
      const amount = request.amountIn + step * k
      if (amount < range.minIn || amount > range.maxIn) return undefined
      if (routes(amount)) return amount
    }
    return undefined
  }
  return [first(-1n), first(1n)].filter((amount): amount is bigint => amount !== undefined)
}

/** Seconds a client waits before asking again while the live market lacks a figure (a few refreshes). */
export const MARKET_RETRY_AFTER_SEC = 15
/** The longest wait a gap that says when it closes (an Across lane being read) may ask for. */
const MARKET_RETRY_AFTER_MAX_SEC = 60

/**
 * The 503's Retry-After: where every missing figure is an Across lane being read for the first time that says by
 * when, the seconds to the latest of those times (rounded up, 1 to MARKET_RETRY_AFTER_MAX_SEC), so the client asks
 * again when the answer says; otherwise MARKET_RETRY_AFTER_SEC.
 */
function retryAfterSecOf(reasons: readonly string[], nowMs: number): number {
  let latestMs: number | undefined
  for (const reason of reasons) {
    const byMs = acrossLaneExpectedByMs(reason)
    if (byMs === undefined || byMs < nowMs) return MARKET_RETRY_AFTER_SEC
    if (latestMs === undefined || byMs > latestMs) latestMs = byMs
  }
  if (latestMs === undefined) return MARKET_RETRY_AFTER_SEC
  return Math.min(MARKET_RETRY_AFTER_MAX_SEC, Math.max(1, Math.ceil((latestMs - nowMs) / 1000)))
}

/**
 * DESIGN 5: a request the full market would route, but not the market the live reads can vouch for now, is 503
 * `market_unavailable` naming what is missing; it is never quoted from stale figures, nor told "no route".
 */
function refuseOnMarketGaps(catalogue: Catalogue, request: ResolvedQuoteRequest, nowMs: number): void {
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
  const retryAfterSec = retryAfterSecOf(
    [
      ...chains.map((chain) => gaps.chains.get(chain) ?? ''),
      ...currencies.map((currency) => gaps.currencies.get(currency) ?? ''),
      ...venues.map((id) => gaps.venues.get(id) ?? ''),
      ...lanes.map((id) => gaps.lanes.get(id) ?? ''),
    ],
    nowMs,
  )
  throw new ServiceError(
    'market_unavailable',
    `${request.from.symbol} on ${request.from.chain} to ${request.to.symbol} on ${request.to.chain} is not quoted now: the live market cannot vouch for every figure its routes need (${reasons.join('; ')}). Nothing is priced from stale data; ask again in ${retryAfterSec} s, and GET /api/v1/health shows the market's state.`,
    { chains, currencies, venues, lanes, retryAfterSec },
  )
}

/** What bounds the viable range on the side the amount fell: the fee against fixed costs, a bridge cap, or depth. */
type BindingLimit = Exclude<AmountLimit, 'token_supply'>

const LIMIT_TEXT: Readonly<Record<Exclude<BindingLimit, 'fee'>, string>> = {
  bridge_minimum: 'it is below the smallest amount the bridges take',
  bridge_maximum: 'it is above the largest amount the bridges take',
  liquidity: "at this size the venues' liquidity is too thin: their price impact exceeds what the fee earns",
}

/**
 * Why an amount too small for the fee is refused, true of the request's routes: nothing left once the fee (rounded
 * up to a whole atomic unit) is taken, or a minimum that rounds to 0; else the costs that exceed the fee, which for a
 * route that crosses chains include fixed ones (bridge fees, destination gas), and for a same-chain swap are the
 * venues' fees and rounding to whole atomic units.
 */
function feeLimitText(request: ResolvedQuoteRequest, reasons: readonly NotViableReason[], amounts: QuoteAmounts): string {
  const { from, to } = request
  const fee = `${formatAtomic(amounts.feeAmount, from.decimals)} ${from.symbol}`
  if (amounts.toAmount <= 0n) return `the fee, ${fee} (rounded up to a whole atomic unit), leaves nothing to deliver`
  if (amounts.toAmountMin <= 0n)
    return `after the fee, ${fee}, it would deliver ${formatAtomic(amounts.toAmount, to.decimals)} ${to.symbol}, and at the slippage asked the least it could promise (toAmountMin) rounds to 0`
  if (reasons.length > 0 && reasons.every((reason) => reason === 'no_output')) return 'at this size the route delivers nothing'
  return from.chain === to.chain
    ? "at this size the swap's costs (the venues' fees, and rounding to whole atomic units) exceed what the fee earns"
    : "at this size the route's fixed costs (bridge fees, destination gas) exceed what the fee earns"
}

const ACROSS_INSTANT_TEXT =
  " (an Across lane takes at most what its relayers can fill at once, Across's maxDepositInstant: a larger deposit waits for a relayer to rebalance or for a slow fill, or is refunded, so no arrival time could be promised for it)"

/** Whether an Across lane priced from Across's own figures joins the request's chains. */
function hasAcrossLane(catalogue: Catalogue, request: ResolvedQuoteRequest): boolean {
  return (catalogue.lanes.get(`${request.from.chain}>${request.to.chain}`) ?? []).some((lane) => lane.feeQuotedBy === 'across')
}

function bindingLimit(reasons: readonly NotViableReason[], isTooSmall: boolean): BindingLimit {
  if (isTooSmall && reasons.some((reason) => reason === 'no_output')) return 'fee'
  if (isTooSmall) return reasons.length > 0 && reasons.every((reason) => reason === 'below_bridge_minimum') ? 'bridge_minimum' : 'fee'
  return reasons.length > 0 && reasons.every((reason) => reason === 'above_bridge_maximum') ? 'bridge_maximum' : 'liquidity'
}

/**
 * A route's quote as the free quote answers it: marked `notSold` where a paid swap here would refuse it (it needs a
 * router the operator has not set), so it never reads as something build_swap sells.
 */
function quoteOf(deps: ServiceDeps, request: ResolvedQuoteRequest, amounts: QuoteAmounts, priced: PricedRoute): QuoteResult {
  const quote = formatQuote(deps, request, amounts, priced)
  const notSold = routeNotSold(deps, priced.route)
  return notSold === undefined ? quote : { ...quote, notSold }
}

/** The free quote (spec 2.2): the BALANCED route, as the swap would use it. */
export function getQuote(deps: ServiceDeps, params: QuoteParams): GetQuoteReturnType {
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed) return routed
  const { request, found } = routed
  return { kind: 'quote', quote: quoteOf(deps, request, found.amounts, found.ranked.BALANCED) }
}

/** The v1 ranked quote: full quotes for the FASTEST, BALANCED and CHEAPEST routes, each with its own quoteId. */
export function getRankedQuote(deps: ServiceDeps, params: QuoteParams): GetRankedQuoteReturnType {
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed) return routed
  const { request, found } = routed
  const routes = (['FASTEST', 'BALANCED', 'CHEAPEST'] as const).map((ranking) => ({
    ranking,
    ...quoteOf(deps, request, found.amounts, found.ranked[ranking]),
  }))
  return { kind: 'ranked', body: { routes, viableRoutes: found.viable.length, candidateRoutes: found.candidates } }
}
