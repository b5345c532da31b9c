import {
  bridgeWireName,
  cellStatus,
  corridorPairs,
  findRoutes,
  formatAtomic,
  numberToFixed,
  pow10,
  quotableRange,
} from '../engine/index.ts'
import { DEFAULT_SLIPPAGE } from '../schemas/quote.ts'
import type { CorridorsResponse } from '../schemas/discovery.ts'
import type { ServiceDeps } from './deps.ts'
import { fillAppUrl } from './fillAppUrl.ts'

/** Whole tokens of the source used to describe a corridor's venues, bridges and typical duration. */
const REFERENCE_UNITS = 1000n

const memo = new WeakMap<ServiceDeps['catalogue'], CorridorsResponse['corridors']>()

/**
 * The advertised corridors with what the engine can actually do on each listed chain: the legs (source and
 * destination chains) that route, their venues and bridges, viable amount range and typical duration. Computed once
 * per catalogue.
 */
export function listCorridors(deps: ServiceDeps): CorridorsResponse {
  const { catalogue } = deps
  let corridors = memo.get(catalogue)
  if (!corridors) {
    corridors = catalogue.corridors.map((row) => {
      const byChain = row.chains.map((chain) => {
        const legs = row.agentCallable
          ? corridorPairs(catalogue, row, chain).flatMap(({ from, to }) => {
              const amountIn = REFERENCE_UNITS * pow10(from.decimals)
              const slippageE18 = numberToFixed(DEFAULT_SLIPPAGE) ?? 0n
              const found = findRoutes(catalogue, { from, to, amountIn, slippageE18 })
              // What a quote at the default slippage takes: its least amount is one whose minimum is not 0.
              const range = quotableRange(catalogue, from, to, slippageE18)
              if (!range) return []
              const viable = found.kind === 'routes' ? found.viable : []
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
                  typicalDurationSec: found.kind === 'routes' ? found.ranked.BALANCED.durationP50Sec : null,
                },
              ]
            })
          : []
        if (!row.agentCallable || legs.length > 0) return { chain, live: legs.length > 0, legs }
        // Say why, with the figures (DESIGN 7.20): the row stays, as the catalogue advertises it.
        const status = cellStatus(catalogue, row, chain)
        const notServed = status.isServed
          ? { reason: 'no_route' as const, detail: `no amount of ${row.from} reaches ${row.to} on ${chain} at today's prices` }
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
    memo.set(catalogue, corridors)
  }
  return { referenceAmount: REFERENCE_UNITS.toString(), corridors }
}
