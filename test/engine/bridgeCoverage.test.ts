import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { candidateRoutes } from '../../src/engine/candidateRoutes.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import type { CandidateRoute } from '../../src/engine/route.ts'
import type { BridgeLane } from '../../src/engine/types.ts'

const { catalogue, files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)

/** DESIGN 4 / routing.md: where each protocol does NOT go. */
const NO_COVERAGE: Record<string, readonly string[]> = {
  'cctp-v2': ['BNB', 'GNO', 'CEL', 'SOL', 'TRX'],
  across: ['GNO', 'CEL', 'SOL', 'TRX'],
}

/**
 * Every candidate route between every ordered pair of (chain, token) nodes, hub tokens included; the tokens of Solana
 * and Tron are listed for discovery only, and no route carries them.
 */
const nodes = [...catalogue.tokens.values()].filter(isEvmToken)
const routes: CandidateRoute[] = []
for (const from of nodes) for (const to of nodes) if (from.key !== to.key) routes.push(...candidateRoutes(catalogue, from, to))
const bridged = routes.filter((route): route is CandidateRoute & { bridge: BridgeLane } => route.bridge !== undefined)

describe('bridge coverage over every pair of catalogue nodes', () => {
  it('enumerates every node pair and finds bridged routes of every protocol', () => {
    expect(nodes.length).toBe(51)
    expect(bridged.length).toBeGreaterThan(1000)
    expect(new Set(bridged.map((r) => r.bridge.bridge.protocol))).toEqual(new Set(['cctp-v2', 'across', 'stargate-v2', 'usdt0-oft']))
  })

  it('never uses CCTP into or out of BNB, GNO or CEL', () => {
    const bad = bridged.filter(
      (r) =>
        r.bridge.bridge.protocol === 'cctp-v2' &&
        (NO_COVERAGE['cctp-v2'] ?? []).some((c) => c === r.bridge.from.chain || c === r.bridge.to.chain),
    )
    expect(bad.map((r) => r.id)).toEqual([])
  })

  it('never uses Across into or out of GNO or CEL', () => {
    const bad = bridged.filter(
      (r) =>
        r.bridge.bridge.protocol === 'across' &&
        (NO_COVERAGE.across ?? []).some((c) => c === r.bridge.from.chain || c === r.bridge.to.chain),
    )
    expect(bad.map((r) => r.id)).toEqual([])
  })

  it('reaches GNO and CEL only by Stargate and USDT0', () => {
    const reaching = bridged.filter((r) => ['GNO', 'CEL'].includes(r.bridge.to.chain))
    expect(reaching.length).toBeGreaterThan(0)
    expect(new Set(reaching.map((r) => r.bridge.bridge.id))).toEqual(
      new Set(['stargate-usdc-taxi', 'stargate-usdc-bus', 'usdt0-legacy-mesh']),
    )
  })

  it('invents no lane: both ends of every lane used are endpoints in bridges.json, the source one able to send', () => {
    for (const route of bridged) {
      const lane = route.bridge
      const entry = files.bridges.bridges.find((b) => b.id === lane.bridge.id)
      expect(entry, route.id).toBeDefined()
      const source = entry?.endpoints.find((e) => e.chain === lane.from.chain && e.token === lane.from.symbol)
      const destination = entry?.endpoints.find((e) => e.chain === lane.to.chain && e.token === lane.to.symbol)
      expect(source, `${route.id}: source endpoint`).toBeDefined()
      expect(destination, `${route.id}: destination endpoint`).toBeDefined()
      expect(source?.inboundOnly, route.id).not.toBe(true)
      expect(lane.sourceContract, route.id).toBe(source?.contract)
      expect(lane.destinationDomain, route.id).toBe(destination?.domain)
      expect(lane.from.chain, route.id).not.toBe(lane.to.chain)
      // The route's swaps sit on the lane's chains: before it on the source, after it on the destination.
      for (const edge of route.sourceSwaps) expect(edge.venue.chain, route.id).toBe(lane.from.chain)
      for (const edge of route.destinationSwaps) expect(edge.venue.chain, route.id).toBe(lane.to.chain)
    }
  })

  it('lists no endpoint where the protocol has no coverage', () => {
    for (const bridge of files.bridges.bridges) {
      const excluded = NO_COVERAGE[bridge.protocol] ?? []
      for (const endpoint of bridge.endpoints) expect(excluded, `${bridge.id} ${endpoint.chain}`).not.toContain(endpoint.chain)
    }
  })

  it('starts no lane at an inbound-only endpoint (USDT0 legacy mesh delivers to Celo, does not leave it)', () => {
    expect(bridged.filter((r) => r.bridge.bridge.id === 'usdt0-legacy-mesh' && r.bridge.from.chain === 'CEL')).toEqual([])
    expect(catalogue.lanes.get('CEL>ARB') ?? []).toEqual([])
    expect((catalogue.lanes.get('ARB>CEL') ?? []).map((l) => l.bridge.id)).toEqual(['usdt0-legacy-mesh'])
  })

  it('keeps every route to at most one bridge and three swaps, two a side', () => {
    for (const route of routes) {
      expect(route.sourceSwaps.length + route.destinationSwaps.length, route.id).toBeLessThanOrEqual(3)
      expect(route.sourceSwaps.length, route.id).toBeLessThanOrEqual(2)
      expect(route.destinationSwaps.length, route.id).toBeLessThanOrEqual(2)
      if (!route.bridge) expect(route.destinationSwaps, route.id).toEqual([])
    }
  })

  it('gives SOL and TRX tokens no route at all', () => {
    const touching = routes.filter((r) => ['SOL', 'TRX'].includes(r.from.chain) || ['SOL', 'TRX'].includes(r.to.chain))
    expect(touching.map((r) => r.id)).toEqual([])
  })
})
