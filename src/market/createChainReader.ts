import { type Address, BaseError, ContractFunctionExecutionError, encodeFunctionData, type Hex, parseAbi } from 'viem'
import { ceilDiv } from '../engine/index.ts'
import {
  type ChainReading,
  ChainReadError,
  type ChainReadPlan,
  type FeedReading,
  type FeedSpec,
  type LadderDirection,
  type LadderDirectionReading,
  type LadderQuote,
  type LadderReading,
  type LadderSpec,
  type L1FeeReading,
  type L1FeeSpec,
  type MessagingFeeReading,
  type MessagingFeeSpec,
  type OracleSpec,
  type PoolReading,
  type PoolSpec,
  type ReadChain,
  type TokenRatioReading,
  type TokenRatioSpec,
  type TradingLimitsSpec,
} from './chainReading.ts'
import { type TokenTradingLimits, tradingLimitId, withinTradingLimits } from './mentoTradingLimits.ts'

/** Chainlink AggregatorV3, the two functions a refresh reads (live-chain.md (d)). */
const aggregatorV3Abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
])

/** A balance-model pool's balance of coin `i`: Curve, Curve NG and PancakeSwap stable all answer it (live-chain.md (e)). */
const poolAbi = parseAbi(['function balances(uint256 i) view returns (uint256)'])

/**
 * The Aerodrome / Velodrome v2 Router's reserves of the pool of `tokenA` and `tokenB` (stable or volatile) made by
 * `_factory`: `(reserveA, reserveB)` in the order the tokens were asked, whatever the pool's own order (routing.md 4.1).
 */
const solidlyRouterAbi = parseAbi([
  'function getReserves(address tokenA, address tokenB, bool stable, address _factory) view returns (uint256 reserveA, uint256 reserveB)',
])

/**
 * Uniswap v3's QuoterV2 (PancakeSwap v3's has the same interface): non-view, it runs the swap and reverts with the
 * result, which it catches; under `eth_call` inside aggregate3 it answers like a view (live-chain.md (e)).
 */
const quoterV2Abi = parseAbi([
  'function quoteExactInputSingle((address tokenIn, address tokenOut, uint256 amountIn, uint24 fee, uint160 sqrtPriceLimitX96) params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
])

/** Balancer v2 Vault's query of a batch swap: the Vault's deltas per asset (positive in, negative out). */
const balancerQueryAbi = parseAbi([
  'function queryBatchSwap(uint8 kind, (bytes32 poolId, uint256 assetInIndex, uint256 assetOutIndex, uint256 amount, bytes userData)[] swaps, address[] assets, (address sender, bool fromInternalBalance, address recipient, bool toInternalBalance) funds) returns (int256[] assetDeltas)',
])

/**
 * Mento's Broker (v2): what an exchange of its exchange provider pays for `amountIn`, and the trading limits its
 * `swapIn` enforces per limit id (the public mappings of mento-core `contracts/swap/Broker.sol`, as the mento-sdk's
 * ABI has them; not checked against a live Celo chain).
 */
const mentoBrokerAbi = parseAbi([
  'function getAmountOut(address exchangeProvider, bytes32 exchangeId, address tokenIn, address tokenOut, uint256 amountIn) view returns (uint256 amountOut)',
  'function tradingLimitsConfig(bytes32 limitId) view returns (uint32 timestep0, uint32 timestep1, int48 limit0, int48 limit1, int48 limitGlobal, uint8 flags)',
  'function tradingLimitsState(bytes32 limitId) view returns (uint32 lastUpdated0, uint32 lastUpdated1, int48 netflow0, int48 netflow1, int48 netflowGlobal)',
])

/** Mento's SortedOracles (Celo): a rate feed's median rate, numerator over denominator, and when it was reported. */
const sortedOraclesAbi = parseAbi([
  'function medianRate(address rateFeedId) view returns (uint256 numerator, uint256 denominator)',
  'function medianTimestamp(address rateFeedId) view returns (uint256)',
])

/** A LayerZero OFT's fee quote (Stargate v2 pools and USDT0 OFTs answer it): what `send` must carry as value. */
const oftQuoteAbi = parseAbi([
  'function quoteSend((uint32 dstEid, bytes32 to, uint256 amountLD, uint256 minAmountLD, bytes extraOptions, bytes composeMsg, bytes oftCmd) sendParam, bool payInLzToken) view returns ((uint256 nativeFee, uint256 lzTokenFee) fee)',
])

/**
 * The OP-stack GasPriceOracle predeploy (Fjord and later): an upper bound of the L1 data fee of a transaction whose
 * unsigned RLP encoding is `unsignedTxSize` bytes, in wei (it adds the signature and FastLZ's worst case itself).
 */
const gasPriceOracleAbi = parseAbi(['function getL1FeeUpperBound(uint256 unsignedTxSize) view returns (uint256)'])

/**
 * Arbitrum's ArbGasInfo precompile: prices in wei, per L2 transaction (the L1 cost of one without calldata), per L1
 * calldata byte, per storage allocation, and per ArbGas (base, congestion, total); and the minimum L2 base fee in wei
 * (`getMinimumGasPrice`; getPricesInWei's ArbGas base is the same figure, but some Nitro versions answer the block's
 * base fee in its place when it is lower, as in an `eth_call` without a gas price).
 */
const arbGasInfoAbi = parseAbi([
  'function getPricesInWei() view returns (uint256 perL2Tx, uint256 perL1CalldataByte, uint256 perStorageAllocation, uint256 perArbGasBase, uint256 perArbGasCongestion, uint256 perArbGasTotal)',
  'function getMinimumGasPrice() view returns (uint256)',
])

/** An ERC-4626 vault's assets for `shares` (EIP-4626; sUSDe answers USDe per share). */
const erc4626Abi = parseAbi(['function convertToAssets(uint256 shares) view returns (uint256)'])

/**
 * A Curve stableswap-ng pool's EMA price of coin i + 1 in coin 0, 18 decimals whatever the coins' decimals (the
 * pool's oracle; Curve's docs on stableswap-ng oracles).
 */
const curveNgOracleAbi = parseAbi(['function price_oracle(uint256 i) view returns (uint256)'])

/**
 * The price limits QuoterV2 swaps to when given a limit of 0 (TickMath's MIN_SQRT_RATIO + 1 selling token0,
 * MAX_SQRT_RATIO - 1 selling token1). A quote that ends there ran out of liquidity before using its whole input:
 * QuoterV2 does not check that it did, so its amountOut is not what the pool pays for that input.
 */
const MIN_SQRT_PRICE_LIMIT = 4_295_128_740n
const MAX_SQRT_PRICE_LIMIT = 1_461_446_703_485_210_103_287_273_052_203_988_822_378_723_970_341n

/** Balancer's SwapKind.GIVEN_IN. */
const GIVEN_IN = 0
const ZERO_ADDRESS: Address = '0x0000000000000000000000000000000000000000'

type AggregatorCall = { address: Address; abi: typeof aggregatorV3Abi; functionName: 'decimals' | 'latestRoundData' }
type BalanceCall = { address: Address; abi: typeof poolAbi; functionName: 'balances'; args: readonly [bigint] }
type ReservesCall = {
  address: Address
  abi: typeof solidlyRouterAbi
  functionName: 'getReserves'
  args: readonly [Address, Address, boolean, Address]
}
type PoolCall = BalanceCall | ReservesCall
type QuoterCall = {
  address: Address
  abi: typeof quoterV2Abi
  functionName: 'quoteExactInputSingle'
  args: readonly [{ tokenIn: Address; tokenOut: Address; amountIn: bigint; fee: number; sqrtPriceLimitX96: bigint }]
}
type BalancerQueryCall = {
  address: Address
  abi: typeof balancerQueryAbi
  functionName: 'queryBatchSwap'
  args: readonly [
    number,
    readonly { poolId: `0x${string}`; assetInIndex: bigint; assetOutIndex: bigint; amount: bigint; userData: `0x${string}` }[],
    readonly Address[],
    { sender: Address; fromInternalBalance: boolean; recipient: Address; toInternalBalance: boolean },
  ]
}
type MentoCall = {
  address: Address
  abi: typeof mentoBrokerAbi
  functionName: 'getAmountOut'
  args: readonly [Address, `0x${string}`, Address, Address, bigint]
}
type TradingLimitsCall = {
  address: Address
  abi: typeof mentoBrokerAbi
  functionName: 'tradingLimitsConfig' | 'tradingLimitsState'
  args: readonly [`0x${string}`]
}
type LadderCall = QuoterCall | BalancerQueryCall | MentoCall | TradingLimitsCall
type QuoteSendCall = {
  address: Address
  abi: typeof oftQuoteAbi
  functionName: 'quoteSend'
  args: readonly [
    {
      dstEid: number
      to: `0x${string}`
      amountLD: bigint
      minAmountLD: bigint
      extraOptions: `0x${string}`
      composeMsg: `0x${string}`
      oftCmd: `0x${string}`
    },
    boolean,
  ]
}
type OracleCall = {
  address: Address
  abi: typeof sortedOraclesAbi
  functionName: 'medianRate' | 'medianTimestamp'
  args: readonly [Address]
}

type L1FeeCall =
  | { address: Address; abi: typeof gasPriceOracleAbi; functionName: 'getL1FeeUpperBound'; args: readonly [bigint] }
  | { address: Address; abi: typeof arbGasInfoAbi; functionName: 'getPricesInWei' | 'getMinimumGasPrice' }

type TokenRatioCall =
  | { address: Address; abi: typeof erc4626Abi; functionName: 'convertToAssets'; args: readonly [bigint] }
  | { address: Address; abi: typeof curveNgOracleAbi; functionName: 'price_oracle'; args: readonly [bigint] }

type CallResult = { status: 'success'; result?: unknown; error?: unknown } | { status: 'failure'; result?: unknown; error?: unknown }

/** What a refresh asks of a chain's RPC; a viem public client fits. */
export type ChainReaderClient = {
  getBlock(parameters: { blockTag: 'latest' }): Promise<{ number: bigint; timestamp: bigint }>
  /**
   * viem's multicall3 `aggregate3` in one `eth_call`, deployless (the contract's code rides in the call), so the same
   * request works on every chain and on a bare anvil.
   */
  multicall(parameters: {
    contracts: readonly ReaderCall[]
    allowFailure: true
    deployless: true
    batchSize: number
    blockNumber: bigint
  }): Promise<readonly CallResult[]>
  getFeeHistory(parameters: {
    blockCount: number
    blockNumber: bigint
    rewardPercentiles: number[]
  }): Promise<{ baseFeePerGas: bigint[]; reward?: bigint[][] | undefined }>
}

/**
 * Options for the viem http transport of a chain reader's client: each request waits at most 5 s and is tried at
 * most twice, so an unreachable RPC fails a refresh in seconds rather than holding it for viem's defaults (10 s, 3
 * retries). A refresh makes two rounds of requests, so a silent RPC fails it within about 20 s at worst; a refused
 * connection at once.
 */
export const CHAIN_RPC_TRANSPORT_OPTIONS = { timeout: 5_000, retryCount: 1 } as const

/** Blocks of `eth_feeHistory` whose median priority fee is taken: odd, so the median is one block's. */
const FEE_HISTORY_BLOCKS = 5

/**
 * A `ReadChain` over one chain's RPC. A refresh pins the latest block, then reads at that block, in parallel, one
 * deployless multicall (each feed's `latestRoundData` and `decimals`, the sequencer-uptime feed's `latestRoundData`,
 * each pool's `balances(i)` per coin or a Solidly pool's reserves through its router, each depth venue's quote per
 * direction at each ladder size and a Mento venue's trading limits, each oracle rate, each LayerZero lane's
 * `quoteSend`, a rollup's L1 data fee, each token ratio; split in parts at the same block only past a node's init-code cap, multicallParts) and
 * `eth_feeHistory`: three requests (`rpcCalls`, transport retries not counted) with one part, two with nothing to
 * call. A feed that reverts, has no code or answers a non-positive price is a failed `FeedReading`, a pool whose
 * balance or reserves call fails or answers 0 a failed `PoolReading`, a quote that fails, runs out of liquidity or
 * pays no more than the size below it ends its ladder there (`LadderDirectionReading.end`), as does what a Mento
 * venue's trading limits leave (limits that cannot be read leave it no point, `LadderReading.error`); an RPC that
 * cannot be reached or answers nonsense, or a sequencer-uptime feed that cannot be read, rejects with a
 * `ChainReadError`.
 */
export function createChainReader(client: ChainReaderClient): ReadChain {
  return async (plan) => {
    const block = await rpc(plan, 'the latest block', () => client.getBlock({ blockTag: 'latest' }))
    const blockNumber = block.number
    const feedContracts = feedCalls(plan)
    const poolContracts = poolCalls(plan)
    const ladderContracts = ladderCalls(plan)
    const oracleContracts = oracleCalls(plan)
    const quoteSendContracts = quoteSendCalls(plan)
    const l1FeeContracts = l1FeeCalls(plan)
    const contracts = [
      ...feedContracts,
      ...poolContracts,
      ...ladderContracts,
      ...oracleContracts,
      ...quoteSendContracts,
      ...l1FeeContracts,
      ...tokenRatioCalls(plan),
    ]
    const feesFrom = feedContracts.length + poolContracts.length + ladderContracts.length + oracleContracts.length
    const l1FeeFrom = feesFrom + quoteSendContracts.length
    const parts = multicallParts(contracts)
    // batchSize 0: one aggregate3 per part whatever its size (viem splits a multicall past 1,024 bytes of calldata by
    // default); every part at the same block.
    const [answers, feeHistory] = await Promise.all([
      Promise.all(
        parts.map((part) =>
          rpc(plan, 'the multicall', () =>
            client.multicall({ contracts: part, allowFailure: true, deployless: true, batchSize: 0, blockNumber }),
          ),
        ),
      ),
      rpc(plan, 'eth_feeHistory', () => client.getFeeHistory({ blockCount: FEE_HISTORY_BLOCKS, blockNumber, rewardPercentiles: [50] })),
    ])
    const results = answers.flat()
    if (results.length !== contracts.length)
      throw new ChainReadError(plan.chain, `the multicall answered ${results.length} results for ${contracts.length} calls`)
    // With allowFailure, viem reports a failed aggregate3 request (the RPC dropped, timed out or refused the call) as
    // a failure of every call in it, not a rejection: that is the chain unread, not every feed reverting.
    for (const result of results)
      if (
        result.status === 'failure' &&
        result.error instanceof ContractFunctionExecutionError &&
        result.error.functionName === 'aggregate3'
      )
        throw new ChainReadError(plan.chain, `the multicall could not be read at block ${blockNumber}: ${describe(result.error)}`, {
          cause: result.error,
        })

    const reading: ChainReading = {
      chain: plan.chain,
      blockNumber,
      blockTimestamp: Number(block.timestamp),
      feeds: plan.feeds.map((feed, index) => feedReading(feed, results[2 * index], results[2 * index + 1])),
      gas: gasFigures(plan, feeHistory),
      pools: poolReadings(plan, results.slice(feedContracts.length, feedContracts.length + poolContracts.length)),
      ladders: ladderReadings(plan, results.slice(feedContracts.length + poolContracts.length), Number(block.timestamp)),
      oracles: oracleReadings(plan, results.slice(feedContracts.length + poolContracts.length + ladderContracts.length, feesFrom)),
      messagingFees: messagingFeeReadings(plan, results.slice(feesFrom, l1FeeFrom)),
      rpcCalls: 2 + parts.length,
    }
    if (plan.l1Fee !== undefined) reading.l1Fee = l1FeeReading(plan.l1Fee, results[l1FeeFrom], results[l1FeeFrom + 1])
    const ratiosFrom = l1FeeFrom + l1FeeContracts.length
    if (plan.tokenRatios !== undefined)
      reading.tokenRatios = plan.tokenRatios.map((spec, index) => tokenRatioReading(spec, results[ratiosFrom + index]))
    if (plan.sequencerUptimeFeed !== undefined)
      reading.sequencer = sequencerStatus(plan, plan.sequencerUptimeFeed, results[2 * plan.feeds.length])
    return reading
  }
}

/**
 * A deployless multicall sends its calls inside contract-creation code, which a node refuses past 49,152 bytes
 * (EIP-3860's init-code cap, enforced on `eth_call` too: anvil answers "Transaction creation failed"): calls are kept
 * to this many bytes of calldata per multicall, leaving room for Multicall3's own code (about 5,600 bytes) and the
 * deployless wrapper.
 */
const MULTICALL_CALLDATA_BYTES = 38_000
/** What aggregate3 adds per call: its target, allowFailure, two offsets, its calldata's length, and up to 32 of padding. */
const AGGREGATE3_BYTES_PER_CALL = 192

type ReaderCall = AggregatorCall | PoolCall | LadderCall | OracleCall | QuoteSendCall | L1FeeCall | TokenRatioCall

/**
 * The calls in as few multicalls as fit under MULTICALL_CALLDATA_BYTES each, in order, all at the pinned block: one
 * for every chain's plan without compose quotes; with them, Ethereum, Polygon, Arbitrum and Gnosis need two.
 */
function multicallParts(contracts: readonly ReaderCall[]): ReaderCall[][] {
  const parts: ReaderCall[][] = []
  let part: ReaderCall[] = []
  let bytes = 0
  for (const contract of contracts) {
    const size = (encodeFunctionData(contract as Parameters<typeof encodeFunctionData>[0]).length - 2) / 2 + AGGREGATE3_BYTES_PER_CALL
    if (part.length > 0 && bytes + size > MULTICALL_CALLDATA_BYTES) {
      parts.push(part)
      part = []
      bytes = 0
    }
    part.push(contract)
    bytes += size
  }
  if (part.length > 0) parts.push(part)
  return parts
}

/** Per feed `latestRoundData` then `decimals`, and last the sequencer-uptime feed's `latestRoundData`. */
function feedCalls(plan: ChainReadPlan): AggregatorCall[] {
  const calls: AggregatorCall[] = plan.feeds.flatMap((feed) => [
    { address: feed.address, abi: aggregatorV3Abi, functionName: 'latestRoundData' },
    { address: feed.address, abi: aggregatorV3Abi, functionName: 'decimals' },
  ])
  if (plan.sequencerUptimeFeed !== undefined)
    calls.push({ address: plan.sequencerUptimeFeed, abi: aggregatorV3Abi, functionName: 'latestRoundData' })
  return calls
}

/** How many calls read `pool`: one `getReserves` for a Solidly pool, else one `balances(i)` per coin. */
const poolCallCount = (pool: PoolSpec): number => (pool.solidly === undefined ? pool.coins : 1)

/** Per pool, `balances(i)` for each coin in order, or a Solidly pool's `getReserves` in the venue's token order. */
function poolCalls(plan: ChainReadPlan): PoolCall[] {
  return (plan.pools ?? []).flatMap((pool): PoolCall[] => {
    const { solidly } = pool
    if (solidly !== undefined)
      return [
        {
          address: pool.address,
          abi: solidlyRouterAbi,
          functionName: 'getReserves',
          args: [solidly.tokens[0], solidly.tokens[1], solidly.stable, solidly.factory],
        },
      ]
    return Array.from(
      { length: pool.coins },
      (_, i): PoolCall => ({
        address: pool.address,
        abi: poolAbi,
        functionName: 'balances',
        args: [BigInt(i)],
      }),
    )
  })
}

/** The pools' results, `poolCallCount` of them per pool in the plan's order. */
function poolReadings(plan: ChainReadPlan, results: readonly CallResult[]): PoolReading[] {
  let next = 0
  return (plan.pools ?? []).map((pool) => {
    const own = results.slice(next, next + poolCallCount(pool))
    next += poolCallCount(pool)
    return pool.solidly === undefined ? poolReading(pool, own) : reservesReading(pool, own[0])
  })
}

/** A Solidly pool's reserves as balances, in the venue's token order (the order they were asked in). */
function reservesReading(pool: PoolSpec, result: CallResult | undefined): PoolReading {
  const failed = (error: string): PoolReading => ({ id: pool.id, ok: false, error: `${pool.id} at ${pool.address}: ${error}` })
  // On one line: the reason goes into health and into a 503's detail.
  if (result?.status !== 'success') return failed(`getReserves() failed: ${describe(result?.error).replace(/\s+/g, ' ')}`)
  const pair = result.result
  if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((reserve) => typeof reserve === 'bigint'))
    return failed('getReserves() answered in an unexpected shape')
  const balances = pair as bigint[]
  const empty = balances.indexOf(0n)
  if (empty >= 0) return failed(`getReserves() answered 0 for ${pool.solidly?.tokens[empty]}: the pool holds none of it`)
  return { id: pool.id, ok: true, balances }
}

function poolReading(pool: PoolSpec, results: readonly CallResult[]): PoolReading {
  const failed = (error: string): PoolReading => ({ id: pool.id, ok: false, error: `${pool.id} at ${pool.address}: ${error}` })
  const balances: bigint[] = []
  for (let i = 0; i < pool.coins; i++) {
    const result = results[i]
    if (result?.status !== 'success') return failed(`balances(${i}) failed: ${describe(result?.error)}`)
    if (typeof result.result !== 'bigint') return failed(`balances(${i}) answered in an unexpected shape`)
    if (result.result === 0n) return failed(`balances(${i}) answered 0: the pool holds none of that coin`)
    balances.push(result.result)
  }
  return { id: pool.id, ok: true, balances }
}

/** How many `quoteSend` calls quote a lane: one plain, two with a compose (MessagingFeeSpec.compose). */
const quoteSendCount = (lane: MessagingFeeSpec): number => (lane.compose === undefined ? 1 : 2)

/**
 * Per lane, the source OFT's `quoteSend` paid in the native token: for a plain transfer, or with its compose at each
 * of the two message sizes (zero bytes: only the length is priced).
 */
function quoteSendCalls(plan: ChainReadPlan): QuoteSendCall[] {
  return (plan.messagingFees ?? []).flatMap((lane) => {
    const call = (extraOptions: Hex, composeMsg: Hex): QuoteSendCall => ({
      address: lane.oft,
      abi: oftQuoteAbi,
      functionName: 'quoteSend',
      args: [
        {
          dstEid: lane.dstEid,
          to: lane.recipient,
          amountLD: lane.amountLD,
          minAmountLD: 0n,
          extraOptions,
          composeMsg,
          oftCmd: lane.oftCmd,
        },
        false,
      ],
    })
    const { compose } = lane
    if (compose === undefined) return [call('0x', '0x')]
    return compose.sizes.map((bytes) => call(compose.extraOptions, `0x${'00'.repeat(bytes)}`))
  })
}

function messagingFeeReadings(plan: ChainReadPlan, results: readonly CallResult[]): MessagingFeeReading[] {
  let next = 0
  return (plan.messagingFees ?? []).map((lane): MessagingFeeReading => {
    const own = results.slice(next, next + quoteSendCount(lane))
    next += quoteSendCount(lane)
    const lanes = { bridgeId: lane.bridgeId, to: lane.to, ...(lane.compose === undefined ? {} : { isCompose: true as const }) }
    const failed = (error: string): MessagingFeeReading => ({
      ...lanes,
      ok: false,
      error: `${lane.bridgeId} ${plan.chain} → ${lane.to}${lane.compose === undefined ? '' : ' with a compose'} (${lane.oft}): ${error}`,
    })
    const fees: bigint[] = []
    for (const result of own) {
      if (result?.status !== 'success') return failed(`quoteSend() failed: ${describe(result?.error).replace(/\s+/g, ' ')}`)
      const fee = result.result as { nativeFee?: unknown } | undefined
      if (typeof fee?.nativeFee !== 'bigint') return failed('quoteSend() answered in an unexpected shape')
      fees.push(fee.nativeFee)
    }
    const [plain, longer] = fees
    if (plain === undefined) return failed('quoteSend() was not answered')
    const { compose } = lane
    if (compose === undefined || longer === undefined) return { ...lanes, ok: true, nativeFeeWei: plain }
    const [shortBytes, longBytes] = compose.sizes
    if (longer < plain) return failed(`quoteSend() asked less for a ${longBytes}-byte compose than for a ${shortBytes}-byte one`)
    // The fee at messageBytes on the line through the two quotes, rounded up: never understated.
    const perBytes = BigInt(compose.messageBytes - shortBytes)
    const nativeFeeWei = plain + ceilDiv((longer - plain) * perBytes, BigInt(longBytes - shortBytes))
    return { ...lanes, ok: true, nativeFeeWei }
  })
}

/** The L1 data fee's calls (ArbGasInfo: its prices, then the minimum base fee), when the plan names one. */
function l1FeeCalls(plan: ChainReadPlan): L1FeeCall[] {
  const spec = plan.l1Fee
  if (spec === undefined) return []
  if (spec.kind === 'arbGasInfo')
    return [
      { address: spec.address, abi: arbGasInfoAbi, functionName: 'getPricesInWei' },
      { address: spec.address, abi: arbGasInfoAbi, functionName: 'getMinimumGasPrice' },
    ]
  return [{ address: spec.address, abi: gasPriceOracleAbi, functionName: 'getL1FeeUpperBound', args: [BigInt(spec.txBytes)] }]
}

/**
 * The L1 data fee of a transaction of `spec.txBytes` bytes, in wei: the GasPriceOracle's upper bound as it answers, or
 * ArbGasInfo's cost of a transaction without calldata plus its price per L1 calldata byte times the size (Arbitrum
 * charges the compressed size, never more than this), with the prices and the minimum base fee (`minimum`, which
 * must be positive: the L1 part of a gas limit is divided by it).
 */
function l1FeeReading(spec: L1FeeSpec, result: CallResult | undefined, minimum: CallResult | undefined): L1FeeReading {
  const call =
    spec.kind === 'arbGasInfo'
      ? `ArbGasInfo ${spec.address} getPricesInWei()`
      : `GasPriceOracle ${spec.address} getL1FeeUpperBound(${spec.txBytes})`
  const failed = (error: string): L1FeeReading => ({ ok: false, error: `${call}: ${error}` })
  // On one line: the reason goes into health and into a 503's detail.
  if (result?.status !== 'success') return failed(`failed: ${describe(result?.error).replace(/\s+/g, ' ')}`)
  if (spec.kind === 'opStackGasPriceOracle')
    return typeof result.result === 'bigint' ? { ok: true, feeWei: result.result } : failed('answered in an unexpected shape')
  const prices = result.result
  if (!Array.isArray(prices) || prices.length !== 6 || typeof prices[0] !== 'bigint' || typeof prices[1] !== 'bigint')
    return failed('answered in an unexpected shape')
  const [perL2Tx, perL1CalldataByte] = prices as [bigint, bigint]
  const minimumCall = `ArbGasInfo ${spec.address} getMinimumGasPrice()`
  if (minimum?.status !== 'success') return { ok: false, error: `${minimumCall}: failed: ${describe(minimum?.error).replace(/\s+/g, ' ')}` }
  if (typeof minimum.result !== 'bigint' || minimum.result <= 0n)
    return { ok: false, error: `${minimumCall}: answered ${String(minimum.result)}, not a positive base fee` }
  return {
    ok: true,
    feeWei: perL2Tx + perL1CalldataByte * BigInt(spec.txBytes),
    arbitrum: { perL2TxWei: perL2Tx, perL1CalldataByteWei: perL1CalldataByte, minBaseFeeWei: minimum.result },
  }
}

/** One call per token ratio, last in the multicall. */
function tokenRatioCalls(plan: ChainReadPlan): TokenRatioCall[] {
  return (plan.tokenRatios ?? []).map(
    (spec): TokenRatioCall =>
      spec.kind === 'erc4626'
        ? { address: spec.vault, abi: erc4626Abi, functionName: 'convertToAssets', args: [10n ** BigInt(spec.shareDecimals)] }
        : { address: spec.pool, abi: curveNgOracleAbi, functionName: 'price_oracle', args: [0n] },
  )
}

/**
 * One whole token in its `of` token, 18 decimals: a vault's assets per whole share scaled from the asset's decimals
 * (rounded down), or the pool's EMA as it answers for coin 1 and its inverse for coin 0 (10^36 / price, rounded down).
 */
function tokenRatioReading(spec: TokenRatioSpec, result: CallResult | undefined): TokenRatioReading {
  const call =
    spec.kind === 'erc4626'
      ? `${spec.symbol} vault ${spec.vault} convertToAssets(1e${spec.shareDecimals})`
      : `Curve pool ${spec.pool} price_oracle(0)`
  const failed = (error: string): TokenRatioReading => ({ symbol: spec.symbol, ok: false, error: `${call}: ${error}` })
  // On one line: the reason goes into health and into a 503's detail.
  if (result?.status !== 'success') return failed(`failed: ${describe(result?.error).replace(/\s+/g, ' ')}`)
  if (typeof result.result !== 'bigint') return failed('answered in an unexpected shape')
  if (result.result === 0n) return failed('answered 0')
  const value = result.result
  if (spec.kind === 'erc4626') return { symbol: spec.symbol, ok: true, valueE18: (value * 10n ** 18n) / 10n ** BigInt(spec.assetDecimals) }
  return { symbol: spec.symbol, ok: true, valueE18: spec.coin === 1 ? value : 10n ** 36n / value }
}

/** Per oracle rate, `medianRate` then `medianTimestamp`. */
function oracleCalls(plan: ChainReadPlan): OracleCall[] {
  return (plan.oracles ?? []).flatMap((oracle): OracleCall[] => [
    { address: oracle.address, abi: sortedOraclesAbi, functionName: 'medianRate', args: [oracle.rateFeedId] },
    { address: oracle.address, abi: sortedOraclesAbi, functionName: 'medianTimestamp', args: [oracle.rateFeedId] },
  ])
}

/** Kept to 18 decimals, as Chainlink answers are at most. */
const ORACLE_DECIMALS = 18

function oracleReadings(plan: ChainReadPlan, results: readonly CallResult[]): FeedReading[] {
  return (plan.oracles ?? []).map((oracle, index) => oracleReading(oracle, results[2 * index], results[2 * index + 1]))
}

/** A SortedOracles median as a feed reading: numerator × 10^18 / denominator, rounded down, at its median timestamp. */
function oracleReading(oracle: OracleSpec, rate: CallResult | undefined, timestamp: CallResult | undefined): FeedReading {
  const failed = (error: string): FeedReading => ({
    id: oracle.id,
    ok: false,
    error: `${oracle.id} (rate feed ${oracle.rateFeedId} of SortedOracles ${oracle.address}): ${error}`,
  })
  if (rate?.status !== 'success') return failed(`medianRate() failed: ${describe(rate?.error)}`)
  if (timestamp?.status !== 'success') return failed(`medianTimestamp() failed: ${describe(timestamp?.error)}`)
  const pair = rate.result
  if (!Array.isArray(pair) || typeof pair[0] !== 'bigint' || typeof pair[1] !== 'bigint' || typeof timestamp.result !== 'bigint')
    return failed('the oracle answered in an unexpected shape')
  const [numerator, denominator] = pair as [bigint, bigint]
  if (denominator === 0n || numerator === 0n) return failed('it has no median rate (no report)')
  if (timestamp.result === 0n) return failed('it has no median timestamp (no report)')
  const answer = (numerator * 10n ** BigInt(ORACLE_DECIMALS)) / denominator
  if (answer === 0n) return failed('its median rate is below 10^-18')
  return { id: oracle.id, ok: true, answer, decimals: ORACLE_DECIMALS, updatedAt: Number(timestamp.result), roundId: 0n }
}

/**
 * Per depth venue, per direction, one quote per ladder size, smallest first; then, for a Mento venue, per token of
 * the exchange, its `tradingLimitsConfig` and `tradingLimitsState`.
 */
function ladderCalls(plan: ChainReadPlan): LadderCall[] {
  return (plan.ladders ?? []).flatMap((ladder) => [
    ...ladder.directions.flatMap((direction) => direction.amountsIn.map((amountIn) => ladderCall(direction.quote, amountIn))),
    ...tradingLimitsCalls(ladder),
  ])
}

function tradingLimitsCalls(ladder: LadderSpec): TradingLimitsCall[] {
  const limits = ladder.tradingLimits
  if (limits === undefined) return []
  return limits.tokens.flatMap((token): TradingLimitsCall[] => {
    const limitId = tradingLimitId(limits.exchangeId, token.address)
    return [
      { address: limits.broker, abi: mentoBrokerAbi, functionName: 'tradingLimitsConfig', args: [limitId] },
      { address: limits.broker, abi: mentoBrokerAbi, functionName: 'tradingLimitsState', args: [limitId] },
    ]
  })
}

function ladderCall(quote: LadderQuote, amountIn: bigint): LadderCall {
  switch (quote.kind) {
    case 'quoterV2':
      return {
        address: quote.quoter,
        abi: quoterV2Abi,
        functionName: 'quoteExactInputSingle',
        // A limit of 0: QuoterV2 swaps to the extreme price, so the answer shows when the pool ran out.
        args: [{ tokenIn: quote.tokenIn, tokenOut: quote.tokenOut, amountIn, fee: quote.fee, sqrtPriceLimitX96: 0n }],
      }
    case 'balancerQuery':
      return {
        address: quote.vault,
        abi: balancerQueryAbi,
        functionName: 'queryBatchSwap',
        args: [
          GIVEN_IN,
          [
            { poolId: quote.poolIds[0], assetInIndex: 0n, assetOutIndex: 1n, amount: amountIn, userData: '0x' },
            // Amount 0: all of the first step's output, as the built batchSwap does.
            { poolId: quote.poolIds[1], assetInIndex: 1n, assetOutIndex: 2n, amount: 0n, userData: '0x' },
          ],
          [...quote.assets],
          // A query moves nothing: no account is needed.
          { sender: ZERO_ADDRESS, fromInternalBalance: false, recipient: ZERO_ADDRESS, toInternalBalance: false },
        ],
      }
    case 'mentoBroker':
      return {
        address: quote.broker,
        abi: mentoBrokerAbi,
        functionName: 'getAmountOut',
        args: [quote.exchangeProvider, quote.exchangeId, quote.tokenIn, quote.tokenOut, amountIn],
      }
  }
}

/**
 * The ladders' results, one per size per direction, in the plan's order, then a Mento venue's trading limits (two
 * per token), which end each direction's ladder at what the Broker would accept from the block at `blockTimestamp` on
 * (withinTradingLimits); limits that cannot be read leave the venue no point, with the reason as `error`.
 */
function ladderReadings(plan: ChainReadPlan, results: readonly CallResult[], blockTimestamp: number): LadderReading[] {
  let next = 0
  return (plan.ladders ?? []).map((ladder): LadderReading => {
    const directions = ladder.directions.map((direction) => {
      const own = results.slice(next, next + direction.amountsIn.length)
      next += direction.amountsIn.length
      return ladderDirectionReading(direction, own)
    })
    const limits = ladder.tradingLimits
    if (limits === undefined) return { id: ladder.id, directions }
    const own = results.slice(next, next + 2 * limits.tokens.length)
    next += 2 * limits.tokens.length
    const read = tradingLimitsReading(limits, own)
    if (typeof read === 'string')
      return {
        id: ladder.id,
        directions: directions.map((direction) => ({ from: direction.from, to: direction.to, points: [], end: read })),
        error: read,
      }
    return {
      id: ladder.id,
      directions: directions.map((direction) => {
        const tokenIn = read.find((token) => token.symbol === direction.from)
        const tokenOut = read.find((token) => token.symbol === direction.to)
        if (tokenIn === undefined || tokenOut === undefined)
          return { ...direction, points: [], end: `${direction.from} → ${direction.to}: no trading limits read for its tokens` }
        return withinTradingLimits(direction, tokenIn, tokenOut, blockTimestamp)
      }),
    }
  })
}

/** Each token's trading limits, or why they could not be read (on one line: it goes into health and a 503). */
function tradingLimitsReading(limits: TradingLimitsSpec, results: readonly CallResult[]): TokenTradingLimits[] | string {
  const tokens: TokenTradingLimits[] = []
  for (const [index, token] of limits.tokens.entries()) {
    const [config, state] = [results[2 * index], results[2 * index + 1]]
    const at = `the trading limits of ${token.symbol} (limit id ${tradingLimitId(limits.exchangeId, token.address)}) at the Broker ${limits.broker}`
    if (config?.status !== 'success') return `${at}: tradingLimitsConfig() failed: ${describe(config?.error).replace(/\s+/g, ' ')}`
    if (state?.status !== 'success') return `${at}: tradingLimitsState() failed: ${describe(state?.error).replace(/\s+/g, ' ')}`
    const c = numbersOf(config.result, 6)
    const s = numbersOf(state.result, 5)
    if (c === undefined || s === undefined) return `${at}: answered in an unexpected shape`
    const [timestep0 = 0n, timestep1 = 0n, limit0 = 0n, limit1 = 0n, limitGlobal = 0n, flags = 0n] = c
    const [lastUpdated0 = 0n, lastUpdated1 = 0n, netflow0 = 0n, netflow1 = 0n, netflowGlobal = 0n] = s
    tokens.push({
      symbol: token.symbol,
      decimals: token.decimals,
      config: { timestep0: Number(timestep0), timestep1: Number(timestep1), limit0, limit1, limitGlobal, flags: Number(flags) },
      state: { lastUpdated0: Number(lastUpdated0), lastUpdated1: Number(lastUpdated1), netflow0, netflow1, netflowGlobal },
    })
  }
  return tokens
}

/** A tuple of `length` integers (viem answers uint32, int48 and uint8 as numbers) as bigints, or undefined. */
function numbersOf(value: unknown, length: number): bigint[] | undefined {
  if (!Array.isArray(value) || value.length !== length) return undefined
  const numbers: bigint[] = []
  for (const item of value) {
    if (typeof item === 'bigint') numbers.push(item)
    else if (typeof item === 'number' && Number.isSafeInteger(item)) numbers.push(BigInt(item))
    else return undefined
  }
  return numbers
}

/**
 * The ladder's points from the smallest size up to the first that failed, ran out of liquidity, or did not pay
 * strictly more than the one below it: the engine interpolates between points and refuses amounts above the last,
 * so a point is kept only if every size below it is sound.
 */
function ladderDirectionReading(direction: LadderDirection, results: readonly CallResult[]): LadderDirectionReading {
  const points: [bigint, bigint][] = []
  const reading = (end?: string): LadderDirectionReading => ({
    from: direction.from,
    to: direction.to,
    points,
    ...(end === undefined ? {} : { end }),
  })
  for (const [index, amountIn] of direction.amountsIn.entries()) {
    const result = results[index]
    const at = `${direction.from} → ${direction.to} at ${amountIn}`
    // On one line: the reason goes into health and into a 503's detail.
    if (result?.status !== 'success') return reading(`${at}: the quote failed: ${describe(result?.error).replace(/\s+/g, ' ')}`)
    const amountOut = quotedOut(direction.quote, result.result)
    if (typeof amountOut === 'string') return reading(`${at}: ${amountOut}`)
    const previous = points.at(-1)?.[1] ?? 0n
    if (amountOut <= previous) return reading(`${at}: the quote paid ${amountOut}, not more than ${previous} for the size below`)
    points.push([amountIn, amountOut])
  }
  return reading()
}

/** What one quote pays, or why it cannot be used. */
function quotedOut(quote: LadderQuote, result: unknown): bigint | string {
  switch (quote.kind) {
    case 'quoterV2': {
      if (!Array.isArray(result) || typeof result[0] !== 'bigint' || typeof result[1] !== 'bigint')
        return 'QuoterV2 answered in an unexpected shape'
      const isZeroForOne = BigInt(quote.tokenIn) < BigInt(quote.tokenOut)
      const limit = isZeroForOne ? MIN_SQRT_PRICE_LIMIT : MAX_SQRT_PRICE_LIMIT
      if (result[1] === limit) return 'the pool ran out of liquidity (the quote reached the price limit)'
      return result[0]
    }
    case 'balancerQuery': {
      const last = Array.isArray(result) ? result[2] : undefined
      if (typeof last !== 'bigint') return 'queryBatchSwap answered in an unexpected shape'
      return -last
    }
    case 'mentoBroker':
      return typeof result === 'bigint' ? result : 'getAmountOut answered in an unexpected shape'
  }
}

type RoundData = readonly [roundId: bigint, answer: bigint, startedAt: bigint, updatedAt: bigint, answeredInRound: bigint]

function isRoundData(value: unknown): value is RoundData {
  return Array.isArray(value) && value.length === 5 && value.every((item) => typeof item === 'bigint')
}

function feedReading(feed: FeedSpec, round: CallResult | undefined, decimals: CallResult | undefined): FeedReading {
  const failed = (error: string): FeedReading => ({ id: feed.id, ok: false, error: `${feed.id} at ${feed.address}: ${error}` })
  if (round?.status !== 'success') return failed(`latestRoundData() failed: ${describe(round?.error)}`)
  if (decimals?.status !== 'success') return failed(`decimals() failed: ${describe(decimals?.error)}`)
  if (!isRoundData(round.result) || typeof decimals.result !== 'number') return failed('the feed answered in an unexpected shape')
  const [roundId, answer, , updatedAt] = round.result
  if (answer <= 0n) return failed(`answered ${answer}, not a positive price`)
  if (decimals.result > 18) return failed(`has ${decimals.result} decimals; prices are kept to 18`)
  if (updatedAt === 0n) return failed('its latest round is not complete (updatedAt 0)')
  return { id: feed.id, ok: true, answer, decimals: decimals.result, updatedAt: Number(updatedAt), roundId }
}

/**
 * Chainlink's L2 sequencer-uptime feed: answer 0 up, 1 down, `startedAt` since when. Unreadable, it rejects the
 * whole read: without knowing the sequencer is up, no figure of that chain can be trusted (as Aave's sentinel does).
 */
function sequencerStatus(plan: ChainReadPlan, address: Address, round: CallResult | undefined): { isUp: boolean; since: number } {
  const fail = (why: string): never => {
    throw new ChainReadError(plan.chain, `the sequencer-uptime feed ${address} ${why}`)
  }
  if (round?.status !== 'success') return fail(`could not be read: ${describe(round?.error)}`)
  if (!isRoundData(round.result)) return fail('answered in an unexpected shape')
  const [, answer, startedAt] = round.result
  if (answer !== 0n && answer !== 1n) return fail(`answered ${answer}, neither 0 (up) nor 1 (down)`)
  if (startedAt === 0n) return fail('is not initialised (startedAt 0)')
  return { isUp: answer === 0n, since: Number(startedAt) }
}

/**
 * `eth_feeHistory` ending at the pinned block: its last `baseFeePerGas` entry is the next block's base fee; the
 * priority fee is the median of the blocks' 50th-percentile rewards (the lower middle for an even count).
 */
function gasFigures(plan: ChainReadPlan, history: { baseFeePerGas: bigint[]; reward?: bigint[][] | undefined }): ChainReading['gas'] {
  const baseFeePerGas = history.baseFeePerGas.at(-1)
  const rewards = (history.reward ?? []).map((percentiles) => percentiles[0])
  const sorted = rewards.filter((reward) => reward !== undefined).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const median = sorted[Math.floor((sorted.length - 1) / 2)]
  if (baseFeePerGas === undefined || median === undefined || sorted.length !== rewards.length)
    throw new ChainReadError(plan.chain, 'eth_feeHistory answered without base fees or rewards')
  return { baseFeePerGas, priorityFeePerGas: median }
}

/** Runs one request; any failure rejects the read, naming the chain and what was being read. */
async function rpc<T>(plan: ChainReadPlan, what: string, request: () => Promise<T>): Promise<T> {
  try {
    return await request()
  } catch (error) {
    throw new ChainReadError(plan.chain, `${what} could not be read from the RPC: ${describe(error)}`, { cause: error })
  }
}

function describe(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage
  if (error instanceof Error) return error.message
  return String(error)
}
