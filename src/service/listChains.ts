import type { ChainsResponse } from '../schemas/discovery.ts'
import type { ServiceDeps } from './deps.ts'
import { fillAppUrl } from './fillAppUrl.ts'

/** Networks with their user-facing tokens, addresses and decimals. */
export function listChains(deps: ServiceDeps): ChainsResponse {
  return {
    chains: [...deps.catalogue.chains.values()].map((chain) => ({
      id: chain.id,
      name: chain.name,
      chainId: chain.chainId,
      agentCallable: chain.isAgentCallable,
      ...(chain.note ? { note: fillAppUrl(chain.note, deps.appUrl) } : {}),
      tokens: chain.tokens.map((symbol) => {
        const token = deps.catalogue.tokens.get(`${chain.id}:${symbol}`)
        if (!token) throw new RangeError(`${chain.id}:${symbol} missing from a compiled catalogue`)
        return { symbol: token.symbol, address: token.address, decimals: token.decimals, currency: token.currency }
      }),
    })),
  }
}
