import * as z from 'zod'
import { ChainCode, CorridorEntry, DECIMAL_PATTERN } from '../../schemas/catalogue.ts'
import { CorridorsResponse } from '../../schemas/discovery.ts'
import { QuoteResult, UnsupportedPair } from '../../schemas/quote.ts'
import { defineTool, failed, failedCall, READ_ONLY } from '../tool.ts'

/** A neutral sender for probe quotes: a quote binds an address but moves nothing. */
const PROBE_ADDRESS = '0x0000000000000000000000000000000000000001'
const DEFAULT_AMOUNT = '1000'
const NEAREST = 5

const ViableRange = z.object({ min: z.string(), max: z.string(), token: z.string() })

export const probeCorridor = defineTool({
  name: 'probe_corridor',
  title: 'Check whether SwapEazi serves a pair (free)',
  description:
    'Checks, without paying and without a wallet address, whether SwapEazi can move one stablecoin to another between two chains (for example USDT on Tron to USDC on Base): supported or not and why, whether an agent can call it or the user must sign in the SwapEazi app, the amount range the route can serve, the typical duration and bridges, and the nearest corridors SwapEazi does serve. Use it when a user asks for a pair you have not seen in discover_routes, or when get_quote or build_swap refused one. Free; changes nothing.',
  inputSchema: {
    fromChain: ChainCode.describe('Source chain code'),
    toChain: ChainCode.describe('Destination chain code'),
    fromToken: z.string().min(1).max(32).describe('Source token symbol, case-insensitive'),
    toToken: z.string().min(1).max(32).describe('Destination token symbol, case-insensitive'),
    amount: z
      .string()
      .max(80)
      .regex(DECIMAL_PATTERN, 'must be a decimal string such as "1000"')
      .optional()
      .describe('Amount of fromToken to test, in whole tokens; default 1000'),
  },
  outputSchema: {
    pair: z.string(),
    supported: z.boolean().describe('A route serves this pair at the amount tested'),
    agentCallable: z.boolean().describe('An agent can quote and build it; false: the user signs in the SwapEazi app (appUrl)'),
    reason: z
      .string()
      .nullable()
      .describe('Why not, as a stable code: no_route_found, not_agent_callable, unsupported_token, amount_out_of_range, ...'),
    detail: z.string().nullable(),
    amountTested: z.string(),
    viableRange: ViableRange.nullable().describe('The fromAmount range a route can serve'),
    typicalDurationSec: z.number().int().nullable(),
    bridges: z.array(z.string()),
    sample: z
      .object({ fromAmount: z.string(), toAmount: z.string(), toAmountMin: z.string(), bridge: z.string(), tool: z.string() })
      .nullable(),
    appUrl: z.string().nullable(),
    nearest: z.array(CorridorEntry).describe('Corridors SwapEazi serves that share a token or chain with this pair'),
  },
  annotations: { ...READ_ONLY, title: 'Check whether SwapEazi serves a pair (free)' },
  async run({ client }, args) {
    const amount = args.amount ?? DEFAULT_AMOUNT
    const [corridorsResponse, quoteResponse] = await Promise.all([
      client.get('/api/v1/corridors'),
      client.post('/api/x402/quote', {
        fromChain: args.fromChain,
        toChain: args.toChain,
        fromToken: args.fromToken,
        toToken: args.toToken,
        fromAmount: amount,
        fromAddress: PROBE_ADDRESS,
      }),
    ])
    if (corridorsResponse.status !== 200) return failedCall(corridorsResponse)
    const listing = CorridorsResponse.safeParse(corridorsResponse.body)
    if (!listing.success) return failed('SwapEazi answered with a corridor list this server cannot read; check SWAPEAZI_BASE_URL.')
    const from = args.fromToken.toLowerCase()
    const to = args.toToken.toLowerCase()
    const legs = listing.data.corridors
      .filter((c) => c.from.toLowerCase() === from && c.to.toLowerCase() === to)
      .flatMap((c) => c.byChain.flatMap((byChain) => byChain.legs))
      .filter((leg) => leg.fromChain === args.fromChain && leg.toChain === args.toChain)
    const leg = legs[0]
    const listed = listing.data.corridors.find(
      (c) =>
        c.from.toLowerCase() === from &&
        c.to.toLowerCase() === to &&
        (c.chains.includes(args.fromChain) || c.chains.includes(args.toChain)),
    )

    let supported = false
    let reason: string | null = null
    let detail: string | null = null
    let appUrl: string | null = listed?.appUrl ?? null
    let viableRange = leg?.viableRange ?? null
    let sample: z.infer<typeof QuoteResult> | null = null
    const body = quoteResponse.body as { code?: unknown; detail?: unknown; appUrl?: unknown; viableRange?: unknown } | undefined
    if (quoteResponse.status === 200) {
      const quote = QuoteResult.safeParse(quoteResponse.body)
      if (quote.success) {
        supported = true
        sample = quote.data
      } else {
        const unsupported = UnsupportedPair.safeParse(quoteResponse.body)
        if (!unsupported.success) return failed('SwapEazi answered with a quote this server cannot read; check SWAPEAZI_BASE_URL.')
        // Why, as the service says it: not buildable yet, or a cost above what the fee covers, with the figures.
        const why = unsupported.data.notServed
        reason = why?.reason ?? 'no_route_found'
        detail = why?.detail ?? `No route joins ${args.fromToken} on ${args.fromChain} and ${args.toToken} on ${args.toChain}.`
      }
    } else if (quoteResponse.status === 422 || quoteResponse.status === 400) {
      reason = typeof body?.code === 'string' ? body.code : `http_${quoteResponse.status}`
      detail = typeof body?.detail === 'string' ? body.detail : null
      if (typeof body?.appUrl === 'string') appUrl = body.appUrl
      const range = ViableRange.safeParse(body?.viableRange)
      if (range.success) viableRange = range.data
    } else return failedCall(quoteResponse)

    const agentCallable = reason !== 'not_agent_callable' && (listed?.agentCallable ?? true)
    const pair = `${args.fromToken}@${args.fromChain}->${args.toToken}@${args.toChain}`
    const nearest = listing.data.corridors
      .filter((c) => c.live && c.agentCallable && !(c.from.toLowerCase() === from && c.to.toLowerCase() === to && supported))
      .map((c) => ({
        corridor: c,
        score:
          (c.from.toLowerCase() === from ? 2 : 0) +
          (c.to.toLowerCase() === to ? 2 : 0) +
          (c.chains.includes(args.fromChain) ? 1 : 0) +
          (c.chains.includes(args.toChain) ? 1 : 0),
      }))
      .filter((entry) => entry.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, NEAREST)
      .map(({ corridor }) => ({
        from: corridor.from,
        to: corridor.to,
        chains: corridor.chains,
        description: corridor.description,
        agentCallable: corridor.agentCallable,
      }))

    const nearestText =
      nearest.length > 0 ? ` Nearest served: ${nearest.map((c) => `${c.from}→${c.to} (${c.chains.join(', ')})`).join('; ')}.` : ''
    // App-only is about the corridor, not the amount: say where the user signs instead of "not served at <amount>".
    const summary = supported
      ? `${pair} is served: ${amount} ${sample?.fromToken} gives ${sample?.toAmount} ${sample?.toToken} via ${sample?.bridge === 'none' ? sample.tool : sample?.bridge}${viableRange ? `; amounts ${viableRange.min} to ${viableRange.max} ${viableRange.token}` : ''}.`
      : !agentCallable
        ? `${pair} is app-only (not_agent_callable): an agent cannot quote or build it, at any amount; the user swaps it in the SwapEazi app${appUrl ? ` at ${appUrl}` : ''}.${nearestText}`
        : `${pair} is not served at ${amount}: ${reason}${detail ? ` (${detail})` : ''}${nearestText}`
    return {
      ok: true,
      summary,
      structured: {
        pair,
        supported,
        agentCallable,
        reason,
        detail,
        amountTested: amount,
        viableRange,
        typicalDurationSec: sample?.estimatedDuration ?? leg?.typicalDurationSec ?? null,
        bridges: leg?.bridges ?? (sample && sample.bridge !== 'none' ? [sample.bridge] : []),
        sample:
          sample === null
            ? null
            : {
                fromAmount: sample.fromAmount,
                toAmount: sample.toAmount,
                toAmountMin: sample.toAmountMin,
                bridge: sample.bridge,
                tool: sample.tool,
              },
        appUrl,
        nearest,
      },
    }
  },
})
