import type { ChainCode, CorridorEntry } from '../schemas/catalogue.ts'
import { isEvmToken } from './isEvmToken.ts'
import type { Catalogue, Token } from './types.ts'

export type TokenPair = { from: Token; to: Token }

/**
 * DESIGN 4: the token pairs through which a corridor row is served on `chain`. Both tokens listed there: the
 * same-chain pair. Only `to` listed: `from` on every other agent-callable chain that lists it, into `to` there. Only
 * `from` listed: `from` there into `to` on every other agent-callable chain that lists it. The row is served on the chain when any pair routes.
 * Tokens of discovery-only chains (Solana, Tron) form no pair: no venue or lane carries them.
 */
export function corridorPairs(catalogue: Catalogue, row: CorridorEntry, chain: ChainCode): TokenPair[] {
  const on = (chainCode: ChainCode, symbol: string): Token | undefined => {
    const token = catalogue.tokens.get(`${chainCode}:${symbol}`)
    return token && !token.isHub && isEvmToken(token) ? token : undefined
  }
  const from = on(chain, row.from)
  const to = on(chain, row.to)
  if (from && to) return [{ from, to }]
  const pairs: TokenPair[] = []
  for (const [other, info] of catalogue.chains) {
    if (other === chain || !info.isAgentCallable) continue
    if (to) {
      const source = on(other, row.from)
      if (source) pairs.push({ from: source, to })
    } else if (from) {
      const destination = on(other, row.to)
      if (destination) pairs.push({ from, to: destination })
    }
  }
  return pairs
}
