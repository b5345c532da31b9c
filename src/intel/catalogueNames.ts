import type { Bridge, Catalogue, Token } from '../engine/index.ts'

/** What a same-chain swap names as its bridge, in quotes and in observations. */
export const NO_BRIDGE = 'none'

/**
 * A bridge's name as quotes give it (QuoteResult.bridge, built by formatQuote's bridgeName): protocol plus mode
 * ("cctp-v2-fast", "stargate-v2-taxi"), else the protocol ("across"). Observations use the same names, so an agent
 * can hold a quote's bridge against the intelligence on it.
 */
export function bridgeWireName(bridge: Pick<Bridge, 'protocol' | 'mode'>): string {
  return bridge.mode ? `${bridge.protocol}-${bridge.mode}` : bridge.protocol
}

const namesByCatalogue = new WeakMap<Catalogue, readonly string[]>()
const tokensByCatalogue = new WeakMap<Catalogue, ReadonlyMap<string, Token>>()

/** Every bridge name an observation may carry: the catalogue's bridges, and "none". Sorted. */
export function knownBridgeNames(catalogue: Catalogue): readonly string[] {
  let names = namesByCatalogue.get(catalogue)
  if (names === undefined) {
    names = [...new Set([...catalogue.bridges.map(bridgeWireName), NO_BRIDGE])].sort()
    namesByCatalogue.set(catalogue, names)
  }
  return names
}

/** A token on a chain by symbol, case-insensitive, hubs included (routes pass through them, so transfers do too). */
export function findCatalogueToken(catalogue: Catalogue, chain: string, symbol: string): Token | undefined {
  let index = tokensByCatalogue.get(catalogue)
  if (index === undefined) {
    index = new Map([...catalogue.tokens.values()].map((token) => [`${token.chain}:${token.symbol.toLowerCase()}`, token]))
    tokensByCatalogue.set(catalogue, index)
  }
  return index.get(`${chain}:${symbol.toLowerCase()}`)
}
