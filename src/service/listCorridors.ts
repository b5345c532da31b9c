import {
  bridgeWireName,
  candidateRoutes,
  cellStatus,
  corridorPairs,
  findRoutes,
  formatAtomic,
  numberToFixed,
  pow10,
  quotableRange,
  type TokenPair,
} from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { DEFAULT_SLIPPAGE } from '../schemas/quote.ts'
import type { CorridorsResponse } from '../schemas/discovery.ts'
import type { ServiceDeps } from './deps.ts'
import { fillAppUrl } from './fillAppUrl.ts'
import { routerNotServed, type SoldRoutes, soldRangeFilter, soldRoutesOf } from './routerNotSold.ts'

/** Whole tokens of the source used to describe a corridor's venues, bridges and typical duration. */
const REFERENCE_UNITS = 1000n

/** The corridors per catalogue, and per deployment where its routers leave some routes unsold (soldRoutesOf). */
const memo = new WeakMap<ServiceDeps['catalogue'], WeakMap<object, CorridorsResponse['corridors']>>()
/** The memo's key for a deployment that sells every route it quotes. */
const EVERY_ROUTE = {}

/**
 * The advertised corridors with what the engine can actually do on each listed chain: the legs (source and
 * destination chains) that route, their venues and bridges, viable amount range and typical duration. Where this
 * deployment's paid swap refuses routes that need a router its operator has not set (soldRoutesOf), only the routes
 * it sells count, and a cell none of whose routes is sold says so (router_not_deployed). Computed once per catalogue
 * and deployment.
 */
export function listCorridors(deps: ServiceDeps): CorridorsResponse {
  const { catalogue } = deps
  const sold = soldRoutesOf(deps)
  let byDeployment = memo.get(catalogue)
  if (!byDeployment) {
    byDeployment = new WeakMap()
    memo.set(catalogue, byDeployment)
  }
  const key = sold?.deployment ?? EVERY_ROUTE
  let corridors = byDeployment.get(key)
  if (!corridors) {
    corridors = corridorsOf(deps, sold)
    byDeployment.set(key, corridors)
  }
  return { referenceAmount: REFERENCE_UNITS.toString(), corridors }
}

type Leg = CorridorsResponse['corridors'][number]['byChain'][number]['legs'][number]

/**
 * A pair's leg, or none where no amount is served; `unsold` collects the chains whose missing router leaves a pair
 * that routes with no sold route.
 */
function legOf(deps: ServiceDeps, sold: SoldRoutes | undefined, pair: TokenPair, unsold: Set<ChainCode>): Leg[] {
  const { catalogue } = deps
  const { from, to } = pair
  const amountIn = REFERENCE_UNITS * pow10(from.decimals)
  const slippageE18 = numberToFixed(DEFAULT_SLIPPAGE) ?? 0n
  // Only where some of the pair's routes are not sold does the range need the sold ones alone.
  const isSold = soldRangeFilter(sold, catalogue, from, to)
  // What a quote at the default slippage takes: its least amount is one whose minimum is not 0.
  const range = quotableRange(catalogue, from, to, slippageE18, isSold)
  if (!range) {
    if (sold !== undefined && isSold !== undefined && quotableRange(catalogue, from, to, slippageE18) !== undefined)
      for (const route of candidateRoutes(catalogue, from, to)) for (const chain of sold.inertChainsOf(route)) unsold.add(chain)
    return []
  }
  const found = findRoutes(catalogue, { from, to, amountIn, slippageE18, ...(isSold === undefined ? {} : { isPreferred: isSold }) })
  // Where no sold route is viable at the reference amount, the rest are what findRoutes ranked: none of them counts.
  const viable = found.kind === 'routes' ? found.viable.filter((priced) => isSold?.(priced.route) ?? true) : []
  const venues = new Set<string>()
  const bridges = new Set<string>()
  for (const priced of viable) {
    for (const edge of [...priced.route.sourceSwaps, ...priced.route.destinationSwaps]) venues.add(edge.venue.name)
    // The quote's, observations' and intelligence's name for a bridge, so an agent can match them.
    if (priced.route.bridge) bridges.add(bridgeWireName(priced.route.bridge.bridge))
  }
  return [
    {
      fromChain: from.chain,
      toChain: to.chain,
      venues: [...venues],
      bridges: [...bridges],
      viableRange: {
        min: formatAtomic(range.minIn, from.decimals),
        max: formatAtomic(range.maxIn, from.decimals),
        token: from.symbol,
      },
      typicalDurationSec: found.kind === 'routes' && viable.length > 0 ? found.ranked.BALANCED.durationP50Sec : null,
    },
  ]
}

function corridorsOf(deps: ServiceDeps, sold: SoldRoutes | undefined): CorridorsResponse['corridors'] {
  const { catalogue } = deps
  return catalogue.corridors.map((row) => {
    const byChain = row.chains.map((chain) => {
      const unsold = new Set<ChainCode>()
      const legs = row.agentCallable ? corridorPairs(catalogue, row, chain).flatMap((pair) => legOf(deps, sold, pair, unsold)) : []
      if (!row.agentCallable || legs.length > 0) return { chain, live: legs.length > 0, legs }
      // Say why, with the figures (DESIGN 7.20): the row stays, as the catalogue advertises it.
      const status = cellStatus(catalogue, row, chain)
      const what = `${row.from} to ${row.to} on ${chain}`
      const notServed = status.isServed
        ? sold !== undefined && unsold.size > 0
          ? routerNotServed(sold, [...unsold], what)
          : { reason: 'no_route' as const, detail: `no amount of ${row.from} reaches ${row.to} on ${chain} at today's prices` }
        : {
            reason: status.reason,
            detail: status.detail,
            ...(status.costBps === undefined ? {} : { costBps: status.costBps }),
            ...(status.feeBps === undefined ? {} : { feeBps: status.feeBps }),
          }
      return { chain, live: false, legs, notServed }
    })
    return {
      ...row,
      description: fillAppUrl(row.description, deps.appUrl),
      live: byChain.some((entry) => entry.live),
      ...(row.agentCallable ? {} : { appUrl: deps.appUrl }),
      byChain,
    }
  })
}
