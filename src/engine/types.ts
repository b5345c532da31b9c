import type { Address } from '../schemas/address.ts'
import type { EncodingGap } from '../schemas/encodings.ts'
import type { ChainCode, CorridorEntry, Currency, EvmChainCode, ListedChainCode } from '../schemas/catalogue.ts'
import type { PreparedStableSwap } from './stableSwap.ts'
import type { SolidlyStablePool } from './solidlyStable.ts'

/** What every token of the catalogue has; `key` is `CHAIN:SYMBOL`. Prices are USD per whole token, 18-decimal fixed point. */
type TokenFields = {
  key: string
  symbol: string
  decimals: number
  currency: Currency
  isHub: boolean
  hasPermit: boolean
  /** Approvals must go through zero (USDT on Ethereum). */
  needsApprovalReset: boolean
  priceUsdE18: bigint
}

/** A token on an EVM chain, the chains quotes and swaps accept: what venues, lanes and routes carry. */
export type Token = TokenFields & { chain: EvmChainCode; address: Address }

/**
 * A token on a chain listed for discovery only (Solana, Tron; DESIGN 7.1): shown and observed, never routed. Its
 * address is in that chain's own form (base58), not an EVM address.
 */
export type ListedToken = TokenFields & { chain: ListedChainCode; address: string }

/** Any token of the catalogue; `isEvmToken` tells a routable one. */
export type CatalogueToken = Token | ListedToken

export type ChainInfo = {
  id: ChainCode
  name: string
  chainId: number
  tokens: readonly string[]
  note?: string
  /** Whether quotes and swaps accept the chain (DESIGN 7.1: SOL and TRX are listed for discovery only). */
  isAgentCallable: boolean
  /** USD per native token, 18-decimal fixed point (messaging fees paid as value). */
  nativeUsdE18: bigint
  /** Cost of one gas unit in USD, 18-decimal fixed point (gas price × native token price). */
  gasUnitUsdE18: bigint
  /** The rollup's L1 data fee of one route transaction, in USD, 18-decimal fixed point (0 elsewhere). */
  l1FeeUsdE18: bigint
  /**
   * On a chain that charges its L1 data fee as L2 gas inside the gas limit (Arbitrum, gas.ts L1_GAS_IN_LIMIT), what
   * sizes that gas (gas.ts l1GasUnits); undefined elsewhere. It sizes gas limits only: the fee itself is
   * `l1FeeUsdE18`, charged once.
   */
  l1GasPrices?: L1GasPrices
  blockTimeSec: number
}

/**
 * An Arbitrum-style chain's L1 data prices, in wei of its native token: per transaction (ArbGasInfo's per-L2-tx
 * price, the L1 cost of a transaction without calldata) and per byte of the transaction, and the least L2 base fee
 * the chain allows (the L1 cost is charged as that cost divided by the block's base fee, never below this).
 */
export type L1GasPrices = { perTxWei: bigint; perByteWei: bigint; minBaseFeeWei: bigint }

export type VenuePricing =
  | { model: 'stableswap'; pool: PreparedStableSwap }
  | { model: 'solidlyStable'; pool: SolidlyStablePool }
  | { model: 'depth'; depthUsdE18: bigint }
  | { model: 'ladder'; ladders: ReadonlyMap<string, QuoteLadder> }

/**
 * Outputs a venue was quoted at a ladder of input sizes, in atomic units, both strictly increasing (`ladderKey` names
 * the direction). Interpolated linearly below the largest input; nothing is quoted beyond it.
 */
export type QuoteLadder = { amountsIn: readonly bigint[]; amountsOut: readonly bigint[] }

/** The key of a ladder's direction: token indices in the venue's order. */
export const ladderKey = (i: number, j: number): string => `${i}>${j}`

export type Venue = {
  id: string
  chain: ChainCode
  name: string
  tool: string
  protocol: string
  contract: Address
  pool?: Address
  params: Readonly<Record<string, string | number | boolean>>
  tokens: readonly Token[]
  feePpm: bigint
  gasUnits: bigint
  pricing: VenuePricing
  /** Why no transaction can be built through it (DESIGN 7.20); undefined when one can. Routes never use such a venue. */
  gap?: EncodingGap
}

/** One directed use of a venue: token `i` in, token `j` out. */
export type SwapEdge = { venue: Venue; i: number; j: number; from: Token; to: Token }

export type DurationPrior = { p50Sec: number; p95Sec: number }

export type Bridge = {
  id: string
  name: string
  protocol: string
  mode?: string
  /** Can carry a destination order for our executor (see BridgeEntry.destinationCalls). */
  carriesDestinationCalls: boolean
  feePpmDefault: bigint
  feePpmBySource: Readonly<Partial<Record<ChainCode, bigint>>>
  fixedFeeUsdE18: bigint
  destinationGasUnits: bigint
  messagingFeeUsdE18: bigint
  gasUnits: bigint
  minUsdE18: bigint
  maxUsdE18: bigint
  durationDefault: DurationPrior
  durationBySource: Readonly<Partial<Record<ChainCode, DurationPrior>>>
}

/** One directed lane of a bridge: `from` on the source chain is delivered as `to` on the destination chain. */
export type BridgeLane = {
  bridge: Bridge
  from: Token
  to: Token
  sourceContract: Address
  destinationDomain?: number
  /** The bridge's contract on the destination chain (the OFT that credits the recipient), if it has one. */
  destinationContract?: Address
  /** The contract that delivers to the recipient on the destination chain (see BridgeEndpoint.deliveredBy). */
  deliveredBy?: Address
  /**
   * The messaging fee a deposit on this lane carries as msg.value, in USD (18-decimal): the lane's own figure
   * (market.json `bridgeFees`, a live `quoteSend`), else the bridge's.
   */
  messagingFeeUsdE18: bigint
  /** The same for a deposit that carries a compose message (a route that swaps on arrival). */
  composeMessagingFeeUsdE18: bigint
  /**
   * The compose fee was quoted live with the compose's executor gas (the router's overhead and the venues on arrival):
   * that gas is paid in the fee, so it is not taken from the bridged amount again.
   */
  isComposeGasPrepaid: boolean
  /**
   * Why the live market cannot price a deposit with a compose on this lane now (its quoteSend with one failed): routes
   * that swap on arrival do not use it; those that end at the bridge still may.
   */
  composeFeeGap?: string
  /**
   * The lane's own proportional fee (ppm), flat fee (USD, 18-decimal) and destination gas, in place of the bridge's
   * (market.json `bridgeFees`: an Across lane's suggested fees read live); undefined: the bridge's.
   */
  feePpm?: bigint
  fixedFeeUsdE18?: bigint
  destinationGasUnits?: bigint
  /**
   * The least and most a deposit on the lane may carry, in atomic units of `from` (an Across lane's deposit limits,
   * the largest no more than the largest amount its fees were read at); the bridge's USD range holds as well.
   */
  minAmountIn?: bigint
  maxAmountIn?: bigint
  /**
   * What the lane's relayers fill at once, in atomic units of `from` (an Across lane's `maxDepositInstant`, read
   * live): one balance, so a batch's deposits on the lane are summed against it (PoolInflows.overdrawnLane).
   */
  instantAmountIn?: bigint
  /** The bridge's own service the lane's fees were read from; undefined: the snapshot's figures. */
  feeQuotedBy?: 'across'
  /**
   * The lane's own settlement duration, in place of the bridge's prior for its source chain (market.json
   * `bridgeFees`: an Across lane's, from Across's fill estimate read live); undefined: the bridge's prior.
   */
  duration?: DurationPrior
  /** Why no deposit can be built on it; undefined when one can. Routes never use such a lane. */
  gap?: EncodingGap
  /** Why it cannot carry a destination order (a swap on arrival); undefined when it can. */
  composeGap?: EncodingGap
}

export type Pricing = {
  feeBps: bigint
  balancedLambdaBpsPerMinuteE18: bigint
  routerOverheadGasUnits: bigint
  gasMarginPercent: bigint
  quoteTtlSec: number
}

/** The compiled catalogue and market snapshot the engine routes over. Built once; read-only afterwards. */
export type Catalogue = {
  asOf: string
  chains: ReadonlyMap<ChainCode, ChainInfo>
  /** Every token including hubs, by `CHAIN:SYMBOL`. */
  tokens: ReadonlyMap<string, CatalogueToken>
  /** Case-insensitive lookup: `CHAIN:lowercase symbol` → token (user-facing tokens only). */
  tokensByLowerKey: ReadonlyMap<string, CatalogueToken>
  /** The same, hubs included: routes pass through hubs, so observed transfers may name them. */
  allTokensByLowerKey: ReadonlyMap<string, CatalogueToken>
  venues: readonly Venue[]
  bridges: readonly Bridge[]
  /** Every bridge name on the wire (`bridgeWireName`) and `NO_BRIDGE`, sorted. */
  bridgeNames: readonly string[]
  /** Swap edges leaving each token, by token key. */
  edgesFrom: ReadonlyMap<string, readonly SwapEdge[]>
  /** Bridge lanes by `SOURCE>DESTINATION` chain pair. */
  lanes: ReadonlyMap<string, readonly BridgeLane[]>
  corridors: readonly CorridorEntry[]
  fxUsdE18: Readonly<Record<Currency, bigint>>
  pricing: Pricing
  /** Figures the live market could not read fresh (src/market): routes that need them are left out (DESIGN 5). */
  gaps?: MarketGaps
  /** Where each chain's figures come from, when a live market compiled this catalogue; absent: all snapshot. */
  pricedOn?: ReadonlyMap<ChainCode, PricedOn>
  /** Live FX rates held through an FX market closure, each with what an answer priced on it must say. */
  fxNotes?: ReadonlyMap<Currency, string>
}

/** The source of a chain's figures: a live read at a block (ISO time of the block), or the snapshot of `asOf`. */
export type PricedOn = { source: 'rpc'; block: bigint; asOf: string } | { source: 'snapshot'; asOf: string }

/**
 * What a live market lacks: the chains whose state is stale or unread (gas, native price, sequencer), the
 * currencies whose FX rate is, the venues whose pool state is (by venue id), and the bridge lanes whose messaging fee
 * could not be quoted (by `<bridge id>:<SRC>><DST>`, or with `:compose` after it when only its quote with a compose
 * failed), each with the reason. `ungapped` is
 * the same market compiled without gaps, so a request it routes and this catalogue does not is "market unavailable",
 * not "no route".
 */
export type MarketGaps = {
  chains: ReadonlyMap<ChainCode, string>
  currencies: ReadonlyMap<Currency, string>
  venues: ReadonlyMap<string, string>
  lanes: ReadonlyMap<string, string>
  ungapped: Catalogue
}
