import * as z from 'zod'
import { NotServedWire, QuoteParams, QuoteResult, RankedQuote, RankedQuoteEntry, UnsupportedPair } from '../../schemas/quote.ts'
import { defineTool, failed, failedCall, READ_ONLY } from '../tool.ts'

const describeQuote = (q: QuoteResult): string =>
  `${q.fromAmount} ${q.fromToken} on ${q.fromChain} → ${q.toAmount} ${q.toToken} on ${q.toChain} (at least ${q.toAmountMin}) via ${q.bridge === 'none' ? q.tool : q.bridge}, about ${q.estimatedDuration} s, fee ${q.fee.amount} ${q.fee.token}`

export const getQuote = defineTool({
  name: 'get_quote',
  title: 'Quote a stablecoin swap (free)',
  description:
    'Prices moving a stablecoin between chains or into another stablecoin, for example 500 USDC on Base to EURe on Gnosis. Free, no payment, changes nothing. Use it before build_swap to show the user what they would receive. Amounts are decimal strings in whole tokens ("500", "12.5"). Returns toAmount and toAmountMin (the least toToken that arrives; on a route that swaps after the bridge, the least if that swap runs, else the recipient gets the bridged token, as the nextSteps of build_swap say), the 0.5% all-in fee, the bridge and tool, the estimated duration and a quoteId valid 60 s; with ranked: true, three quotes ranked FASTEST, BALANCED and CHEAPEST. A pair no route joins comes back as supported: false. A quote with notSold is a route this service does not sell (router_not_deployed: build_swap would refuse it before any payment); its detail says what to ask for instead.',
  inputSchema: {
    ...QuoteParams.shape,
    ranked: z.boolean().optional().describe('true: three routes ranked FASTEST, BALANCED, CHEAPEST instead of one'),
  },
  outputSchema: {
    supported: z.boolean(),
    quote: QuoteResult.optional().describe('The BALANCED route (when ranked is not set)'),
    routes: z.array(RankedQuoteEntry).optional().describe('FASTEST, BALANCED and CHEAPEST (when ranked is true)'),
    reason: z.string().optional(),
    pair: z.string().optional(),
    notServed: NotServedWire.optional().describe('When supported is false: why, with the figures'),
  },
  annotations: { ...READ_ONLY, title: 'Quote a stablecoin swap (free)' },
  async run({ client }, args) {
    const { ranked, ...params } = args
    const response = await client.post(ranked === true ? '/api/v1/quote' : '/api/x402/quote', params)
    if (response.status !== 200) return failedCall(response)
    const unsupported = UnsupportedPair.safeParse(response.body)
    if (unsupported.success)
      return {
        ok: true,
        structured: unsupported.data,
        summary: `No route joins ${unsupported.data.pair} on those chains${unsupported.data.notServed === undefined ? '' : `: ${unsupported.data.notServed.detail}`}. Call probe_corridor for the nearest corridors SwapEazi serves.`,
      }
    if (ranked === true) {
      const parsed = RankedQuote.safeParse(response.body)
      if (!parsed.success) return failed('SwapEazi answered with a ranked quote this server cannot read; check SWAPEAZI_BASE_URL.')
      const [fastest, balanced, cheapest] = parsed.data.routes
      const notSold = parsed.data.routes.find((route) => route.notSold !== undefined)?.notSold
      return {
        ok: true,
        structured: { supported: true, routes: parsed.data.routes },
        summary: `FASTEST: ${fastest ? describeQuote(fastest) : '-'}. BALANCED: ${balanced ? describeQuote(balanced) : '-'}. CHEAPEST: ${cheapest ? describeQuote(cheapest) : '-'}.${notSold === undefined ? '' : ` ${notSold.detail}`}`,
      }
    }
    const parsed = QuoteResult.safeParse(response.body)
    if (!parsed.success) return failed('SwapEazi answered with a quote this server cannot read; check SWAPEAZI_BASE_URL.')
    return {
      ok: true,
      structured: { supported: true, quote: parsed.data },
      // A route this service does not sell is never offered to build_swap: the quote says why and what to ask instead.
      summary:
        parsed.data.notSold === undefined
          ? `${describeQuote(parsed.data)}. Quote valid until ${parsed.data.expiresAt}; build_swap builds it for USD 0.02.`
          : `${describeQuote(parsed.data)}. ${parsed.data.notSold.detail}`,
    }
  },
})
