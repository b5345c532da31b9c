import { type CandidateRoute, routeId } from './route.ts'
import type { Catalogue, SwapEdge, Token } from './types.ts'

/** At most this many swaps in a route, across both chains (DESIGN 4: swap, bridge, swap; two hops a side). */
const MAX_SWAPS = 3
const MAX_HOPS_PER_CHAIN = 2

const memo = new WeakMap<Catalogue, Map<string, readonly CandidateRoute[]>>()

/** Same-chain swap paths of one or two hops from `from` to `to`; the empty path when they are the same token. */
export function swapPaths(catalogue: Catalogue, from: Token, to: Token): SwapEdge[][] {
  if (from.key === to.key) return [[]]
  const paths: SwapEdge[][] = []
  for (const first of catalogue.edgesFrom.get(from.key) ?? []) {
    if (first.to.key === to.key) {
      paths.push([first])
      continue
    }
    if (MAX_HOPS_PER_CHAIN < 2) continue
    for (const second of catalogue.edgesFrom.get(first.to.key) ?? []) {
      if (second.to.key === to.key && second.venue !== first.venue) paths.push([first, second])
    }
  }
  return paths
}

/**
 * Every route shape of DESIGN 4 joining two tokens: a same-chain swap, or swaps on the source chain, one bridge
 * lane, swaps on the destination chain. Structure does not depend on the amount, so it is computed once per pair.
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

  const routes: CandidateRoute[] = []
  if (from.chain === to.chain) {
    for (const path of swapPaths(catalogue, from, to)) {
      if (path.length === 0) continue
      routes.push({ id: routeId(path, undefined, []), from, to, sourceSwaps: path, destinationSwaps: [] })
    }
  } else {
    for (const lane of catalogue.lanes.get(`${from.chain}>${to.chain}`) ?? []) {
      const before = swapPaths(catalogue, from, lane.from)
      if (before.length === 0) continue
      // A swap after the bridge runs in our executor there, so the deposit must be able to carry its order.
      const after = swapPaths(catalogue, lane.to, to).filter((path) => path.length === 0 || lane.bridge.carriesDestinationCalls)
      for (const sourceSwaps of before) {
        for (const destinationSwaps of after) {
          if (sourceSwaps.length + destinationSwaps.length > MAX_SWAPS) continue
          routes.push({ id: routeId(sourceSwaps, lane, destinationSwaps), from, to, sourceSwaps, bridge: lane, destinationSwaps })
        }
      }
    }
  }
  cache.set(key, routes)
  return routes
}
