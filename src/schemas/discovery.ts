import * as z from 'zod'
import { ChainCode, ChainEntry, CorridorEntry, Currency } from './catalogue.ts'
import { NotServedWire } from './quote.ts'

export const TokenRef = z.object({ symbol: z.string(), address: z.string(), decimals: z.number().int() })

const Price = z.object({
  amount: z.string(),
  currency: z.string(),
  asset: z.string(),
  network: z.string(),
  atomicAmount: z.string(),
})

/** Spec 2.7: exactly these top-level members. */
/** Extension: the HTTP headers a payment rail uses, each exactly as sent or read. */
const RailHeaders = z
  .object({
    challenge: z.array(z.string()).describe('Headers of the 402 that carry the offer (beside its body)'),
    payment: z.array(z.string()).describe('Request headers a payment is sent in; exactly one per request'),
    receipt: z.array(z.string()).describe('Headers of the 200 that carry the receipt, one per payment header'),
  })
  .describe('Extension: the HTTP headers of this rail')

export const CapabilityManifest = z
  .strictObject({
    chains: z.array(ChainEntry),
    supportedTokens: z.record(z.string(), z.array(TokenRef)).describe('Keyed by numeric chain id as a string'),
    corridors: z.array(
      CorridorEntry.extend({
        notServedOn: z
          .array(z.object({ chain: ChainCode, ...NotServedWire.shape }))
          .optional()
          .describe('Extension: the listed chains where this agent-callable corridor is not served now, and why'),
      }),
    ),
    moat: z.object({ summary: z.string(), wedge: z.string() }),
    agentPayments: z.object({
      x402: z.object({
        description: z.string(),
        quoteEndpoint: z.string(),
        swapEndpoint: z.string(),
        manifest: z.string(),
        price: Price,
        headers: RailHeaders,
      }),
      mpp: z.object({
        description: z.string(),
        quoteEndpoint: z.string(),
        swapEndpoint: z.string(),
        price: Price,
        headers: RailHeaders,
        available: z
          .boolean()
          .describe('Extension: whether this deployment takes MPP (it needs a Tempo RPC); false, the swap endpoint takes x402 only'),
        tempo: z
          .object({
            method: z.literal('tempo'),
            intent: z.literal('charge'),
            modes: z.array(z.literal('push')),
            chainId: z.number().int(),
            currency: z.string(),
            recipient: z.string(),
            realm: z.string(),
          })
          .optional()
          .describe('Extension, when available: what the WWW-Authenticate: Payment challenge asks for'),
      }),
    }),
    pricing: z.object({ quote: z.string(), swap: z.string(), benchmark: z.string() }),
    discovery: z.object({
      unsupportedPairResponse: z.string(),
      swapStatus: z.string().describe('Extension: how to follow a built swap to delivery (the status endpoint and the MCP tool)'),
    }),
  })
  .meta({ id: 'CapabilityManifest' })
export type CapabilityManifest = z.infer<typeof CapabilityManifest>

export const Health = z
  .object({
    status: z
      .enum(['ok', 'degraded'])
      .describe('degraded: a chain read live (SWAPEAZI_RPC_URLS) lacks a fresh figure, and the routes that need it are not offered'),
    version: z.string(),
    market: z
      .object({
        isFxMarketClosed: z.boolean().describe('FX markets are closed (weekend): FX feeds hold still and their last answer stays usable'),
        chains: z.array(
          z.object({
            chain: ChainCode,
            source: z.enum(['rpc', 'snapshot']),
            block: z.string().optional().describe('The block the live figures were read at'),
            blockAgeSeconds: z.number().int().optional(),
            stale: z
              .array(z.string())
              .describe(
                "Figures of this chain that are stale or unread, by name: gas (the chain's read: gas, and every figure of the block), sequencer (the L2 sequencer down, or in its grace period after coming back), native/USD (the native token's price feed), l1-fee (a rollup's L1 data fee: GasPriceOracle or ArbGasInfo could not be read), price:<symbol> (a token's price read on this chain, sUSDe's or PYUSD's on ETH, is stale, failed or too far from the snapshot's: the venues and lanes that carry the token are not offered), venue:<venue id> (a pool's balances or reserves, or a depth venue's quotes), venue:<venue id>:<from>><to> (one direction of a depth venue no size of which could be quoted, or that a Mento trading limit leaves no room), bridge:<bridge id>:<from>><to> (a LayerZero lane whose quoteSend failed: that lane is not offered), bridge:<bridge id>:<from>><to>:compose (its quote with a compose failed: routes that swap on arrival do not use it)",
              ),
            reasons: z
              .record(z.string(), z.string())
              .optional()
              .describe(
                'Why, by name, for stale figures whose reason a 503 does not give: each venue:<venue id>:<from>><to>, as its ladder ended (its first quote failed, or a Mento trading limit leaves no room), and each price:<symbol> read but not used',
              ),
            error: z.string().optional().describe("The last read's error"),
          }),
        ),
        currencies: z.array(
          z.object({
            currency: z.string(),
            source: z.enum(['rpc', 'snapshot']),
            chain: ChainCode.optional(),
            block: z.string().optional(),
            stale: z.string().optional(),
          }),
        ),
      })
      .describe(
        "Where each chain and currency is priced from (DESIGN 5); live chains read their FX feeds, gas, native price, a rollup's L1 data fee, the prices of sUSDe and PYUSD (on ETH), pools (Curve, PancakeSwap stable, Solidly stable), depth venues' quotes and each LayerZero lane's messaging fee; Across's fees come from Across's API (unless SWAPEAZI_ACROSS_API_URL=off); CCTP's fees stay snapshot figures",
      ),
    snapshot: z.object({ asOf: z.string(), ageSeconds: z.number().int(), source: z.string() }),
    rates: z.object({
      EURZAR: z.object({ rate: z.string().describe('Rand per euro'), asOf: z.string(), source: z.string() }),
    }),
    payments: z.object({
      settlement: z
        .enum(['ledger', 'onchain', 'facilitator'])
        .describe('DESIGN 7.10: ledger records authorizations without broadcasting them'),
      payTo: z.string(),
      network: z.literal('base'),
      mpp: z
        .object({ available: z.boolean(), chainId: z.number().int().optional(), recipient: z.string().optional() })
        .describe('Whether /api/mpp/swap takes MPP here (a Tempo RPC is configured), on which chain and to whom'),
    }),
    store: z.object({ driver: z.enum(['pglite', 'postgresql']) }),
    routers: z
      .object({
        inertChains: z
          .array(ChainCode)
          .describe(
            "Agent-callable chains where this service's operator set no router of their own: swaps from them, and swaps with a swap on arrival there, target SwapEazi's inert default router, deployed nowhere. Their answers say first not to sign; paid swaps that depend on them are refused (router_not_deployed), except x402 payments worth nothing (ledger settlement to the inert 0x…dEaD, the embedded demonstration). Routes that avoid a swap on arrival there are quoted first. Empty on a service with its own router everywhere",
          ),
      })
      .describe('Whether the swaps built here can run: where the router is the inert default'),
    warnings: z
      .array(
        z.object({
          code: z.enum(['pay_to_default', 'router_default_inert']),
          message: z.string(),
        }),
      )
      .describe(
        "What the start-up log warns of, for callers: pay_to_default (x402 payments name the inert 0x…dEaD and are only recorded; nothing is charged), router_default_inert (some chains have no router of the operator's own: routers.inertChains). Empty on a service set up to move money",
      ),
  })
  .meta({ id: 'Health' })
export type Health = z.infer<typeof Health>

export const ChainsResponse = z
  .object({
    chains: z.array(
      z.object({
        id: ChainCode,
        name: z.string(),
        chainId: z.number().int(),
        agentCallable: z.boolean().describe('Whether quotes and swaps accept this chain'),
        note: z.string().optional(),
        tokens: z.array(TokenRef.extend({ currency: Currency })),
      }),
    ),
  })
  .meta({ id: 'ChainsResponse' })
export type ChainsResponse = z.infer<typeof ChainsResponse>

export const CorridorLeg = z.object({
  fromChain: ChainCode,
  toChain: ChainCode,
  venues: z.array(z.string()).describe('Venue names used by viable routes at the reference amount'),
  bridges: z.array(z.string()),
  viableRange: z
    .object({ min: z.string(), max: z.string(), token: z.string() })
    .nullable()
    .describe('Smallest and largest fromAmount any route can serve; null when none'),
  typicalDurationSec: z.number().int().nullable().describe('p50 of the BALANCED route at the reference amount'),
})

export const CorridorsResponse = z
  .object({
    referenceAmount: z.string().describe('fromAmount used to pick venues, bridges and durations'),
    corridors: z.array(
      CorridorEntry.extend({
        live: z.boolean().describe('Served on at least one listed chain'),
        appUrl: z.string().optional(),
        byChain: z.array(
          z.object({
            chain: ChainCode,
            live: z.boolean().describe('Served on this chain: a quote and a build both succeed within the viable range'),
            legs: z
              .array(CorridorLeg)
              .describe(
                "The pairs that serve the row on this chain: where both tokens are listed here, the same-chain pair only; else the row's other token on each other chain that lists it. Cross-chain pairs are served beyond these (USDC on BAS to ZARP on POL, say) with ranges of their own: a quote, or MCP probe_corridor, says whether one routes and its range",
              ),
            notServed: NotServedWire.optional().describe('When live is false on an agent-callable row: why'),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'CorridorsResponse' })
export type CorridorsResponse = z.infer<typeof CorridorsResponse>
