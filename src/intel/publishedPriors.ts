import { bridgeWireName, type Catalogue, type ChainInfo } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { PairSide } from './parsePairCode.ts'

export type PriorFigures = { bridge: string; settlementSec: { p50: number; p95: number } }

export type PublishedPriorsReturnType = {
  /** Bridges with a lane from a source-side chain to a destination-side chain, fastest median first. */
  bridges: PriorFigures[]
  /** Some agent-callable chain is on both sides, so a same-chain swap (no bridge) can serve the pair. */
  hasSameChainRoute: boolean
}

/** The chains a side spans: the chain itself, or every chain listing a token of the currency (hubs included). */
function chainsOf(catalogue: Catalogue, side: PairSide): ChainCode[] {
  if (side.kind === 'chain') return [side.code]
  const chains = new Set<ChainCode>()
  for (const token of catalogue.tokens.values()) if (token.currency === side.code) chains.add(token.chain)
  return [...catalogue.chains.values()].map((chain: ChainInfo) => chain.id).filter((id) => chains.has(id))
}

/**
 * The settlement-time priors the catalogue publishes for a pair (manifest/bridges.json, routing.md 3.5): each bridge
 * joining the sides, with its p50/p95 for the source chain. Where a currency side spans several source chains the
 * slowest of their priors is given, so a prior never promises more than one of those chains gets.
 */
export function publishedPriors(catalogue: Catalogue, pair: { from: PairSide; to: PairSide }): PublishedPriorsReturnType {
  const sources = chainsOf(catalogue, pair.from)
  const destinations = chainsOf(catalogue, pair.to)
  const byName = new Map<string, { p50: number; p95: number }>()
  for (const source of sources)
    for (const destination of destinations) {
      if (source === destination) continue
      for (const lane of catalogue.lanes.get(`${source}>${destination}`) ?? []) {
        const prior = lane.bridge.durationBySource[source] ?? lane.bridge.durationDefault
        const name = bridgeWireName(lane.bridge)
        const known = byName.get(name)
        byName.set(
          name,
          known === undefined
            ? { p50: prior.p50Sec, p95: prior.p95Sec }
            : { p50: Math.max(known.p50, prior.p50Sec), p95: Math.max(known.p95, prior.p95Sec) },
        )
      }
    }
  const bridges = [...byName].map(([bridge, figures]) => ({ bridge, settlementSec: figures }))
  bridges.sort(
    (a, b) => a.settlementSec.p50 - b.settlementSec.p50 || a.settlementSec.p95 - b.settlementSec.p95 || a.bridge.localeCompare(b.bridge),
  )
  // Same-chain swaps are served only where quotes are (DESIGN 7.1: not SOL or TRX).
  const hasSameChainRoute = sources.some((chain) => destinations.includes(chain) && catalogue.chains.get(chain)?.isAgentCallable === true)
  return { bridges, hasSameChainRoute }
}
