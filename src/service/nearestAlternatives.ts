import { findRoutes, formatAtomic, isEvmToken, type Token } from '../engine/index.ts'
import type { ServiceDeps } from './deps.ts'
import type { ResolvedQuoteRequest } from './resolveQuoteRequest.ts'

/** A served destination in the same currency as the one asked for, with what the same input would receive. */
export type Alternative = { toChain: string; toToken: string; toAmount: string }

const MAX_ALTERNATIVES = 3

/**
 * Up to three nearest destinations that can be built for the same input (DESIGN 7.20): another token of the same
 * currency on the same chain first, then the same token on other chains; never another currency. Each with its
 * quote amount, best first within each kind.
 */
export function nearestAlternatives(
  deps: Pick<ServiceDeps, 'catalogue'>,
  request: Pick<ResolvedQuoteRequest, 'from' | 'to' | 'amountIn' | 'slippageE18'>,
): Alternative[] {
  const { catalogue } = deps
  const { from, to, amountIn, slippageE18 } = request
  const candidates: { token: Token; isSameChain: boolean }[] = []
  for (const token of catalogue.tokensByLowerKey.values()) {
    if (!isEvmToken(token) || token.key === to.key || token.currency !== to.currency) continue
    if (!catalogue.chains.get(token.chain)?.isAgentCallable) continue
    const isSameChain = token.chain === to.chain
    if (isSameChain || token.symbol === to.symbol) candidates.push({ token, isSameChain })
  }
  const served = candidates.flatMap(({ token, isSameChain }) => {
    const found = findRoutes(catalogue, { from, to: token, amountIn, slippageE18 })
    return found.kind === 'routes' ? [{ token, isSameChain, toAmount: found.amounts.toAmount }] : []
  })
  served.sort((a, b) => Number(b.isSameChain) - Number(a.isSameChain) || a.token.key.localeCompare(b.token.key))
  return served
    .slice(0, MAX_ALTERNATIVES)
    .map(({ token, toAmount }) => ({ toChain: token.chain, toToken: token.symbol, toAmount: formatAtomic(toAmount, token.decimals) }))
}

/** The alternatives as one sentence for an agent: "Nearest served: 995 USDC on ARB, …", or nothing to suggest. */
export function describeAlternatives(alternatives: readonly Alternative[]): string {
  if (alternatives.length === 0) return 'No other destination in that currency is served for this amount.'
  return `Nearest served for the same input: ${alternatives.map((a) => `${a.toAmount} ${a.toToken} on ${a.toChain}`).join(', ')}.`
}
