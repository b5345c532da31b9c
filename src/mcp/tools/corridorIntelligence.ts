import * as z from 'zod'
import { DECIMAL_PATTERN } from '../../schemas/catalogue.ts'
import { CorridorIntelligence } from '../../schemas/intelligence.ts'
import { describeFailure } from '../serviceClient.ts'
import { defineTool, failed, READ_ONLY } from '../tool.ts'

/**
 * The service tells HTTP callers to send a pro key as an `Authorization: Bearer` header; this tool sends the key the
 * operator set in SWAPEAZI_API_KEY, so its texts say that instead of naming the header.
 */
export function forTheTool(text: string): string {
  return text
    .replaceAll('send a pro key as Authorization: Bearer se_…', 'have the operator of this MCP server set a pro key in SWAPEAZI_API_KEY')
    .replaceAll('sent as Authorization: Bearer se_…', 'that the operator of this MCP server sets in SWAPEAZI_API_KEY')
}

export const corridorIntelligence = defineTool({
  name: 'corridor_intelligence',
  title: 'Which bridge to trust on a corridor',
  description:
    "Says which bridge to trust between two chains or currencies, from transfers SwapEazi has observed: the recommended bridge, a reliability band (high, medium, low) and the sample size, or the bridges' published figures when too few transfers were seen (basis says which). pair is <source>-<destination>, each a chain code (ETH, BAS, POL, ARB, OPT, BNB, GNO, CEL, SOL, TRX) or a currency code (USD, EUR, GBP, ZAR, NGN, KES, SGD), for example BAS-ARB or USD-GNO; amount (optional, USD or the source currency) narrows the best route to transfers of that size. Free tier: 100 calls a month per IP. With a pro key in SWAPEAZI_API_KEY: per-bridge p50 and p95 settlement time and slippage, the historically best route for the amount, and failure patterns. Changes nothing.",
  inputSchema: {
    pair: z.string().min(3).max(16).describe('<A>-<B>, source first: chain or currency codes, e.g. BAS-ARB, USD-GNO'),
    amount: z
      .string()
      .max(40)
      .regex(DECIMAL_PATTERN, 'must be a decimal string such as "2500"')
      .optional()
      .describe('Transfer size: in the source currency when A is a currency code, else USD'),
  },
  outputSchema: {
    tier: z.enum(['free', 'pro']),
    intelligence: CorridorIntelligence,
  },
  annotations: { ...READ_ONLY, title: 'Which bridge to trust on a corridor' },
  async run({ client }, args) {
    const query = args.amount === undefined ? '' : `?amount=${encodeURIComponent(args.amount)}`
    // The client sends the configured key (SWAPEAZI_API_KEY) as a Bearer token, the only kind this endpoint reads.
    const response = await client.get(`/api/v1/intelligence/corridor/${encodeURIComponent(args.pair)}${query}`)
    if (response.status !== 200) return failed(forTheTool(describeFailure(response)))
    const parsed = CorridorIntelligence.safeParse(response.body)
    if (!parsed.success) return failed('SwapEazi answered with corridor intelligence this server cannot read; check SWAPEAZI_BASE_URL.')
    const answer = { ...parsed.data, notes: parsed.data.notes.map(forTheTool) }
    const bridge = answer.recommendedBridge ?? 'no bridge'
    const summary = `${answer.pair}: ${bridge} recommended, reliability ${answer.reliabilityBand}, ${answer.basis === 'observed' ? `from ${answer.sampleSize} settled transfers` : `from published priors (${answer.sampleSize} transfers observed, ${answer.minSampleSize} needed)`}${answer.tier === 'free' ? '; per-bridge figures need a pro key, which the operator of this MCP server sets in SWAPEAZI_API_KEY' : ''}.`
    return { ok: true, structured: { tier: answer.tier, intelligence: answer }, summary }
  },
})
