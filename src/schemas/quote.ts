import * as z from 'zod'
import { AddressSchema } from './address.ts'
import { ChainCode, ChainCodeInput, DECIMAL_PATTERN } from './catalogue.ts'
import { unknownFieldsError } from './unknownFields.ts'

/** Spec 8: the slippage tolerance when a request names none. */
export const DEFAULT_SLIPPAGE = 0.005

/** The fields of QuoteParams, which other request bodies (a batch's source and recipients) reuse one by one. */
const QUOTE_FIELDS = {
  fromChain: ChainCodeInput.describe('Source chain code: ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL (any case)'),
  toChain: ChainCodeInput.describe('Destination chain code: ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL (any case)'),
  fromToken: z.string().min(1).max(32).describe('Source token symbol, case-insensitive (USDC, EURe, cKES, ...)'),
  toToken: z.string().min(1).max(32).describe('Destination token symbol, case-insensitive'),
  fromAmount: z
    .string()
    .max(80)
    .regex(DECIMAL_PATTERN, 'must be a decimal string such as "1000" or "12.5" (no sign, exponent or spaces)')
    .describe('Human-readable decimal amount of fromToken, as a string; no more fraction digits than the token has'),
  fromAddress: AddressSchema.describe('Sender wallet address'),
  toAddress: AddressSchema.optional().describe('Recipient on the destination chain (extension of the spec); defaults to fromAddress'),
  slippage: z
    .number()
    .min(0, 'must be at least 0')
    .max(0.1, 'must be at most 0.1 (10%)')
    .default(DEFAULT_SLIPPAGE)
    .describe('Maximum slippage as a fraction; default 0.005 (0.5%)'),
}

/**
 * Spec 2.1, with DESIGN 7.1 (GNO and CEL accepted; SOL and TRX answered 422) and 7.5 (slippage in [0, 0.1]). Strict:
 * a field dropped silently would build to the sender when a caller names the recipient `recipient` (400 naming the
 * field meant instead).
 */
export const QuoteParams = z
  .strictObject(QUOTE_FIELDS, {
    error: unknownFieldsError({
      known: Object.keys(QUOTE_FIELDS),
      elsewhere: {
        quoteId:
          'only POST /api/v1/swap, with an API key, reads a quoteId; this body is priced and built from its own fields, so drop quoteId or send it to /api/v1/swap',
      },
    }),
  })
  .meta({ id: 'QuoteParams' })
export type QuoteParams = z.infer<typeof QuoteParams>

/** The three rankings of POST /api/v1/quote, each a route a paid swap can build (DESIGN 7.27). */
export const RANKINGS = ['FASTEST', 'BALANCED', 'CHEAPEST'] as const
export const Ranking = z.enum(RANKINGS)
export type Ranking = z.infer<typeof Ranking>

const PAID_SWAP_FIELDS = {
  ...QUOTE_FIELDS,
  route: Ranking.optional().describe(
    "Which ranked route to build (extension of the spec, DESIGN 7.27): FASTEST, BALANCED or CHEAPEST, as POST /api/v1/quote ranks them; default BALANCED, the free quote's route. Not with quoteId, which names its route",
  ),
  quoteId: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      'A quoteId this service answered for this same body (extension of the spec, DESIGN 7.27): its route is built, and only while it still promises at least the quoted toAmountMin (else 422 quote_expired, nothing charged); unexpired (quotes live 60 s)',
    ),
}

/** The paid swap's body: QuoteParams, plus the ranked route to build, or the quote to build as quoted (DESIGN 7.27). */
export const PaidSwapParams = z
  .strictObject(PAID_SWAP_FIELDS, { error: unknownFieldsError({ known: Object.keys(PAID_SWAP_FIELDS) }) })
  .meta({ id: 'PaidSwapParams' })
export type PaidSwapParams = z.infer<typeof PaidSwapParams>

export const CostItemWire = z.object({
  kind: z.enum(['dex_fee', 'price_impact', 'bridge_fee', 'bridge_fixed_fee', 'destination_gas', 'rounding']),
  label: z.string(),
  usd: z.string().describe('USD, rounded up to 6 places; negative when a venue pays better than the oracle'),
  source: z
    .enum(['snapshot', 'across'])
    .optional()
    .describe(
      "Present on bridge fees, where they come from. across: the Across lane's suggested fees, read from Across's API by the live market (at most 5 minutes old). snapshot: a figure of the embedded snapshot, as CCTP's fast-transfer fee and Stargate's and USDT0's proportional fees always are (only the bridges' own services publish them), and Across's when its API is not read (SWAPEAZI_ACROSS_API_URL=off, or no live market). A LayerZero lane's messaging fee (its quoteSend, paid as the transaction's value) is read live per lane and is part of the source chain's cost, not an item here",
    ),
})

export const RouteStepWire = z.object({
  type: z.enum(['swap', 'bridge']),
  tool: z.string().describe('Venue or bridge name'),
  id: z.string().describe('Catalogue id of the venue or bridge'),
  fromChain: ChainCode,
  toChain: ChainCode,
  fromToken: z.string(),
  toToken: z.string(),
  fromAmount: z.string(),
  toAmount: z.string(),
})

export const RouteWire = z
  .object({
    id: z.string(),
    steps: z.array(RouteStepWire),
    realCost: z.object({
      usd: z.string(),
      bps: z.string().describe('Share of the input value, in basis points, 2 places'),
      items: z.array(CostItemWire),
    }),
    gasLimit: z
      .string()
      .describe(
        "Hex gas limit for the transaction, with the safety margin; on Arbitrum it includes the L1 data fee's gas (Arbitrum charges it inside the limit) for the largest transaction we build; the built transaction's own gas is sized for its calldata",
      ),
    estimatedDurationP95: z
      .number()
      .int()
      .describe(
        "p95 seconds (the p50 is the quote's estimatedDuration); for an Across lane read live, its leg counts the larger of the prior's p95 and 3 times Across's fill estimate",
      ),
  })
  .meta({ id: 'Route' })

/**
 * Extension: why a quoted route is not sold by this service, and what to do instead. A route that would use SwapEazi's
 * inert default router or executor, on a chain where the operator set no router of their own, is refused by the paid
 * swap (422 router_not_deployed) before any payment.
 */
export const NotSoldWire = z
  .object({
    reason: z.literal('router_not_deployed'),
    detail: z.string().describe("Which chain lacks a router of the operator's own, and what this service sells instead"),
    chains: z
      .array(ChainCode)
      .describe("The chains where the route would use SwapEazi's inert default router (its source) or executor (a swap on arrival)"),
    routerChains: z
      .array(ChainCode)
      .describe(
        "The agent-callable chains with a router of the operator's own: routes from them that swap on arrival only on them are sold",
      ),
  })
  .meta({ id: 'NotSold' })
export type NotSoldWire = z.infer<typeof NotSoldWire>

/** Spec 2.2 plus what an agent needs to judge the quote: the fee, the route and its costs, and the expiry. */
export const QuoteResult = z
  .object({
    fromChain: ChainCode,
    toChain: ChainCode,
    fromToken: z.string(),
    toToken: z.string(),
    fromAmount: z.string(),
    toAmount: z.string().describe('Estimated output after all fees'),
    toAmountMin: z.string().describe('Minimum output after slippage'),
    estimatedGasUSD: z
      .string()
      .describe(
        "The signer's source-chain gas and fees in USD. A LayerZero route's messaging fee is part of it; the built transaction sends that fee with 20% headroom as its value, the excess refunded to the sender on chain, so the wallet needs a little more native token than this",
      ),
    estimatedDuration: z
      .number()
      .int()
      .describe(
        "p50 seconds: the source transaction, the bridge's settlement prior (for an Across lane read live, Across's own fill estimate, a 75th percentile rounded up) and any swap on arrival",
      ),
    bridge: z.string().describe('Bridge protocol used, or "none" for a same-chain swap'),
    tool: z.string().describe('DEX tools used, joined with "+", or "none" for a bridge alone'),
    quoteId: z.string().describe('Signed quote token for POST /api/v1/swap; expires at expiresAt'),
    expiresAt: z
      .string()
      .describe('ISO 8601: until then (60 s) the quoteId can be built into a swap, whose own deadline then says by when it must run'),
    fee: z.object({
      token: z.string(),
      amount: z.string().describe('The 0.5% all-in fee in fromToken, rounded up to a whole atomic unit'),
      bps: z
        .number()
        .int()
        .describe(
          'The fee rate in basis points (50). The amount is rounded up to a whole atomic unit, so on a few atomic units it is a larger share of fromAmount than this rate',
        ),
    }),
    route: RouteWire,
    pricedOn: z
      .array(
        z.object({
          chain: ChainCode,
          source: z.enum(['rpc', 'snapshot']).describe('rpc: read live at `block`; snapshot: the embedded market of `asOf`'),
          block: z.string().optional(),
          asOf: z.string().describe('ISO 8601: the time of the block read, or of the snapshot'),
        }),
      )
      .describe("What the quote was priced on, per chain of its route (also inside the signed quoteId's claims)"),
    marketNotes: z
      .array(z.string())
      .optional()
      .describe('What the market state means for this quote, when it matters: an FX rate held through the weekend FX closure'),
    notSold: NotSoldWire.optional().describe(
      'Present when this service does not sell the route (a paid swap refuses it, 422 router_not_deployed, before any payment): why, and what to ask for instead. Absent: build_swap or POST /api/x402/swap builds it',
    ),
  })
  .meta({ id: 'QuoteResult' })
export type QuoteResult = z.infer<typeof QuoteResult>

/** Why a pair or corridor cell is not served (an extension field beside the spec's): a stable reason, the figures. */
export const NotServedWire = z.object({
  reason: z
    .enum(['no_pair', 'not_buildable', 'cost_exceeds_fee', 'no_route', 'router_not_deployed'])
    .describe(
      "not_buildable: a step no transaction can be built through yet; cost_exceeds_fee: never sold at a loss; router_not_deployed: every route would use SwapEazi's router or executor on a chain where this service's operator set none of their own (`chains`), so a paid swap refuses it",
    ),
  detail: z.string(),
  chains: z
    .array(ChainCode)
    .optional()
    .describe("router_not_deployed: the chains without a router of the operator's own that the routes would use"),
  costBps: z.number().int().optional().describe("cost_exceeds_fee: the cheapest route's real cost at the reference amount"),
  feeBps: z.number().int().optional().describe('cost_exceeds_fee: what the 0.5% fee covers'),
})
export type NotServedWire = z.infer<typeof NotServedWire>

/** Spec 2.3: an unroutable pair on the quote endpoints; `notServed` (an extension) says why, with the figures. */
export const UnsupportedPair = z
  .object({ supported: z.literal(false), reason: z.literal('no_route_found'), pair: z.string(), notServed: NotServedWire.optional() })
  .meta({ id: 'UnsupportedPair' })
export type UnsupportedPair = z.infer<typeof UnsupportedPair>

export const RankedQuoteEntry = QuoteResult.extend({ ranking: Ranking })

/** POST /api/v1/quote: three full quotes ranked FASTEST, BALANCED, CHEAPEST (one route may win several). */
export const RankedQuote = z
  .object({ routes: z.array(RankedQuoteEntry).length(3), viableRoutes: z.number().int(), candidateRoutes: z.number().int() })
  .meta({ id: 'RankedQuote' })
export type RankedQuote = z.infer<typeof RankedQuote>
