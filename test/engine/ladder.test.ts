import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { CatalogueError, compileCatalogue } from '../../src/engine/compileCatalogue.ts'
import { findRoutes } from '../../src/engine/findRoutes.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import { ladderOut } from '../../src/engine/swapOut.ts'
import type { Catalogue, Token } from '../../src/engine/types.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const { files } = loadCatalogue(MANIFEST)
const VENUE = 'eth-univ3-eure-usdc-500'

/** The manifest's catalogue with the ETH EURe/USDC venue priced from a live quote ladder instead of its snapshot depth. */
function withLadder(ladder: { from: string; to: string; points: [string, string][] }[]): Catalogue {
  return compileCatalogue({
    ...files,
    market: { ...files.market, venues: { ...files.market.venues, [VENUE]: { ladder, source: 'test: a stand-in QuoterV2' } } },
  })
}

function token(catalogue: Catalogue, key: string): Token {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`no token ${key}`)
  return found
}

const usdc = (whole: bigint): bigint => whole * 10n ** 6n
const eure = (whole: bigint): bigint => whole * 10n ** 18n

/** USDC → EURe at 1/1.16 less a little more impact at each size, as a concave venue quotes. */
const USDC_TO_EURE: [string, string][] = [
  [String(usdc(1_000n)), String((eure(1_000n) * 100n) / 116n - eure(1n))],
  [String(usdc(10_000n)), String((eure(10_000n) * 100n) / 116n - eure(20n))],
  [String(usdc(100_000n)), String((eure(100_000n) * 100n) / 116n - eure(400n))],
]

describe('quote ladders: a depth venue priced from live quotes at fixed sizes', () => {
  it('answers each quoted size exactly and interpolates linearly between them, rounding down', () => {
    const ladder = { amountsIn: [10n, 20n], amountsOut: [9n, 17n] }
    expect(ladderOut(ladder, 10n)).toBe(9n)
    expect(ladderOut(ladder, 20n)).toBe(17n)
    // Below the first point: the chord from (0, 0), 5 × 9 / 10 = 4.5, rounded down.
    expect(ladderOut(ladder, 5n)).toBe(4n)
    // 9 + 8 × 5 / 10 = 13.
    expect(ladderOut(ladder, 15n)).toBe(13n)
    expect(ladderOut(ladder, 21n)).toBe(0n)
  })

  it('prices the route from the ladder, not the snapshot depth', () => {
    const catalogue = withLadder([{ from: 'USDC', to: 'EURe', points: USDC_TO_EURE }])
    const from = token(catalogue, 'ETH:USDC')
    const to = token(catalogue, 'ETH:EURe')
    const result = findRoutes(catalogue, { from, to, amountIn: usdc(10_000n), slippageE18: 5n * 10n ** 15n })
    if (result.kind !== 'routes') throw new Error(result.kind)
    const direct = result.viable.find((route) => route.route.sourceSwaps.some((edge) => edge.venue.id === VENUE))
    const step = direct?.steps.find((candidate) => candidate.kind === 'swap' && candidate.id === VENUE)
    expect(step?.amountIn).toBe(usdc(10_000n))
    expect(step?.amountOut).toBe(BigInt((USDC_TO_EURE[1] as [string, string])[1]))
  })

  it('quotes nothing beyond the largest size: the route is refused as above the venue liquidity', () => {
    const catalogue = withLadder([{ from: 'USDC', to: 'EURe', points: USDC_TO_EURE }])
    const from = token(catalogue, 'ETH:USDC')
    const to = token(catalogue, 'ETH:EURe')
    const result = findRoutes(catalogue, { from, to, amountIn: usdc(150_000n), slippageE18: 5n * 10n ** 15n })
    const rejections = result.kind === 'no_route' ? [] : result.rejected
    const throughVenue = rejections.filter((rejection) => rejection.routeId === `${VENUE}:USDC>EURe`)
    expect(throughVenue).toEqual([{ routeId: `${VENUE}:USDC>EURe`, reason: 'above_venue_liquidity' }])
  })

  it('offers only the directions the ladder was quoted in', () => {
    const catalogue = withLadder([{ from: 'USDC', to: 'EURe', points: USDC_TO_EURE }])
    const edges = catalogue.edgesFrom.get('ETH:EURe') ?? []
    expect(edges.some((edge) => edge.venue.id === VENUE)).toBe(false)
    expect((catalogue.edgesFrom.get('ETH:USDC') ?? []).some((edge) => edge.venue.id === VENUE)).toBe(true)
  })

  it('refuses a ladder that does not rise strictly, or names a direction the venue does not have', () => {
    const flat: [string, string][] = [
      ['1000', '900'],
      ['2000', '900'],
    ]
    expect(() => withLadder([{ from: 'USDC', to: 'EURe', points: flat }])).toThrow(CatalogueError)
    expect(() => withLadder([{ from: 'USDC', to: 'DAI', points: USDC_TO_EURE }])).toThrow(/not a direction of this venue/)
  })
})
