import type { CapabilityManifest } from '../schemas/discovery.ts'
import type { ServiceDeps } from './deps.ts'
import { fillAppUrl } from './fillAppUrl.ts'

/** The capability manifest of spec 2.7, built from the catalogue; `{app_url}` is filled from configuration. */
export function describeCapabilities(deps: ServiceDeps): CapabilityManifest {
  const { files, catalogue, appUrl } = deps
  const supportedTokens: Record<string, { symbol: string; address: string; decimals: number }[]> = {}
  for (const chain of files.chains.chains) {
    supportedTokens[String(chain.chainId)] = chain.tokens.map((symbol) => {
      const token = catalogue.tokens.get(`${chain.id}:${symbol}`)
      if (!token) throw new RangeError(`${chain.id}:${symbol} missing from a compiled catalogue`)
      return { symbol: token.symbol, address: token.address, decimals: token.decimals }
    })
  }
  const { pricing } = files
  const feePercent = `${pricing.feeBps / 100}%`
  return {
    chains: files.chains.chains.map((chain) => ({ ...chain, ...(chain.note ? { note: fillAppUrl(chain.note, appUrl) } : {}) })),
    supportedTokens,
    corridors: files.corridors.corridors.map((row) => ({ ...row, description: fillAppUrl(row.description, appUrl) })),
    moat: pricing.moat,
    agentPayments: {
      x402: {
        description: `Pay per call over x402: USD ${pricing.agentCallFeeUsdc} in USDC on Base with an X-PAYMENT header; no signup, no key. Quotes are free.`,
        quoteEndpoint: 'POST /api/x402/quote',
        swapEndpoint: 'POST /api/x402/swap',
        manifest: '/.well-known/x402.json',
        price: { amount: pricing.agentCallFeeUsdc, currency: 'USD', asset: 'USDC', network: 'base', atomicAmount: '20000' },
      },
      mpp: {
        description: `Machine Payments Protocol rail: ${pricing.mppCallFeePathUsd} pathUSD per swap call, same handler as x402.`,
        quoteEndpoint: 'POST /api/mpp/quote',
        swapEndpoint: 'POST /api/mpp/swap',
        price: { amount: pricing.mppCallFeePathUsd, currency: 'USD', asset: 'pathUSD', network: 'tempo', atomicAmount: '20000' },
      },
    },
    pricing: {
      quote: 'free',
      swap: `${feePercent} of the swap amount, all-in (gas of the bridge relayer, bridge, DEX and slippage included), plus the USD ${pricing.agentCallFeeUsdc} agent call fee on the pay-per-call paths`,
      benchmark: pricing.benchmark,
    },
    discovery: {
      unsupportedPairResponse:
        'A quote for a pair no route joins answers HTTP 200 {"supported": false, "reason": "no_route_found", "pair": "<fromToken>-><toToken>"}, so agents can probe corridors for free before paying for a swap.',
    },
  }
}
