import type { Address, Hex } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'

/** A Chainlink AggregatorV3 feed the live market reads on one chain (DESIGN 5; live-chain.md (d)). */
export type FeedSpec = {
  /** What the answer prices: `fx:EUR` (USD per EUR), `native:ETH` (USD per the chain's native token). */
  id: string
  address: Address
  /** The feed's heartbeat: it updates at least this often while its market is open (not readable on chain). */
  heartbeatSec: number
}

/**
 * A balance-model pool the live market reads, its balances in the venue's token order: Curve, Curve NG and
 * PancakeSwap stable answer `balances(i)` for each of their coins at `address` (live-chain.md (e)); a Solidly stable
 * pool (Aerodrome, Velodrome v2), whose venue names its router rather than the pool, is read through the router at
 * `address` as `getReserves(tokenA, tokenB, stable, factory)`, which answers the reserves in the order asked.
 */
export type PoolSpec = {
  /** The venue id in manifest/venues.json. */
  id: string
  address: Address
  coins: number
  /** Set for a Solidly stable pool: read through its router, `tokens` in the venue's order. */
  solidly?: { tokens: readonly [Address, Address]; stable: boolean; factory: Address }
}

/**
 * How one direction of a depth venue is quoted, one call per ladder size (live-chain.md (e)): Uniswap v3 and
 * PancakeSwap v3 through QuoterV2 `quoteExactInputSingle` (non-view, read under `eth_call`), Balancer v2 through the
 * Vault's `queryBatchSwap` with the two-step shape the builder sends (src/tx/encodeBalancerBatchSwap.ts), Mento
 * through the Broker's `getAmountOut`.
 */
export type LadderQuote =
  | { kind: 'quoterV2'; quoter: Address; tokenIn: Address; tokenOut: Address; fee: number }
  | { kind: 'balancerQuery'; vault: Address; poolIds: readonly [Hex, Hex]; assets: readonly [Address, Address, Address] }
  | { kind: 'mentoBroker'; broker: Address; exchangeProvider: Address; exchangeId: Hex; tokenIn: Address; tokenOut: Address }

/** One direction of a depth venue: `from` in, `to` out (the catalogue's symbols), quoted at each of `amountsIn`. */
export type LadderDirection = {
  from: string
  to: string
  /** Atomic units of `from`, strictly increasing (feedCatalogue.ts LADDER_USD at the snapshot's prices). */
  amountsIn: readonly bigint[]
  quote: LadderQuote
}

/** A depth venue the live market prices from quotes at a fixed ladder of sizes (feedCatalogue.ts readPlanOf). */
export type LadderSpec = {
  /** The venue id in manifest/venues.json. */
  id: string
  /** What answers the quotes, for the venue state's source: `QuoterV2`, `Vault.queryBatchSwap`, `Broker.getAmountOut`. */
  quotedBy: string
  directions: readonly LadderDirection[]
  /**
   * Mento only: the Broker's trading limits of the exchange's two tokens, read in the same multicall
   * (`tradingLimitsConfig` and `tradingLimitsState` of each token's limit id), which end each direction's ladder at
   * what the Broker's `swapIn` would still accept (mentoTradingLimits.ts).
   */
  tradingLimits?: TradingLimitsSpec
}

/** Where a Mento venue's trading limits are read: its Broker, its exchange id, and its two tokens. */
export type TradingLimitsSpec = {
  broker: Address
  exchangeId: Hex
  tokens: readonly { symbol: string; address: Address; decimals: number }[]
}

/**
 * A currency's USD rate from Mento's SortedOracles on Celo (live-chain.md (d)): `medianRate(rateFeedId)` as a
 * numerator over a denominator (1e24) and `medianTimestamp(rateFeedId)`, for currencies with no Chainlink feed.
 */
export type OracleSpec = {
  /** `oracle:KES`: what the rate prices (USD per one unit of the currency). */
  id: string
  /** SortedOracles. */
  address: Address
  rateFeedId: Address
  /** How old its median may be (feeds.json; not readable on chain as a heartbeat is not). */
  maxAgeSec: number
}

/**
 * The LayerZero messaging fee of one lane from this chain (Stargate v2, USDT0 OFTs; live-chain.md (e)): the source
 * OFT's `quoteSend(sendParam, false)` for a plain transfer of `amountLD` to `to` or, with `compose`, for one that
 * carries a compose message for our executor on the destination, as a route that swaps on arrival sends it.
 */
export type MessagingFeeSpec = {
  /** The bridge id in manifest/bridges.json. */
  bridgeId: string
  /** The destination chain. */
  to: ChainCode
  oft: Address
  dstEid: number
  /** Who receives on the destination (32 bytes): the bridge's delivering contract there, as the swap sends it. */
  recipient: Hex
  amountLD: bigint
  /** Stargate: empty for the taxi, one zero byte for the bus. */
  oftCmd: Hex
  /**
   * The executor options (an lzCompose gas option) and two compose messages, of `sizes` bytes: LayerZero prices a
   * message affinely in its length, so the fee for `messageBytes` (the longest the builder sends) is extrapolated from
   * the two quotes, rounded up. Two short messages, not one long one: every call rides in the multicall's init code,
   * which a node caps at 49,152 bytes (EIP-3860), and a chain's compose lanes at full length would pass it.
   */
  compose?: { extraOptions: Hex; sizes: readonly [number, number]; messageBytes: number }
}

/** What one lane's `quoteSend` asks as `msg.value`, in wei of the source chain's native token, or why it failed. */
export type MessagingFeeReading = { bridgeId: string; to: ChainCode; isCompose?: true } & (
  | { ok: true; nativeFeeWei: bigint }
  | { ok: false; error: string }
)

/**
 * How a rollup's L1 data fee is read for one of our transactions of `txBytes` bytes (unsigned, RLP-encoded; routing.md
 * 5.2): on an OP-stack chain the GasPriceOracle predeploy's `getL1FeeUpperBound(txBytes)` (Fjord and later), on
 * Arbitrum the ArbGasInfo precompile's `getPricesInWei()`, whose first value is the L1 cost of a transaction without
 * calldata and second the price of one L1 calldata byte.
 */
export type L1FeeSpec = { kind: 'opStackGasPriceOracle' | 'arbGasInfo'; address: Address; txBytes: number }

/**
 * The L1 data fee of one transaction of the spec's size, in wei of the chain's native token, or why it failed. On
 * Arbitrum also the prices it was computed from and the chain's minimum L2 base fee (ArbGasInfo `getMinimumGasPrice`),
 * which size the L1 part of a gas limit (src/engine/gas.ts l1GasUnits).
 */
export type L1FeeReading =
  | { ok: true; feeWei: bigint; arbitrum?: { perL2TxWei: bigint; perL1CalldataByteWei: bigint; minBaseFeeWei: bigint } }
  | { ok: false; error: string }

/**
 * How a token's price relative to another token is read on this chain (market.json `tokenPrices`): an ERC-4626
 * vault's `convertToAssets(10^shareDecimals)`, its assets per whole share, or a two-coin Curve stableswap-ng pool's EMA
 * `price_oracle(0)` (coin 1's price in coin 0, 18 decimals), with the token as coin `coin` and `of` the other.
 */
export type TokenRatioSpec = { symbol: string; of: string } & (
  | { kind: 'erc4626'; vault: Address; shareDecimals: number; assetDecimals: number }
  | { kind: 'curveEma'; pool: Address; coin: 0 | 1 }
)

/** What one whole token is worth in its `of` token, 18 decimals, at the block read, or why it could not be read. */
export type TokenRatioReading = { symbol: string } & ({ ok: true; valueE18: bigint } | { ok: false; error: string })

/** Everything one refresh reads on one chain, in one multicall pinned to one block. */
export type ChainReadPlan = {
  chain: ChainCode
  feeds: readonly FeedSpec[]
  /** Chainlink's L2 sequencer-uptime feed (ARB, OPT, BAS): answer 0 means the sequencer is up. */
  sequencerUptimeFeed?: Address
  /** Pools whose balances price their venues (feedCatalogue.ts readPlanOf). */
  pools?: readonly PoolSpec[]
  /** Depth venues quoted at a ladder of sizes (feedCatalogue.ts readPlanOf). */
  ladders?: readonly LadderSpec[]
  /** Mento SortedOracles rates (feeds.json `mentoOracle`). */
  oracles?: readonly OracleSpec[]
  /** LayerZero messaging fees of the bridge lanes leaving this chain (feedCatalogue.ts readPlanOf). */
  messagingFees?: readonly MessagingFeeSpec[]
  /** The rollup's L1 data fee per transaction (BAS, OPT, CEL, ARB; feedCatalogue.ts L1_FEE_ORACLES). */
  l1Fee?: L1FeeSpec
  /** Token prices relative to another token (sUSDe in USDe, PYUSD in USDC; feedCatalogue.ts TOKEN_RATIO_READS). */
  tokenRatios?: readonly TokenRatioSpec[]
}

/** One pool's balances in atomic units, one per coin, or why they could not be read. */
export type PoolReading = { id: string; ok: true; balances: bigint[] } | { id: string; ok: false; error: string }

/**
 * One direction's quotes: `points` as (amountIn, amountOut) in atomic units, both strictly increasing, from the
 * smallest size up to the first that failed, ran out of liquidity or did not pay more than the one before (then
 * `end` says which and why; the sizes above it are not quoted).
 */
export type LadderDirectionReading = { from: string; to: string; points: [amountIn: bigint, amountOut: bigint][]; end?: string }

/**
 * One depth venue's ladder, one reading per direction of its spec, in its order; `error` when what the ladder depends
 * on besides its quotes (a Mento venue's trading limits) could not be read: then no direction has a point, and the
 * venue is a gap with that reason.
 */
export type LadderReading = { id: string; directions: LadderDirectionReading[]; error?: string }

/** One feed's `latestRoundData` (and `decimals`), or why it could not be read. */
export type FeedReading =
  | { id: string; ok: true; answer: bigint; decimals: number; updatedAt: number; roundId: bigint }
  | { id: string; ok: false; error: string }

/** What one refresh read on one chain, every figure from `blockNumber`. */
export type ChainReading = {
  chain: ChainCode
  blockNumber: bigint
  /** Unix seconds of that block. */
  blockTimestamp: number
  feeds: FeedReading[]
  /** One per pool of the plan, in its order (none when the plan names none). */
  pools: PoolReading[]
  /** One per depth venue of the plan, in its order (none when the plan names none). */
  ladders: LadderReading[]
  /**
   * One per oracle rate of the plan, in its order, as a feed reading: the median as an 18-decimal answer, its
   * timestamp as `updatedAt`, round 0 (none when the plan names none).
   */
  oracles: FeedReading[]
  /** One per messaging-fee lane of the plan, in its order (none when the plan names none). */
  messagingFees: MessagingFeeReading[]
  /** From `eth_feeHistory` ending at that block: the next block's base fee and the median priority fee, in wei. */
  gas: { baseFeePerGas: bigint; priorityFeePerGas: bigint }
  /** The L1 data fee of one of our transactions at that block, when the plan names how to read it. */
  l1Fee?: L1FeeReading
  /** One per token ratio of the plan, in its order, when the plan names any. */
  tokenRatios?: TokenRatioReading[]
  /** The sequencer-uptime feed at that block, when the plan names one: up, and since when (unix seconds). */
  sequencer?: { isUp: boolean; since: number }
  /** JSON-RPC requests this refresh sent, for the bench (a transport's retries after a failed request are not seen here). */
  rpcCalls: number
}

/** Reads one chain; rejects when the RPC cannot be reached or answers nonsense (the figures then go stale). */
export type ReadChain = (plan: ChainReadPlan) => Promise<ChainReading>

/** A chain could not be read at all (the RPC unreachable, too slow, or answering nonsense); its figures go stale. */
export class ChainReadError extends Error {
  constructor(
    readonly chain: ChainCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${chain}: ${message}`, options)
    this.name = 'ChainReadError'
  }
}
