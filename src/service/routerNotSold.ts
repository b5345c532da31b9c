import { type CandidateRoute, candidateRoutes, type Token } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { NotSoldWire } from '../schemas/quote.ts'
import type { ServiceDeps } from './deps.ts'

type Catalogue = ServiceDeps['catalogue']
import { hasInertChains, inertChainsOfRoute, refusesInertRouter, routerChainsOf, soldInsteadText } from './inertRouter.ts'

/**
 * The routes this deployment sells, where it does not sell every route it can quote: `isSold` says false of a route
 * that would use SwapEazi's inert default router or executor (a paid swap refuses it, 422 router_not_deployed).
 * `deployment` stands for the deployment's routers, the same object for the same routerOn, so a memo can key on it.
 */
export type SoldRoutes = {
  deployment: object
  isSold: (route: CandidateRoute) => boolean
  /** The chains whose inert default contracts a route would use: empty when it is sold. */
  inertChainsOf: (route: CandidateRoute) => ChainCode[]
  /** The agent-callable chains with a router of the operator's own. */
  routerChains: readonly ChainCode[]
}

const solds = new WeakMap<object, SoldRoutes>()

/**
 * Which routes discovery and quotes may offer as sold here: undefined where every route is, because every chain has a
 * router of the operator's own, or because paid swaps are the embedded demonstration (payments worth nothing, answered
 * with "do not sign"). Else the routes a paid swap on /api/x402/swap or build_swap would not refuse (refusesInertRouter).
 */
export function soldRoutesOf(deps: Pick<ServiceDeps, 'catalogue' | 'routerOn' | 'settler' | 'payTo'>): SoldRoutes | undefined {
  const { catalogue, routerOn } = deps
  if (!refusesInertRouter(deps, false) || !hasInertChains(catalogue, routerOn)) return undefined
  const known = solds.get(routerOn)
  if (known !== undefined) return known
  const inertChainsOf = (route: CandidateRoute): ChainCode[] => inertChainsOfRoute(catalogue, routerOn, route)
  const sold: SoldRoutes = {
    deployment: routerOn,
    isSold: (route) => inertChainsOf(route).length === 0,
    inertChainsOf,
    routerChains: routerChainsOf(catalogue, routerOn),
  }
  solds.set(routerOn, sold)
  return sold
}

/**
 * Which of a pair's routes a range advertised here may count: the sold ones (SoldRoutes.isSold) where some of the
 * pair's routes are not sold, else undefined (every route counts). The corridor listing and the quote's 422 ask it,
 * so the range a refusal names is the range the listing shows.
 */
export function soldRangeFilter(sold: SoldRoutes | undefined, catalogue: Catalogue, from: Token, to: Token) {
  return sold !== undefined && !candidateRoutes(catalogue, from, to).every(sold.isSold) ? sold.isSold : undefined
}

/**
 * Why a quoted route is not sold here, as the quote says it beside the route (its next step): which chain lacks a
 * router of the operator's own, that a paid swap refuses it before any payment, and what to ask for instead.
 * Undefined for a route a paid swap here would build.
 */
export function routeNotSold(
  deps: Pick<ServiceDeps, 'catalogue' | 'routerOn' | 'settler' | 'payTo'>,
  route: CandidateRoute,
): NotSoldWire | undefined {
  const sold = soldRoutesOf(deps)
  const chains = sold?.inertChainsOf(route) ?? []
  if (sold === undefined || chains.length === 0) return undefined
  const lane = route.bridge
  const uses = [
    ...(chains.includes(route.from.chain) ? [`its transaction would call SwapEazi's router on ${route.from.chain}`] : []),
    ...(lane !== undefined && chains.includes(lane.to.chain)
      ? [`it swaps on arrival on ${lane.to.chain}, in SwapEazi's executor there`]
      : []),
  ]
  // The token the bridge delivers needs no swap on arrival: a quote for it is sold where the source chain is, if
  // quotes take it (a hub such as USDC.e on GNO only passes through routes, and is refused as unsupported_token).
  const bridged =
    lane !== undefined &&
    !chains.includes(route.from.chain) &&
    chains.includes(lane.to.chain) &&
    deps.catalogue.tokensByLowerKey.has(`${lane.to.chain}:${lane.to.symbol.toLowerCase()}`)
      ? ` A quote for ${lane.to.symbol} on ${lane.to.chain}, the token the bridge delivers, needs no swap on arrival.`
      : ''
  return {
    reason: 'router_not_deployed',
    detail: `This route is not sold by this service (router_not_deployed): ${uses.join(', and ')}, and this service's operator has not set a router of its own on ${chains.join(' and ')}, so a paid swap (build_swap, POST /api/x402/swap) refuses it with 422 before any payment.${bridged} ${soldInsteadText(sold.routerChains, chains)}`,
    chains,
    routerChains: [...sold.routerChains],
  }
}

/**
 * Why a corridor cell whose every viable route would use the inert default contracts on `chains` is not served here,
 * in the listing's words (the notServed reason router_not_deployed).
 */
export function routerNotServed(
  sold: SoldRoutes,
  chains: readonly ChainCode[],
  what: string,
): { reason: 'router_not_deployed'; detail: string; chains: ChainCode[] } {
  return {
    reason: 'router_not_deployed',
    detail: `${what} is not sold by this service: every route would call SwapEazi's router on its source chain, or swap on arrival in its executor, on ${chains.join(' and ')}, where this service's operator has not set a router of its own, so a paid swap refuses it (422 router_not_deployed) before any payment. ${soldInsteadText(sold.routerChains, chains)}`,
    chains: [...chains],
  }
}
