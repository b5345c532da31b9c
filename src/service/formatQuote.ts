import {
  bridgeWireName,
  ceilDiv,
  E18,
  formatAtomic,
  formatFixedDown,
  formatFixedUp,
  NO_BRIDGE,
  type PricedRoute,
  type QuoteAmounts,
  usdValue,
} from '../engine/index.ts'
import { lowercaseAddress } from '../schemas/address.ts'
import type { QuoteResult } from '../schemas/quote.ts'
import type { ServiceDeps } from './deps.ts'
import { signQuoteId } from './quoteToken.ts'
import type { ResolvedQuoteRequest } from './resolveQuoteRequest.ts'

/** Bridge name on the wire: protocol plus mode ("cctp-v2-fast", "across"), or "none" for a same-chain swap. */
export function bridgeName(priced: PricedRoute): string {
  const lane = priced.route.bridge
  return lane ? bridgeWireName(lane.bridge) : NO_BRIDGE
}

/** DEX tools in order of use, each once, joined with "+"; "none" when the route is a bridge alone. */
export function toolName(priced: PricedRoute): string {
  const tools: string[] = []
  for (const edges of [priced.route.sourceSwaps, priced.route.destinationSwaps])
    for (const edge of edges) if (!tools.includes(edge.venue.tool)) tools.push(edge.venue.tool)
  return tools.length === 0 ? 'none' : tools.join('+')
}

let lastExpiry = { sec: Number.NaN, iso: '' }

/**
 * ISO 8601 text of a unix time in seconds. Every quote signed within the same second expires at the same time, so
 * the last text is kept: Date's formatting is a runtime call that cost about a microsecond on the live server.
 */
function isoOfSec(sec: number): string {
  if (lastExpiry.sec !== sec) lastExpiry = { sec, iso: new Date(sec * 1000).toISOString() }
  return lastExpiry.iso
}

/** 18-decimal fixed point per micro-USD, the precision costs are shown at. */
const E18_PER_MICRO = 10n ** 12n
/**
 * A cost in micro-USD as shown: rounded up, toward +∞ (a gain of -1.5 µUSD shows as -1), so no item, and no sum of
 * them, is ever less than what it costs.
 */
const shownMicro = (valueE18: bigint): bigint => (valueE18 < 0n ? -(-valueE18 / E18_PER_MICRO) : ceilDiv(valueE18, E18_PER_MICRO))
const microText = (micro: bigint): string => (micro < 0n ? `-${formatAtomic(-micro, 6)}` : formatAtomic(micro, 6))

/**
 * A route's real cost as shown: each item rounded up to the micro-USD, and the total their sum, so the items add up
 * to it (rounding the exact total once could leave it a few micro-USD under its items).
 */
export function realCostUsdOf(priced: Pick<PricedRoute, 'costs' | 'realCostUsdE18'>): { usd: string; items: string[] } {
  // Rounded as each item is, toward +∞: a net gain of 1.5 µUSD shows as -0.000001, never as the larger -0.000002.
  if (priced.costs.length === 0) return { usd: microText(shownMicro(priced.realCostUsdE18)), items: [] }
  const items = priced.costs.map((item) => shownMicro(item.usdE18))
  return { usd: microText(items.reduce((sum, item) => sum + item, 0n)), items: items.map(microText) }
}

/** Shapes an engine result as the wire QuoteResult and signs its quoteId (DESIGN 7.12). */
export function formatQuote(deps: ServiceDeps, request: ResolvedQuoteRequest, amounts: QuoteAmounts, priced: PricedRoute): QuoteResult {
  const { from, to } = request
  const nowSec = Math.floor(deps.clock() / 1000)
  const exp = nowSec + deps.catalogue.pricing.quoteTtlSec
  const fromAddress = lowercaseAddress(request.fromAddress)
  const toAddress = lowercaseAddress(request.toAddress)
  const pricedOn = pricedOnOf(deps, priced)
  const quoteId = signQuoteId(deps.quoteSecret, {
    fromChain: from.chain,
    toChain: to.chain,
    fromToken: from.symbol,
    toToken: to.symbol,
    fromAmount: request.amountIn.toString(),
    fromAddress,
    toAddress: toAddress === fromAddress ? null : toAddress,
    slippageE18: request.slippageE18.toString(),
    routeId: priced.route.id,
    toAmount: amounts.toAmount.toString(),
    toAmountMin: amounts.toAmountMin.toString(),
    asOf: deps.catalogue.asOf,
    market: pricedOn.map((on) => `${on.chain}:${on.source}${on.block === undefined ? '' : `:${on.block}`}`).join(','),
    exp,
  })
  const inputUsd = usdValue(from, request.amountIn)
  const costBpsE18 = inputUsd > 0n ? (priced.realCostUsdE18 * 10_000n * E18) / inputUsd : 0n
  /** Where the bridge's fees come from: the lane's own, read from the bridge's service, or the snapshot's. */
  const bridgeFeeSource = priced.route.bridge?.feeQuotedBy ?? 'snapshot'
  const shown = realCostUsdOf(priced)
  return {
    fromChain: from.chain,
    toChain: to.chain,
    fromToken: from.symbol,
    toToken: to.symbol,
    fromAmount: formatAtomic(request.amountIn, from.decimals),
    toAmount: formatAtomic(amounts.toAmount, to.decimals),
    toAmountMin: formatAtomic(amounts.toAmountMin, to.decimals),
    estimatedGasUSD: formatFixedUp(priced.sourceCostUsdE18, 6),
    estimatedDuration: priced.durationP50Sec,
    bridge: bridgeName(priced),
    tool: toolName(priced),
    quoteId,
    expiresAt: isoOfSec(exp),
    fee: { token: from.symbol, amount: formatAtomic(amounts.feeAmount, from.decimals), bps: Number(deps.catalogue.pricing.feeBps) },
    route: {
      id: priced.route.id,
      steps: priced.steps.map((step) => ({
        type: step.kind,
        tool: step.tool,
        id: step.id,
        fromChain: step.from.chain,
        toChain: step.to.chain,
        fromToken: step.from.symbol,
        toToken: step.to.symbol,
        fromAmount: formatAtomic(step.amountIn, step.from.decimals),
        toAmount: formatAtomic(step.amountOut, step.to.decimals),
      })),
      realCost: {
        usd: shown.usd,
        bps: costBpsE18 < 0n ? `-${formatFixedDown(-costBpsE18, 2)}` : formatFixedUp(costBpsE18, 2),
        items: priced.costs.map((item, k) => ({
          kind: item.kind,
          label: item.label,
          usd: shown.items[k] ?? microText(shownMicro(item.usdE18)),
          ...(item.kind === 'bridge_fee' || item.kind === 'bridge_fixed_fee' ? { source: bridgeFeeSource } : {}),
        })),
      },
      gasLimit: `0x${priced.gasLimit.toString(16)}`,
      estimatedDurationP95: priced.durationP95Sec,
    },
    pricedOn,
    ...marketNotesOf(deps, request),
  }
}

/** What the market's state means for this quote, when it is more than its figures (an FX rate held through a closure). */
function marketNotesOf(deps: ServiceDeps, request: ResolvedQuoteRequest): { marketNotes?: string[] } {
  const notes = deps.catalogue.fxNotes
  if (notes === undefined) return {}
  const said = [...new Set([request.from.currency, request.to.currency])].flatMap((currency) => {
    const note = notes.get(currency)
    return note === undefined ? [] : [note]
  })
  return said.length === 0 ? {} : { marketNotes: said }
}

/** Where the figures of each chain the route touches come from: a live read at a block, or the snapshot. */
function pricedOnOf(deps: ServiceDeps, priced: PricedRoute): QuoteResult['pricedOn'] {
  const { catalogue } = deps
  const chains = [...new Set(priced.steps.flatMap((step) => [step.from.chain, step.to.chain]))]
  return chains.map((chain) => {
    const on = catalogue.pricedOn?.get(chain) ?? { source: 'snapshot' as const, asOf: catalogue.asOf }
    return on.source === 'rpc'
      ? { chain, source: on.source, block: on.block.toString(), asOf: on.asOf }
      : { chain, source: on.source, asOf: on.asOf }
  })
}
