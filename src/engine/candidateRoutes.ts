import type { EncodingGap } from '../schemas/encodings.ts'
import { type CandidateRoute, routeId } from './route.ts'
import type { BridgeLane, Catalogue, SwapEdge, Token } from './types.ts'

/** At most this many swaps in a route, across both chains (DESIGN 4: swap, bridge, swap; two hops a side). */
const MAX_SWAPS = 3
const MAX_HOPS_PER_CHAIN = 2

const memo = new WeakMap<Catalogue, Map<string, readonly CandidateRoute[]>>()

/** Same-chain swap paths of one or two hops from `from` to `to`; the empty path when they are the same token. */
function paths(catalogue: Catalogue, from: Token, to: Token, isUsable: (edge: SwapEdge) => boolean): SwapEdge[][] {
  if (from.key === to.key) return [[]]
  const found: SwapEdge[][] = []
  for (const first of catalogue.edgesFrom.get(from.key) ?? []) {
    if (!isUsable(first)) continue
    if (first.to.key === to.key) {
      found.push([first])
      continue
    }
    if (MAX_HOPS_PER_CHAIN < 2) continue
    for (const second of catalogue.edgesFrom.get(first.to.key) ?? []) {
      if (isUsable(second) && second.to.key === to.key && second.venue !== first.venue) found.push([first, second])
    }
  }
  return found
}

const isBuildable = (edge: SwapEdge): boolean => edge.venue.gap === undefined
const any = (): boolean => true

/** Same-chain swap paths a transaction can be built through (DESIGN 7.20: never a venue the encoders cannot build). */
export function swapPaths(catalogue: Catalogue, from: Token, to: Token): SwapEdge[][] {
  return paths(catalogue, from, to, isBuildable)
}

/** Every route shape joining two tokens, or only those a transaction can be built for. */
function shapes(catalogue: Catalogue, from: Token, to: Token, buildableOnly: boolean): CandidateRoute[] {
  const isUsable = buildableOnly ? isBuildable : any
  const routes: CandidateRoute[] = []
  if (from.chain === to.chain) {
    for (const path of paths(catalogue, from, to, isUsable)) {
      if (path.length === 0) continue
      routes.push({ id: routeId(path, undefined, []), from, to, sourceSwaps: path, destinationSwaps: [] })
    }
    return routes
  }
  for (const lane of catalogue.lanes.get(`${from.chain}>${to.chain}`) ?? []) {
    if (buildableOnly && lane.gap !== undefined) continue
    const before = paths(catalogue, from, lane.from, isUsable)
    if (before.length === 0) continue
    // A swap after the bridge runs in our executor there, so the deposit must be able to carry its order, and the live
    // market must be able to price the fee of one that does.
    const after = paths(catalogue, lane.to, to, isUsable).filter(
      (path) => path.length === 0 || ((!buildableOnly || lane.composeGap === undefined) && lane.composeFeeGap === undefined),
    )
    for (const sourceSwaps of before) {
      for (const destinationSwaps of after) {
        if (sourceSwaps.length + destinationSwaps.length > MAX_SWAPS) continue
        routes.push({ id: routeId(sourceSwaps, lane, destinationSwaps), from, to, sourceSwaps, bridge: lane, destinationSwaps })
      }
    }
  }
  return routes
}

/**
 * Every route shape of DESIGN 4 joining two tokens that a transaction can be built for: a same-chain swap, or swaps
 * on the source chain, one bridge lane, swaps on the destination chain. Venues and lanes the encoders cannot build
 * are never used (the catalogue marks them when it compiles), so a quote never offers what a build would refuse.
 * Structure does not depend on the amount, so it is computed once per pair.
 */
export function candidateRoutes(catalogue: Catalogue, from: Token, to: Token): readonly CandidateRoute[] {
  let cache = memo.get(catalogue)
  if (!cache) {
    cache = new Map()
    memo.set(catalogue, cache)
  }
  const key = `${from.key}>${to.key}`
  const cached = cache.get(key)
  if (cached) return cached
  const routes = shapes(catalogue, from, to, true)
  cache.set(key, routes)
  return routes
}

/** A step no transaction can be built through, on a route that would otherwise join the pair. */
export type UnbuildableStep = { step: string; chain: string; gap: EncodingGap }

/**
 * Why two tokens have fewer routes than the catalogue's venues and bridges suggest: each step that cannot be built,
 * once, from the routes that would join the pair if it could. Empty when nothing is missing. For refusals only.
 */
export function unbuildableSteps(catalogue: Catalogue, from: Token, to: Token): UnbuildableStep[] {
  const steps = new Map<string, UnbuildableStep>()
  const note = (id: string, chain: string, gap: EncodingGap | undefined): void => {
    if (gap !== undefined && !steps.has(id)) steps.set(id, { step: id, chain, gap })
  }
  for (const route of shapes(catalogue, from, to, false)) {
    for (const edge of [...route.sourceSwaps, ...route.destinationSwaps]) note(edge.venue.id, edge.venue.chain, edge.venue.gap)
    const lane: BridgeLane | undefined = route.bridge
    if (lane !== undefined) {
      const id = `${lane.bridge.id}:${lane.from.chain}>${lane.to.chain}`
      note(id, lane.from.chain, lane.gap)
      if (route.destinationSwaps.length > 0) note(`${id}:compose`, lane.to.chain, lane.composeGap)
    }
  }
  return [...steps.values()]
}
