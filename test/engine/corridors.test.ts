import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { corridorPairs } from '../../src/engine/corridorPairs.ts'
import { findRoutes, type FindRoutesReturnType } from '../../src/engine/findRoutes.ts'
import type { PricedRoute } from '../../src/engine/route.ts'
import type { ChainCode, CorridorEntry } from '../../src/schemas/catalogue.ts'

const { catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)

const SLIPPAGE = 5n * 10n ** 15n

type Served = { pair: string; result: Extract<FindRoutesReturnType, { kind: 'routes' }> }

/** Every pair through which the row is served on `chain`, with its routes for 1,000 units of the from token. */
function served(row: CorridorEntry, chain: ChainCode): Served[] {
  const out: Served[] = []
  for (const { from, to } of corridorPairs(catalogue, row, chain)) {
    const result = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18: SLIPPAGE })
    if (result.kind === 'routes') out.push({ pair: `${from.key}>${to.key}`, result })
  }
  return out
}

/**
 * Cells the catalogue advertises but cannot serve, with the reason. USDC → cKES: Mento's v3 route costs 1.02% on its
 * own (shared/reference/live-chain.md (b)), twice the 0.5% fee (manifest/venues.json cel-mento-cusd-ckes).
 */
const UNSERVED = new Map<string, string>([['USDC → cKES on CEL', 'cost_exceeds_fee']])

const cases = catalogue.corridors
  .filter((row) => row.agentCallable)
  .flatMap((row) => row.chains.map((chain) => [`${row.from} → ${row.to} on ${chain}`, row, chain] as const))

describe('every agent-callable corridor is served on each of its chains (DESIGN 4)', () => {
  it('checks all 15 agent-callable rows on their 39 chains', () => {
    expect(catalogue.corridors.filter((row) => row.agentCallable)).toHaveLength(15)
    expect(cases).toHaveLength(39)
  })

  it.each(cases)('%s', (name, row, chain) => {
    const pairs = corridorPairs(catalogue, row, chain)
    expect(pairs.length).toBeGreaterThan(0)
    // Each pair names the row's tokens and touches the chain.
    for (const { from, to } of pairs) {
      expect([from.symbol, to.symbol]).toEqual([row.from, row.to])
      expect([from.chain, to.chain]).toContain(chain)
    }
    const ok = served(row, chain)
    if (UNSERVED.has(name)) {
      // Routed from some chains, but every route costs more than the fee earns: the row stays, and the cell reads as
      // not served, for that reason.
      expect(ok).toEqual([])
      const results = pairs
        .map(({ from, to }) => findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18: SLIPPAGE }))
        .filter((result) => result.kind !== 'no_route')
      expect(results.length).toBeGreaterThan(0)
      const reasons = results.flatMap((result) => (result.kind === 'not_viable' ? result.rejected.map((r) => r.reason) : [result.kind]))
      expect(new Set(reasons)).toEqual(new Set([UNSERVED.get(name)]))
      return
    }
    expect(ok.length).toBeGreaterThan(0)
    for (const { result } of ok) expect(result.amounts.toAmount > 0n).toBe(true)
  })

  it('leaves only USDC → cKES on CEL unserved', () => {
    expect(cases.filter(([, row, chain]) => served(row, chain).length === 0).map(([name]) => name)).toEqual([...UNSERVED.keys()])
  })
})

describe('FX corridors on GNO and CEL end in a swap on arrival', () => {
  const row = (from: string, to: string, chain: ChainCode): CorridorEntry => {
    const found = catalogue.corridors.find((r) => r.from === from && r.to === to && r.chains.includes(chain))
    if (!found) throw new Error(`no corridor ${from} → ${to} on ${chain}`)
    return found
  }

  it.each([
    ['USDC', 'EURe', 'GNO', 'gno-balancer-eure-usdce'],
    ['USDC', 'GBPe', 'GNO', 'gno-balancer-gbpe-usdce'],
  ] as const)('%s → %s on %s is bridged in and swapped there', (from, to, chain, lastVenue) => {
    const ok = served(row(from, to, chain), chain)
    expect(ok.length).toBeGreaterThan(0)
    const routes: PricedRoute[] = ok.flatMap(({ result }) => [...result.viable])
    for (const p of routes) {
      expect(p.route.from.chain).not.toBe(chain)
      expect(p.route.to.key).toBe(`${chain}:${to}`)
      expect(p.route.bridge?.to.chain).toBe(chain)
      expect(p.route.destinationSwaps.length).toBeGreaterThanOrEqual(1)
      expect(p.route.destinationSwaps.at(-1)?.venue.id).toBe(lastVenue)
    }
    // The BALANCED choice, the one the quote uses, also ends in the destination swap.
    for (const { result } of ok) expect(result.ranked.BALANCED.route.destinationSwaps.length).toBeGreaterThanOrEqual(1)
  })

  it('USDC → cKES on CEL draws on USDC from other agent-callable chains only (Celo USDC is a hub, Solana is user-signed)', () => {
    const pairs = corridorPairs(catalogue, row('USDC', 'cKES', 'CEL'), 'CEL')
    expect(pairs.map((p) => p.from.key).sort()).toEqual(['ARB:USDC', 'BAS:USDC', 'BNB:USDC', 'ETH:USDC', 'OPT:USDC', 'POL:USDC'])
  })

  it('USDC → cKES on CEL would be bridged in and swapped through Mento there, and is refused for its cost', () => {
    const pair = corridorPairs(catalogue, row('USDC', 'cKES', 'CEL'), 'CEL').find((p) => p.from.key === 'ARB:USDC')
    if (!pair) throw new Error('no ARB:USDC pair')
    const result = findRoutes(catalogue, { ...pair, amountIn: 1000n * 10n ** 6n, slippageE18: SLIPPAGE })
    expect(result).toMatchObject({ kind: 'not_viable', candidates: 1 })
    if (result.kind !== 'not_viable') return
    expect(result.rejected).toEqual([
      {
        routeId: 'arb-univ3-usdt-usdc-100:USDC>USDT|usdt0-legacy-mesh:ARB>CEL|cel-mento-usdt-cusd:USDT>cUSD|cel-mento-cusd-ckes:cUSD>cKES',
        reason: 'cost_exceeds_fee',
      },
    ])
  })
})
