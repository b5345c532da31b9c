import { type Catalogue, cellStatus } from '../engine/index.ts'
import type { CorridorEntry } from '../schemas/catalogue.ts'
import type { CapabilityManifest } from '../schemas/discovery.ts'
import type { NotServedWire } from '../schemas/quote.ts'
import type { ServiceDeps } from './deps.ts'
import { fillAppUrl } from './fillAppUrl.ts'
import { listCorridors } from './listCorridors.ts'
import { soldRoutesOf } from './routerNotSold.ts'

type NotServedOn = (NotServedWire & { chain: CorridorEntry['chains'][number] })[]

const notServedMemo = new WeakMap<Catalogue, Map<CorridorEntry, NotServedOn>>()

/** The listed chains where an agent-callable row is not served, and why; computed once per catalogue and row. */
function notServedChains(catalogue: Catalogue, row: CorridorEntry): NotServedOn {
  let byRow = notServedMemo.get(catalogue)
  if (byRow === undefined) {
    byRow = new Map()
    notServedMemo.set(catalogue, byRow)
  }
  let found = byRow.get(row)
  if (found === undefined) {
    found = row.agentCallable
      ? row.chains.flatMap((chain) => {
          const status = cellStatus(catalogue, row, chain)
          if (status.isServed) return []
          const { isServed: _isServed, ...why } = status
          return [{ chain, ...why }]
        })
      : []
    byRow.set(row, found)
  }
  return found
}

/**
 * The listed chains where a row routes but none of its routes is sold here, as the corridor listing says
 * (router_not_deployed): only where this deployment's paid swap refuses routes that need a router it has not set.
 */
function unsoldChains(deps: ServiceDeps, index: number): NotServedOn {
  if (soldRoutesOf(deps) === undefined) return []
  const row = listCorridors(deps).corridors[index]
  return (row?.byChain ?? []).flatMap(({ chain, notServed }) =>
    notServed?.reason === 'router_not_deployed' ? [{ chain, ...notServed }] : [],
  )
}

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
    corridors: files.corridors.corridors.map((row, index) => {
      // The spec's row as the catalogue advertises it; where it is not served now, why (DESIGN 7.20).
      const notServedOn = [...notServedChains(catalogue, row), ...unsoldChains(deps, index)]
      return { ...row, description: fillAppUrl(row.description, appUrl), ...(notServedOn.length === 0 ? {} : { notServedOn }) }
    }),
    moat: pricing.moat,
    agentPayments: {
      x402: {
        description: `Pay per call over x402: USD ${pricing.agentCallFeeUsdc} in USDC on Base; no signup, no key. Quotes are free. The 402 of POST /api/x402/swap (and of POST /api/mpp/swap) carries the x402 v1 challenge in its body and the same offer in x402 v2 in the PAYMENT-REQUIRED header. Pay with X-PAYMENT (v1; the 200 carries X-PAYMENT-RESPONSE) or PAYMENT-SIGNATURE (v2; the 200 carries PAYMENT-RESPONSE), one of them. The same payment with the same request gets the same swap again; a settlement still unconfirmed is 402 settlement_pending with Retry-After. Over MCP, build_swap on /mcp takes the v2 payment in _meta["x402/payment"].`,
        quoteEndpoint: 'POST /api/x402/quote',
        swapEndpoint: 'POST /api/x402/swap',
        manifest: '/.well-known/x402.json',
        price: { amount: pricing.agentCallFeeUsdc, currency: 'USD', asset: 'USDC', network: 'base', atomicAmount: '20000' },
        headers: {
          challenge: ['PAYMENT-REQUIRED'],
          payment: ['X-PAYMENT', 'PAYMENT-SIGNATURE'],
          receipt: ['X-PAYMENT-RESPONSE', 'PAYMENT-RESPONSE'],
        },
      },
      mpp: describeMpp(deps, pricing.mppCallFeePathUsd),
    },
    pricing: {
      quote: 'free',
      swap: `${feePercent} of the swap amount, all-in (gas of the bridge relayer, bridge, DEX and slippage included), plus the USD ${pricing.agentCallFeeUsdc} agent call fee on the pay-per-call paths`,
      benchmark: pricing.benchmark,
    },
    discovery: {
      swapStatus:
        'After a build, GET /api/v1/swap/{ref}/status (no key: the reference is enough) answers what the chains show of the swap (state built, pending, done with completed, partial or refunded, failed or expired; each transaction with its explorer link; the amounts sent and received) and what to do next. POST /api/v1/swap/{ref}/transaction {txHash} optionally reports the broadcast transaction. Over MCP: track_swap.',
      unsupportedPairResponse:
        'A quote for a pair no route joins answers HTTP 200 {"supported": false, "reason": "no_route_found", "pair": "<fromToken>-><toToken>"}, so agents can probe corridors for free before paying for a swap.',
    },
  }
}

/** The MPP rail as this deployment offers it: available only with a Tempo RPC (DESIGN 7.25). */
function describeMpp(deps: ServiceDeps, feePathUsd: string): CapabilityManifest['agentPayments']['mpp'] {
  const endpoints = { quoteEndpoint: 'POST /api/mpp/quote', swapEndpoint: 'POST /api/mpp/swap' }
  const price = { amount: feePathUsd, currency: 'USD', asset: 'pathUSD', network: 'tempo', atomicAmount: '20000' }
  const { mpp } = deps
  if (mpp === undefined)
    return {
      description: `Machine Payments Protocol rail (${feePathUsd} pathUSD on Tempo per swap call): not available on this deployment, which has no Tempo RPC to verify payments with; POST /api/mpp/swap takes x402 only.`,
      ...endpoints,
      price,
      headers: { challenge: [], payment: [], receipt: [] },
      available: false,
    }
  return {
    headers: { challenge: ['WWW-Authenticate'], payment: ['Authorization'], receipt: ['Payment-Receipt'] },
    description: `Machine Payments Protocol: ${feePathUsd} pathUSD on Tempo (chain ${mpp.chainId}) per swap call, the same handler as x402. The 402 of POST /api/mpp/swap carries WWW-Authenticate: Payment (mppx tempo charge, push mode): send the pathUSD transfer with the challenge's memo, then repeat the request with Authorization: Payment holding the transaction hash; the 200 carries Payment-Receipt.`,
    ...endpoints,
    price,
    available: true,
    tempo: {
      method: 'tempo',
      intent: 'charge',
      modes: ['push'],
      chainId: mpp.chainId,
      currency: mpp.currency,
      recipient: mpp.recipient,
      realm: mpp.realm,
    },
  }
}
