import * as z from 'zod'
import { AddressSchema } from './address.ts'

/**
 * Schemas of the files under `manifest/`. Every figure carries its source; decimal figures are strings so no
 * float ever touches money. The loader (`src/catalogue/loadCatalogue.ts`) parses each file with these and turns
 * decimal strings into fixed-point bigints.
 */

export const CHAIN_CODES = ['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL', 'SOL', 'TRX'] as const
export const ChainCode = z.enum(CHAIN_CODES)
export type ChainCode = z.infer<typeof ChainCode>
/**
 * A chain code as a request names it: any case ("pol", "Pol"), as token symbols are, read as the upper-case code.
 * The schema published is the code's.
 */
export const ChainCodeInput = z.preprocess((value) => (typeof value === 'string' ? value.toUpperCase() : value), ChainCode)

/** Chains a caller may name in QuoteParams (DESIGN 7.1: the spec's six plus GNO and CEL). */
export const EVM_CHAIN_CODES = ['ETH', 'POL', 'ARB', 'OPT', 'BAS', 'BNB', 'GNO', 'CEL'] as const
export const EvmChainCode = z.enum(EVM_CHAIN_CODES)
export type EvmChainCode = z.infer<typeof EvmChainCode>

/** Chains listed for discovery only (DESIGN 7.1): not EVM, so their token addresses take the chain's own form. */
export const ListedChainCode = ChainCode.exclude(EVM_CHAIN_CODES)
export type ListedChainCode = z.infer<typeof ListedChainCode>

/** Whether a chain is one of the EVM chains quotes and swaps accept. */
export function isEvmChain(chain: ChainCode): chain is EvmChainCode {
  return (EVM_CHAIN_CODES as readonly ChainCode[]).includes(chain)
}

export const CURRENCIES = ['USD', 'EUR', 'GBP', 'ZAR', 'NGN', 'KES', 'SGD'] as const
export const Currency = z.enum(CURRENCIES)
export type Currency = z.infer<typeof Currency>

/** A non-negative decimal string such as "1.3" or "3100". */
/** A plain non-negative decimal: digits, optionally a point and more digits; no sign, exponent or spaces. */
export const DECIMAL_PATTERN = /^[0-9]+(\.[0-9]+)?$/

export const DecimalString = z.string().regex(DECIMAL_PATTERN, 'must be a non-negative decimal string')
/** An integer string of atomic units. */
export const IntegerString = z.string().regex(/^[0-9]+$/, 'must be a non-negative integer string')
export const Source = z.string().min(3, 'every figure needs a source')

export const ChainEntry = z.strictObject({
  id: ChainCode,
  name: z.string().min(1),
  chainId: z.number().int().positive(),
  tokens: z.array(z.string().min(1)).min(1),
  note: z.string().min(1).optional(),
  explorer: z
    .url({ protocol: /^https$/ })
    .optional()
    .describe("The chain's block explorer: a transaction is <explorer>/tx/<hash>"),
})
export type ChainEntry = z.infer<typeof ChainEntry>
export const ChainsFile = z.strictObject({ chains: z.array(ChainEntry) })

/** A token of `chain` whose contract is `address`: the fields every token entry has, in file order. */
function tokenEntry<C extends z.ZodType<ChainCode>, A extends z.ZodType<string>>(chain: C, address: A) {
  return z.strictObject({
    chain,
    symbol: z.string().min(1),
    address,
    decimals: z.number().int().min(0).max(36),
    /** The fiat currency the token tracks; its USD price is fx[currency] × tokenPrices[symbol] (default 1). */
    currency: Currency,
    /** A hub token is one the engine may route through but a user cannot ask for (DESIGN 4). */
    hub: z.boolean().optional(),
    /** Whether the token implements EIP-2612 permit (the router's executeWithPermit). */
    permit: z.boolean().optional(),
    /** The token refuses to change a non-zero allowance (USDT on Ethereum): approvals reset to zero first. */
    approvalReset: z.boolean().optional(),
    /** Where the catalogue departs from the spec's table (real decimals win: a wrong value moves 10^12 times the amount). */
    note: z.string().min(1).optional(),
    source: Source,
  })
}

/** A token on an EVM chain: its contract is an EVM address. */
export const EvmTokenEntry = tokenEntry(EvmChainCode, AddressSchema)
/** A token on a discovery-only chain (Solana, Tron): its address is in that chain's own form (base58). */
export const ListedTokenEntry = tokenEntry(ListedChainCode, z.string().min(20))
export const TokenEntry = z.discriminatedUnion('chain', [EvmTokenEntry, ListedTokenEntry])
export type TokenEntry = z.infer<typeof TokenEntry>
export type EvmTokenEntry = z.infer<typeof EvmTokenEntry>

/** Whether a token entry is on an EVM chain, so its address is an EVM address. */
export function isEvmTokenEntry(entry: TokenEntry): entry is EvmTokenEntry {
  return isEvmChain(entry.chain)
}
export const TokensFile = z.strictObject({ tokens: z.array(TokenEntry) })

export const CorridorEntry = z.strictObject({
  from: z.string().min(1),
  to: z.string().min(1),
  chains: z.array(ChainCode).min(1),
  description: z.string().min(1),
  agentCallable: z.boolean(),
})
export type CorridorEntry = z.infer<typeof CorridorEntry>
export const CorridorsFile = z.strictObject({ corridors: z.array(CorridorEntry) })

/** How a venue is priced. `stableswap`: Curve invariant; `solidlyStable`: x³y + xy³; `depth`: oracle-anchored. */
export const VenueModel = z.enum(['stableswap', 'solidlyStable', 'depth'])
/** How a venue is called on chain (the transaction builder picks the ABI by this). */
export const VenueProtocol = z.enum([
  'curve',
  'curve-ng',
  'uniswap-v3',
  'aerodrome',
  'velodrome',
  'pancakeswap-v3',
  'pancakeswap-stable',
  'mento',
  'balancer-v2',
  'sky-psm',
])

export const VenueEntry = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  chain: ChainCode,
  name: z.string().min(1),
  /** The DEX name reported as a quote's `tool`. */
  tool: z.string().min(1),
  protocol: VenueProtocol,
  model: VenueModel,
  /** The contract a swap call is sent to: the pool itself (Curve) or the protocol's router or broker. */
  contract: AddressSchema,
  /** The pool, where calldata does not name it (Uniswap v3, Solidly and Pancake routers find it from the tokens). */
  pool: AddressSchema.optional(),
  /** Protocol-specific call parameters (Uniswap fee tier, Solidly `stable` flag, Mento exchange provider). */
  params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  tokens: z.array(z.string().min(1)).min(2),
  /** stableswap: the amplification coefficient A (not A·n^(n-1), not A_PRECISION-scaled). */
  amp: z.number().int().positive().optional(),
  /** Swap fee in parts per million of the output (1 bp = 100). */
  feePpm: z.number().int().min(0).max(100_000),
  /** Whether the venue may be used in both directions (false: only tokens[0] → tokens[1]). */
  bidirectional: z.boolean().default(true),
  gasUnits: z.number().int().positive(),
  source: Source,
})
export type VenueEntry = z.infer<typeof VenueEntry>
export const VenuesFile = z.strictObject({ venues: z.array(VenueEntry) })

export const BridgeProtocol = z.enum(['cctp-v2', 'across', 'stargate-v2', 'usdt0-oft'])

/** One place a bridge can take a token in or deliver it out. */
export const BridgeEndpoint = z
  .strictObject({
    chain: ChainCode,
    token: z.string().min(1),
    /** The contract the deposit is sent to on this chain (TokenMessengerV2, SpokePool, Stargate pool, OFT). */
    contract: AddressSchema.optional(),
    /** Protocol-specific destination id: CCTP domain, LayerZero EID. */
    domain: z.number().int().min(0).optional(),
    /** The contract that delivers bridged tokens and their message here: our executor accepts deliveries from it. */
    deliveredBy: AddressSchema.optional(),
    /** The bridge delivers here but we know no contract to deposit from here: no lane starts on this endpoint. */
    inboundOnly: z.boolean().optional(),
  })
  .refine((e) => e.inboundOnly === true || e.contract !== undefined, {
    message: 'an endpoint that can send needs its deposit contract',
    path: ['contract'],
  })

export const DurationPrior = z.strictObject({ p50Sec: z.number().int().positive(), p95Sec: z.number().int().positive() })

export const BridgeEntry = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]+$/),
  name: z.string().min(1),
  protocol: BridgeProtocol,
  /** Protocol mode: CCTP fast/standard, Stargate taxi/bus. */
  mode: z.string().min(1).optional(),
  /** Endpoints that carry the same asset: any two with different chains form a lane. */
  endpoints: z.array(BridgeEndpoint).min(2),
  /** Proportional fee in ppm of the amount, by source chain, with a default. */
  feePpm: z.strictObject({ default: z.number().int().min(0), bySource: z.record(z.string(), z.number().int().min(0)).default({}) }),
  /** Flat fee taken from the bridged amount, in USD. */
  fixedFeeUsd: DecimalString,
  /** Gas spent on the destination chain by whoever completes the transfer, paid out of the bridged amount. */
  destinationGasUnits: z.number().int().min(0),
  /** A native-token messaging fee the signer pays as msg.value on the source chain, in USD. */
  messagingFeeUsd: DecimalString,
  /** Source-chain gas of the deposit call. */
  gasUnits: z.number().int().positive(),
  /** Whether a deposit can carry calls for our executor on the destination (Across message, CCTP hook, LayerZero
   * compose); Stargate's bus cannot. Routes that swap after the bridge need it. */
  destinationCalls: z.boolean(),
  minUsd: DecimalString,
  maxUsd: DecimalString,
  duration: z.strictObject({ default: DurationPrior, bySource: z.record(z.string(), DurationPrior).default({}) }),
  source: Source,
})
export type BridgeEntry = z.infer<typeof BridgeEntry>
export const BridgesFile = z.strictObject({ bridges: z.array(BridgeEntry) })

export const ChainMarket = z.strictObject({
  nativeSymbol: z.string().min(1),
  nativeUsd: DecimalString,
  gasPriceGwei: DecimalString,
  /** Flat L1 data fee per transaction on rollups, in USD (0 elsewhere). */
  l1FeeUsd: DecimalString,
  blockTimeSec: z.number().int().positive(),
  source: Source,
})

export const VenueState = z.union([
  z.strictObject({ balances: z.array(IntegerString).min(2), source: Source }),
  z.strictObject({ depthUsd: DecimalString, source: Source }),
  /**
   * A depth venue quoted live at a ladder of input sizes (QuoterV2, Balancer queries, Mento): per direction listed,
   * `[amountIn, amountOut]` in atomic units, both strictly increasing. The engine interpolates below the largest point
   * and quotes nothing beyond it; a direction not listed is not offered.
   */
  z.strictObject({
    ladder: z
      .array(
        z.strictObject({
          from: z.string().min(1),
          to: z.string().min(1),
          points: z.array(z.tuple([IntegerString, IntegerString])).min(1),
        }),
      )
      .min(1),
    source: Source,
  }),
])

/** One lane's own figures in market.json `bridgeFees` (see there). */
export const LaneFees = z
  .strictObject({
    messagingFeeUsd: DecimalString.optional(),
    composeMessagingFeeUsd: DecimalString.optional(),
    /** Proportional fee in ppm of the bridged amount, in place of the bridge's `feePpm`. */
    feePpm: z.number().int().min(0).max(1_000_000).optional(),
    /** Flat fee taken from the bridged amount, in USD, in place of the bridge's `fixedFeeUsd`. */
    fixedFeeUsd: DecimalString.optional(),
    /** Destination gas paid out of the bridged amount, in place of the bridge's (0 where `fixedFeeUsd` already pays the fill). */
    destinationGasUnits: z.number().int().min(0).optional(),
    /** The least and most the lane takes, in atomic units of its source token (the bridge's USD range still holds). */
    minAmount: IntegerString.optional(),
    maxAmount: IntegerString.optional(),
    /**
     * What the lane's relayers fill at once, in atomic units of its source token (Across's `maxDepositInstant`): one
     * balance every deposit on the lane draws on, so the deposits of one batch are summed against it.
     */
    instantAmount: IntegerString.optional(),
    /** The bridge's own service these fees were read from (the live market); absent: a figure of the snapshot. */
    quotedBy: z.enum(['across']).optional(),
    /**
     * The lane's settlement p50 and p95 in seconds, in place of the bridge's `duration` prior (an Across lane's, from
     * Across's fill estimate read live); both or neither.
     */
    durationP50Sec: z.number().int().positive().optional(),
    durationP95Sec: z.number().int().positive().optional(),
    source: Source,
  })
  .refine((lane) => (lane.durationP50Sec === undefined) === (lane.durationP95Sec === undefined), {
    message: 'durationP50Sec and durationP95Sec go together',
    path: ['durationP95Sec'],
  })
  .refine((lane) => lane.durationP50Sec === undefined || lane.durationP95Sec === undefined || lane.durationP95Sec >= lane.durationP50Sec, {
    message: 'durationP95Sec must not be less than durationP50Sec',
    path: ['durationP95Sec'],
  })
  .refine((lane) => lane.composeMessagingFeeUsd === undefined || lane.messagingFeeUsd !== undefined, {
    message: 'composeMessagingFeeUsd needs messagingFeeUsd',
    path: ['composeMessagingFeeUsd'],
  })
  .refine((lane) => lane.minAmount === undefined || lane.maxAmount === undefined || BigInt(lane.minAmount) <= BigInt(lane.maxAmount), {
    message: 'minAmount must not be more than maxAmount',
    path: ['minAmount'],
  })
export type LaneFees = z.infer<typeof LaneFees>

export const MarketFile = z.strictObject({
  asOf: z.iso.datetime(),
  source: Source,
  chains: z.partialRecord(ChainCode, ChainMarket),
  /** USD per one unit of each currency. */
  fx: z.record(Currency, z.strictObject({ usd: DecimalString, source: Source })),
  /** A token's price relative to its currency where it is not exactly 1 (USDe, sUSDe, PYUSD). */
  tokenPrices: z.record(z.string(), z.strictObject({ ratio: DecimalString, source: Source })),
  venues: z.record(z.string(), VenueState),
  /**
   * A bridge lane's own figures, by bridge id and `SRC>DST` lane, where they differ from the bridge's; each field left
   * out is the bridge's. The live market writes each LayerZero lane's `quoteSend` here (`messagingFeeUsd`, USD paid as
   * msg.value on the source chain, and `composeMessagingFeeUsd` for a deposit that carries a compose, a swap on
   * arrival; default `messagingFeeUsd`), and each Across lane's suggested fees (`feePpm`, `fixedFeeUsd`,
   * `destinationGasUnits`, the deposit limits `minAmount` and `maxAmount`, `instantAmount`, `quotedBy`, and the durations
   * `durationP50Sec` and `durationP95Sec` from Across's fill estimate).
   */
  bridgeFees: z.record(z.string(), z.record(z.string().regex(/^[A-Z]{3}>[A-Z]{3}$/, 'a lane is SRC>DST'), LaneFees)).optional(),
})

export const PricingFile = z.strictObject({
  /** The all-in swap fee, in basis points (spec 1: 0.5%). */
  feeBps: z.number().int().min(0).max(10_000),
  /** BALANCED ranking: bps of cost one minute of p95 duration is worth (DESIGN 4). */
  balancedLambdaBpsPerMinute: DecimalString,
  /** Gas the router adds around a route's calls (pull, margin transfer, delivery, event). */
  routerOverheadGasUnits: z.number().int().positive(),
  /** What the chain tests measured the router to add on anvil, with the method (documentation, not used). */
  routerOverheadMeasured: z
    .strictObject({
      acrossDepositGas: z.number().int().positive(),
      uniswapV3SwapGas: z.number().int().positive(),
      method: z.string().min(1),
      source: Source,
    })
    .optional(),
  /** Safety margin on gas limits, in percent. */
  gasMarginPercent: z.number().int().min(0).max(100),
  agentCallFeeUsdc: DecimalString,
  mppCallFeePathUsd: DecimalString,
  quoteTtlSec: z.number().int().positive(),
  benchmark: z.string().min(1),
  moat: z.strictObject({ summary: z.string().min(1), wedge: z.string().min(1) }),
  source: Source,
})
