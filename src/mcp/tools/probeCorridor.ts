import * as z from 'zod'
import { type ChainCode, ChainCodeInput, CorridorEntry, DECIMAL_PATTERN } from '../../schemas/catalogue.ts'
import { ChainsResponse, CorridorsResponse } from '../../schemas/discovery.ts'
import { QuoteResult, UnsupportedPair } from '../../schemas/quote.ts'
import type { ServiceClient, ServiceResponse } from '../serviceClient.ts'
import { defineTool, failed, failedCall, READ_ONLY } from '../tool.ts'

/** A neutral sender for probe quotes: a quote binds an address but moves nothing. */
const PROBE_ADDRESS = '0x0000000000000000000000000000000000000001'
const DEFAULT_AMOUNT = '1000'
const NEAREST = 5
/** What a same-chain quote names as its bridge (engine/bridgeWireName.ts's NO_BRIDGE, as the quote says it). */
const NO_BRIDGE = 'none'
/** Whole tokens above any route's limit and any token's supply cap, so the service answers with the viable range. */
const BEYOND_ANY_RANGE = '1000000000000000'

const ViableRange = z.object({ min: z.string(), max: z.string(), token: z.string() })
type ViableRange = z.infer<typeof ViableRange>

type Corridors = CorridorsResponse['corridors']
type Chain = z.infer<typeof ChainCode>

/** What one quote of the pair said: served with a route, refused with a stable code, or an answer to pass on as it is. */
type QuoteAnswer =
  | { kind: 'served'; quote: QuoteResult }
  | {
      kind: 'refused'
      reason: string
      detail: string | null
      appUrl: string | null
      viableRange: ViableRange | null
      /** The request fields a 400 names, each with what the service said of it. */
      fields: { field: string; message: string }[]
    }
  | { kind: 'failed'; failure: { ok: false; message: string } }

function readQuote(response: ServiceResponse): QuoteAnswer {
  if (response.status === 200) {
    const quote = QuoteResult.safeParse(response.body)
    // A route this service does not sell (its paid swap would refuse it) is not served, whatever the quote prices.
    const notSold = quote.success ? quote.data.notSold : undefined
    if (notSold !== undefined)
      return { kind: 'refused', reason: notSold.reason, detail: notSold.detail, appUrl: null, viableRange: null, fields: [] }
    if (quote.success) return { kind: 'served', quote: quote.data }
    const unsupported = UnsupportedPair.safeParse(response.body)
    if (!unsupported.success)
      return { kind: 'failed', failure: failed('SwapEazi answered with a quote this server cannot read; check SWAPEAZI_BASE_URL.') }
    // Why, as the service says it: not buildable yet, or a cost above what the fee covers, with the figures.
    // The code is the quote's (no_route_found); the cause (cost_exceeds_fee, no_route, ...) leads the detail.
    const why = unsupported.data.notServed
    return {
      kind: 'refused',
      reason: 'no_route_found',
      detail: why === undefined ? `No route joins ${unsupported.data.pair} on those chains.` : `${why.reason}: ${why.detail}`,
      appUrl: null,
      viableRange: null,
      fields: [],
    }
  }
  if (response.status !== 422 && response.status !== 400) return { kind: 'failed', failure: failedCall(response) }
  const body = response.body as { code?: unknown; detail?: unknown; appUrl?: unknown; viableRange?: unknown; errors?: unknown } | undefined
  const range = ViableRange.safeParse(body?.viableRange)
  return {
    kind: 'refused',
    reason: typeof body?.code === 'string' ? body.code : `http_${response.status}`,
    detail: typeof body?.detail === 'string' ? body.detail : null,
    appUrl: typeof body?.appUrl === 'string' ? body.appUrl : null,
    viableRange: range.success ? range.data : null,
    fields: Array.isArray(body?.errors)
      ? body.errors.flatMap((e: { field?: unknown; message?: unknown }) =>
          typeof e?.field === 'string' ? [{ field: e.field, message: typeof e.message === 'string' ? e.message : 'is not valid' }] : [],
        )
      : [],
  }
}

/** What a 400 said of the amount (the quote's fromAmount), if it named it. */
const amountFieldOf = (fields: readonly { field: string; message: string }[]): { field: string; message: string } | undefined =>
  fields.find((each) => each.field === 'fromAmount')

/** The token's decimals from the service's chain list, or null when it cannot say. */
async function decimalsOf(client: ServiceClient, chain: string, symbol: string): Promise<number | null> {
  const response = await client.get('/api/v1/chains')
  if (response.status !== 200) return null
  const chains = ChainsResponse.safeParse(response.body)
  if (!chains.success) return null
  const token = chains.data.chains
    .find((each) => each.id === chain)
    ?.tokens.find((each) => each.symbol.toLowerCase() === symbol.toLowerCase())
  return token?.decimals ?? null
}

/** The amount cut to `decimals` fraction digits (never rounded up), else the range's least amount, else the default. */
function validExample(amount: string, decimals: number, range: ViableRange | null): string {
  const [whole = '0', fraction = ''] = amount.split('.')
  const kept = fraction.slice(0, decimals).replace(/0+$/, '')
  const cut = kept.length > 0 ? `${whole}.${kept}` : whole
  return /[1-9]/.test(cut) ? cut : (range?.min ?? DEFAULT_AMOUNT)
}

/** Compares two decimal strings exactly (no floats: amounts may carry 18 fraction digits). */
function compareDecimal(a: string, b: string): number {
  const [aWhole = '0', aFraction = ''] = a.split('.')
  const [bWhole = '0', bFraction = ''] = b.split('.')
  const places = Math.max(aFraction.length, bFraction.length)
  const scaled = (whole: string, fraction: string): bigint => BigInt(whole + fraction.padEnd(places, '0'))
  const x = scaled(aWhole, aFraction)
  const y = scaled(bWhole, bFraction)
  return x < y ? -1 : x > y ? 1 : 0
}

/** The end of the viable range nearest an amount outside it. */
const nearestBound = (amount: string, range: ViableRange): string => (compareDecimal(amount, range.min) < 0 ? range.min : range.max)

/** Live, agent-callable corridors sharing a token or chain with the pair, best first; never the pair's own corridor. */
function nearestCorridors(
  corridors: Corridors,
  pair: { fromChain: Chain; toChain: Chain; fromToken: string; toToken: string },
  isThisPair: (corridor: Corridors[number]) => boolean,
): CorridorEntry[] {
  const from = pair.fromToken.toLowerCase()
  const to = pair.toToken.toLowerCase()
  return corridors
    .filter((c) => c.live && c.agentCallable && !isThisPair(c))
    .map((c) => ({
      corridor: c,
      score:
        (c.from.toLowerCase() === from ? 2 : 0) +
        (c.to.toLowerCase() === to ? 2 : 0) +
        (c.chains.includes(pair.fromChain) ? 1 : 0) +
        (c.chains.includes(pair.toChain) ? 1 : 0),
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
}

export const probeCorridor = defineTool({
  name: 'probe_corridor',
  title: 'Check whether SwapEazi serves a pair (free)',
  description:
    'Checks, without paying and without a wallet address, whether SwapEazi can move one stablecoin to another between two chains (for example USDT on Tron to USDC on Base): supported or not and why, whether an agent can call it or the user must sign in the SwapEazi app, the amount range the route can serve, the typical duration and bridges, and the nearest corridors SwapEazi does serve. An amount the pair cannot take (too many decimals, outside the range) is answered as such, with a valid amount, and the pair is quoted at that amount instead. Use it when a user asks for a pair you have not seen in discover_routes, or when get_quote or build_swap refused one. Free; changes nothing.',
  inputSchema: {
    fromChain: ChainCodeInput.describe('Source chain code (any case)'),
    toChain: ChainCodeInput.describe('Destination chain code (any case)'),
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
      .describe(
        "Why not at amountTested, as a stable code: no_route_found, not_agent_callable, unsupported_token, amount_out_of_range (see viableRange), invalid_request (an amount the token cannot carry: more fraction digits than its decimals, 0, or more than a uint256 holds; detail says which and gives a valid one), router_not_deployed (the route would use a router this service's operator has not set on a chain, so its paid swap refuses it; detail says what is sold instead), ...",
      ),
    detail: z.string().nullable().describe('The reason in words, with what to send instead'),
    amountTested: z.string(),
    viableRange: ViableRange.nullable().describe('The fromAmount range a route can serve; null when no route serves the pair'),
    typicalDurationSec: z
      .number()
      .int()
      .nullable()
      .describe("p50 seconds of sample's route (its quote's estimatedDuration); null when no route serves the pair"),
    bridges: z
      .array(z.string())
      .describe(
        "Bridges by the name a quote's bridge field uses (cctp-v2-fast, across, stargate-v2-taxi): those of every route the corridor listing finds for the pair at its 1000-token reference amount, and sample's; for a pair the listing does not carry (one token on two chains), sample's only. Empty on one chain",
      ),
    sample: z
      .object({ fromAmount: z.string(), toAmount: z.string(), toAmountMin: z.string(), bridge: z.string(), tool: z.string() })
      .nullable()
      .describe(
        'A quote of the pair: at amountTested when served; when amountTested was refused for its amount, at a valid one (fromAmount: the amount cut to the decimals, or the nearest end of viableRange); null when no route serves the pair',
      ),
    appUrl: z.string().nullable(),
    nearest: z
      .array(CorridorEntry)
      .describe(
        'When no route serves the pair: corridors SwapEazi serves that share a token or chain with it (never its own). Empty when only the amount was refused',
      ),
  },
  annotations: { ...READ_ONLY, title: 'Check whether SwapEazi serves a pair (free)' },
  async run({ client }, args) {
    const amount = args.amount ?? DEFAULT_AMOUNT
    const quoteAt = (fromAmount: string): Promise<ServiceResponse> =>
      client.post('/api/x402/quote', {
        fromChain: args.fromChain,
        toChain: args.toChain,
        fromToken: args.fromToken,
        toToken: args.toToken,
        fromAmount,
        fromAddress: PROBE_ADDRESS,
      })
    const [corridorsResponse, quoteResponse] = await Promise.all([client.get('/api/v1/corridors'), quoteAt(amount)])
    if (corridorsResponse.status !== 200) return failedCall(corridorsResponse)
    const listing = CorridorsResponse.safeParse(corridorsResponse.body)
    if (!listing.success) return failed('SwapEazi answered with a corridor list this server cannot read; check SWAPEAZI_BASE_URL.')
    const from = args.fromToken.toLowerCase()
    const to = args.toToken.toLowerCase()
    const isThisPair = (c: { from: string; to: string; chains: readonly string[] }): boolean =>
      c.from.toLowerCase() === from && c.to.toLowerCase() === to && (c.chains.includes(args.fromChain) || c.chains.includes(args.toChain))
    const leg = listing.data.corridors
      .filter(isThisPair)
      .flatMap((c) => c.byChain.flatMap((byChain) => byChain.legs))
      .find((each) => each.fromChain === args.fromChain && each.toChain === args.toChain)
    const listed = listing.data.corridors.find(isThisPair)

    const tested = readQuote(quoteResponse)
    if (tested.kind === 'failed') return tested.failure
    const appUrl = (tested.kind === 'refused' ? tested.appUrl : null) ?? listed?.appUrl ?? null
    // The service's own answer for this amount first: it is the range at the quote's slippage.
    let viableRange = (tested.kind === 'refused' ? tested.viableRange : null) ?? leg?.viableRange ?? null
    let reason = tested.kind === 'served' ? null : tested.reason
    let detail = tested.kind === 'served' ? null : tested.detail

    // An answer about the amount, not the pair: quote the pair once more at an amount it takes, so the answer can
    // say whether the pair is served and show the route, the bridges and the duration as for any served amount.
    const amountRefusal = tested.kind === 'refused' && tested.reason === 'invalid_request' ? amountFieldOf(tested.fields) : undefined
    const invalidAmount = amountRefusal !== undefined
    let outOfRange = tested.kind === 'refused' && tested.reason === 'amount_out_of_range'
    let example: string | null = null
    let retried: QuoteAnswer | null = null
    if (invalidAmount) {
      // Too many fraction digits: the amount cut to the token's decimals. Anything else (0, more than a uint256
      // holds, too long): the least amount the pair takes, else the default. Either must itself be taken.
      const decimals = await decimalsOf(client, args.fromChain, args.fromToken)
      const fallback = leg?.viableRange?.min ?? DEFAULT_AMOUNT
      let tooPrecise = decimals !== null && (amount.split('.')[1]?.length ?? 0) > decimals
      example = tooPrecise && decimals !== null ? validExample(amount, decimals, viableRange) : fallback
      retried = readQuote(await quoteAt(example))
      // Cut to the decimals and still refused (too large as well): the service's own words, and the fallback.
      if (retried.kind === 'refused' && example !== fallback) {
        tooPrecise = false
        retried = readQuote(await quoteAt((example = fallback)))
      }
      detail = tooPrecise
        ? `amount has more fraction digits than ${args.fromToken} on ${args.fromChain} has decimals (${decimals}); send at most ${decimals}, for example "${example}".`
        : `amount ${amountRefusal.message.replaceAll('fromAmount', 'amount')}. The pair takes "${example}", for example.`
    } else if (outOfRange && viableRange) {
      example = nearestBound(amount, viableRange)
      retried = readQuote(await quoteAt(example))
    }
    // Amounts the pair takes are priced but not sold here: that is the answer, not the amount.
    if (outOfRange && retried?.kind === 'refused' && retried.reason === 'router_not_deployed') {
      reason = retried.reason
      detail = retried.detail
      outOfRange = false
      viableRange = leg?.viableRange ?? null
    }
    const sample = tested.kind === 'served' ? tested.quote : retried?.kind === 'served' ? retried.quote : null

    // A pair the listing does not carry (one token on two chains): its range is what the service answers for an
    // amount above every bridge's and venue's limit.
    if (sample !== null && viableRange === null) {
      const beyond = readQuote(await quoteAt(BEYOND_ANY_RANGE))
      if (beyond.kind === 'refused' && beyond.viableRange) viableRange = beyond.viableRange
    }

    const supported = tested.kind === 'served'
    const agentCallable = reason !== 'not_agent_callable' && (listed?.agentCallable ?? true)
    // Named as the service names the tokens (its quote's symbols, else the listing's), whatever case was asked.
    const symbolOf = (asked: string, answered: string | undefined): string =>
      answered ?? [listed?.from, listed?.to].find((each) => each?.toLowerCase() === asked.toLowerCase()) ?? asked
    const pair = `${symbolOf(args.fromToken, sample?.fromToken)}@${args.fromChain}->${symbolOf(args.toToken, sample?.toToken)}@${args.toChain}`
    // Alternatives only when the pair itself is not served: an amount refused points to the amounts the pair takes.
    const nearest = sample !== null || invalidAmount || outOfRange ? [] : nearestCorridors(listing.data.corridors, args, isThisPair)
    const bridges = [...new Set([...(leg?.bridges ?? []), ...(sample && sample.bridge !== NO_BRIDGE ? [sample.bridge] : [])])]
    const typicalDurationSec = sample?.estimatedDuration ?? null

    const nearestText =
      nearest.length > 0 ? ` Nearest served: ${nearest.map((c) => `${c.from}→${c.to} (${c.chains.join(', ')})`).join('; ')}.` : ''
    const rangeText = viableRange ? `amounts ${viableRange.min} to ${viableRange.max} ${viableRange.token}` : null
    const route = (q: QuoteResult): string =>
      `${q.fromAmount} ${q.fromToken} gives ${q.toAmount} ${q.toToken} via ${q.bridge === NO_BRIDGE ? q.tool : q.bridge}`
    const servedText = sample ? `The pair is served: ${route(sample)}${rangeText ? `; ${rangeText}` : ''}.` : ''
    // App-only is about the corridor, not the amount: say where the user signs instead of "not served at <amount>".
    const summary = supported
      ? `${pair} is served: ${route(tested.quote)}${rangeText ? `; ${rangeText}` : ''}.`
      : !agentCallable
        ? `${pair} is app-only (not_agent_callable): an agent cannot quote or build it, at any amount; the user swaps it in the SwapEazi app${appUrl ? ` at ${appUrl}` : ''}.${nearestText}`
        : invalidAmount
          ? `${pair}: ${amount} is not a valid amount (invalid_request): ${detail} ${servedText}`.trimEnd()
          : outOfRange
            ? `${pair} does not take ${amount} (amount_out_of_range): ${detail ?? (rangeText ? `send ${rangeText}.` : '')}${sample ? ` For example, ${route(sample)}.` : ''}`
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
        typicalDurationSec,
        bridges,
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
