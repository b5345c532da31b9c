import * as z from 'zod'
import { CapabilityManifest } from '../../schemas/discovery.ts'
import { ChainEntry } from '../../schemas/catalogue.ts'
import { CAPABILITIES_URI, defineTool, failed, failedCall, READ_ONLY } from '../tool.ts'

export const discoverRoutes = defineTool({
  name: 'discover_routes',
  title: 'Discover SwapEazi routes (free)',
  description:
    'Lists what SwapEazi routes: its chains with their stablecoins, and its corridors (stablecoin pairs and the chains each is served on), optionally filtered by chain code (ETH, BAS, POL, ARB, OPT, BNB, GNO, CEL, SOL, TRX), token symbol (USDC, EURe, cKES, ...) and whether an agent can call it. Use it first, to learn which pairs exist before quoting. Free; changes nothing. Returns the matching corridors, the chains they touch, and the prices: quotes are free, a swap build costs USD 0.02 over x402.',
  inputSchema: {
    chain: z.string().min(2).max(3).optional().describe('A chain code such as BAS or POL: only corridors served on that chain'),
    token: z
      .string()
      .min(1)
      .max(32)
      .optional()
      .describe('A token symbol such as USDC or EURe: only corridors from or to it (case-insensitive)'),
    agentCallable: z
      .boolean()
      .optional()
      .describe('true: only corridors an agent can quote and swap; false: only the user-signed ones (Tron)'),
  },
  outputSchema: {
    corridors: CapabilityManifest.shape.corridors.describe('Corridors; notServedOn names the chains where one is not served now, and why'),
    chains: z.array(ChainEntry),
    prices: z.object({ quote: z.string(), swap: z.string(), swapFee: z.string() }),
    manifestResource: z.string().describe('The whole capability manifest as an MCP resource'),
  },
  annotations: { ...READ_ONLY, title: 'Discover SwapEazi routes (free)' },
  async run({ client }, args) {
    const response = await client.get('/api/mpp/routes')
    if (response.status !== 200) return failedCall(response)
    const parsed = CapabilityManifest.safeParse(response.body)
    if (!parsed.success)
      return failed(
        'SwapEazi answered with a capability manifest this server cannot read; check SWAPEAZI_BASE_URL points at a SwapEazi service.',
      )
    const manifest = parsed.data
    const chain = args.chain?.toUpperCase()
    const token = args.token?.toLowerCase()
    const corridors = manifest.corridors.filter(
      (corridor) =>
        (chain === undefined || corridor.chains.includes(chain as (typeof corridor.chains)[number])) &&
        (token === undefined || corridor.from.toLowerCase() === token || corridor.to.toLowerCase() === token) &&
        (args.agentCallable === undefined || corridor.agentCallable === args.agentCallable),
    )
    const touched = new Set(corridors.flatMap((corridor) => corridor.chains))
    const chains = manifest.chains.filter((entry) => (chain === undefined ? touched.has(entry.id) : entry.id === chain))
    const filters = [
      args.chain && `chain ${chain}`,
      args.token && `token ${args.token}`,
      args.agentCallable !== undefined && (args.agentCallable ? 'agent-callable' : 'user-signed'),
    ].filter(Boolean)
    const summary =
      corridors.length === 0
        ? `No corridor matches ${filters.join(', ')}; call discover_routes without filters to see all ${manifest.corridors.length}.`
        : `${corridors.length} corridor${corridors.length === 1 ? '' : 's'}${filters.length > 0 ? ` for ${filters.join(', ')}` : ''} on ${chains.length} chain${chains.length === 1 ? '' : 's'}: ${corridors
            .slice(0, 6)
            .map(
              (c) =>
                `${c.from}→${c.to} (${c.chains.join(', ')})${c.notServedOn ? `, not served on ${c.notServedOn.map((n) => `${n.chain}: ${n.detail}`).join('; ')}` : ''}`,
            )
            .join(
              '; ',
            )}${corridors.length > 6 ? '; …' : ''}. Quotes are free; a swap build costs ${manifest.agentPayments.x402.price.amount} ${manifest.agentPayments.x402.price.currency}.`
    return {
      ok: true,
      summary,
      structured: {
        corridors,
        chains,
        prices: {
          quote: manifest.pricing.quote,
          swap: manifest.pricing.swap,
          swapFee: `${manifest.agentPayments.x402.price.amount} ${manifest.agentPayments.x402.price.currency} per build_swap call`,
        },
        manifestResource: CAPABILITIES_URI,
      },
    }
  },
})
