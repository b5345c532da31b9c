import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { candidateRoutes, compileCatalogue, findRoutes, isEvmToken, unbuildableSteps } from '../../src/engine/index.ts'
import { venueEncodingGap } from '../../src/engine/encodingGaps.ts'
import { VENUE_ENCODINGS } from '../../src/schemas/encodings.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const { catalogue, files } = loadCatalogue(MANIFEST)

describe('encodability is decided when the catalogue compiles (DESIGN 7.20)', () => {
  it('marks a venue without an encoder, or without a parameter its encoder reads, and names what is missing', () => {
    expect(venueEncodingGap({ name: 'Nowhere', protocol: 'no-such-protocol', chain: 'ETH', params: {} })).toEqual({
      reason: 'no_encoding',
      detail: 'SwapEazi cannot yet build a swap on Nowhere (no-such-protocol) on Ethereum',
    })
    expect(venueEncodingGap({ name: 'Uni', protocol: 'uniswap-v3', chain: 'BAS', params: {} })).toMatchObject({ reason: 'missing_param' })
    expect(venueEncodingGap({ name: 'Uni', protocol: 'uniswap-v3', chain: 'BAS', params: { feeTier: '100' } })).toMatchObject({
      reason: 'missing_param',
    })
    expect(venueEncodingGap({ name: 'Uni', protocol: 'uniswap-v3', chain: 'BAS', params: { feeTier: 100 } })).toBeUndefined()
  })

  it('declares what every shipped venue needs: each shipped venue is buildable', () => {
    for (const venue of catalogue.venues) expect(venue.gap, venue.id).toBeUndefined()
    for (const venue of catalogue.venues) expect(Object.keys(VENUE_ENCODINGS)).toContain(venue.protocol)
  })

  it('never offers a route through a venue it cannot build, and says which step is missing', () => {
    // The same catalogue with one venue's encoder parameter removed: every route through it disappears.
    const venue = catalogue.venues.find((v) => v.protocol === 'uniswap-v3')
    if (!venue) throw new Error('the catalogue has no Uniswap v3 venue')
    const stripped = compileCatalogue({
      ...files,
      venues: { ...files.venues, venues: files.venues.venues.map((entry) => (entry.id === venue.id ? { ...entry, params: {} } : entry)) },
    })
    const [from, to] = venue.tokens
    if (!from || !to) throw new Error(`venue ${venue.id} has fewer than two tokens`)
    const through = (routes: readonly { sourceSwaps: readonly { venue: { id: string } }[] }[]): number =>
      routes.filter((route) => route.sourceSwaps.some((edge) => edge.venue.id === venue.id)).length
    const strippedFrom = stripped.tokens.get(from.key)
    const strippedTo = stripped.tokens.get(to.key)
    if (!strippedFrom || !isEvmToken(strippedFrom) || !strippedTo || !isEvmToken(strippedTo)) throw new Error('tokens vanished')
    expect(through(candidateRoutes(catalogue, from, to))).toBeGreaterThan(0)
    expect(through(candidateRoutes(stripped, strippedFrom, strippedTo))).toBe(0)
    expect(unbuildableSteps(stripped, strippedFrom, strippedTo)).toContainEqual({
      step: venue.id,
      chain: venue.chain,
      gap: expect.objectContaining({ reason: 'missing_param' }),
    })
    const found = findRoutes(stripped, { from: strippedFrom, to: strippedTo, amountIn: 10n ** BigInt(from.decimals + 3), slippageE18: 0n })
    if (found.kind === 'routes') for (const priced of found.viable) expect(priced.route.id).not.toContain(venue.id)
  })

  it('puts a swap on arrival only behind a lane that can carry it', () => {
    let checked = 0
    for (const from of catalogue.tokensByLowerKey.values())
      for (const to of catalogue.tokensByLowerKey.values()) {
        if (!isEvmToken(from) || !isEvmToken(to) || from.chain === to.chain) continue
        for (const route of candidateRoutes(catalogue, from, to))
          if (route.destinationSwaps.length > 0) {
            expect(route.bridge?.composeGap, route.id).toBeUndefined()
            checked++
          }
      }
    expect(checked).toBeGreaterThan(100)
  })
})
