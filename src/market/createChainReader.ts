import { type Address, BaseError, ContractFunctionExecutionError, parseAbi } from 'viem'
import {
  type ChainReading,
  ChainReadError,
  type ChainReadPlan,
  type FeedReading,
  type FeedSpec,
  type PoolReading,
  type PoolSpec,
  type ReadChain,
} from './chainReading.ts'

/** Chainlink AggregatorV3, the two functions a refresh reads (live-chain.md (d)). */
const aggregatorV3Abi = parseAbi([
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
])

/** A balance-model pool's balance of coin `i`: Curve, Curve NG and PancakeSwap stable all answer it (live-chain.md (e)). */
const poolAbi = parseAbi(['function balances(uint256 i) view returns (uint256)'])

type AggregatorCall = { address: Address; abi: typeof aggregatorV3Abi; functionName: 'decimals' | 'latestRoundData' }
type PoolCall = { address: Address; abi: typeof poolAbi; functionName: 'balances'; args: readonly [bigint] }

type CallResult = { status: 'success'; result?: unknown; error?: unknown } | { status: 'failure'; result?: unknown; error?: unknown }

/** What a refresh asks of a chain's RPC; a viem public client fits. */
export type ChainReaderClient = {
  getBlock(parameters: { blockTag: 'latest' }): Promise<{ number: bigint; timestamp: bigint }>
  /**
   * viem's multicall3 `aggregate3` in one `eth_call`, deployless (the contract's code rides in the call), so the same
   * request works on every chain and on a bare anvil.
   */
  multicall(parameters: {
    contracts: readonly (AggregatorCall | PoolCall)[]
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
 * each pool's `balances(i)` per coin) and `eth_feeHistory`: three requests (`rpcCalls`, transport retries not
 * counted), or two with nothing to call. A feed that reverts, has no code or answers a non-positive price is a failed
 * `FeedReading`, a pool whose balance call fails or answers 0 a failed `PoolReading`; an RPC that cannot be
 * reached or answers nonsense, or a sequencer-uptime feed that cannot be read, rejects with a `ChainReadError`.
 */
export function createChainReader(client: ChainReaderClient): ReadChain {
  return async (plan) => {
    const block = await rpc(plan, 'the latest block', () => client.getBlock({ blockTag: 'latest' }))
    const blockNumber = block.number
    const feedContracts = feedCalls(plan)
    const contracts = [...feedContracts, ...poolCalls(plan)]
    // batchSize 0: one aggregate3 whatever its size (viem splits a multicall past 1,024 bytes of calldata by default).
    const [results, feeHistory] = await Promise.all([
      contracts.length === 0
        ? []
        : rpc(plan, 'the multicall', () =>
            client.multicall({ contracts, allowFailure: true, deployless: true, batchSize: 0, blockNumber }),
          ),
      rpc(plan, 'eth_feeHistory', () => client.getFeeHistory({ blockCount: FEE_HISTORY_BLOCKS, blockNumber, rewardPercentiles: [50] })),
    ])
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
      pools: poolReadings(plan, results.slice(feedContracts.length)),
      rpcCalls: contracts.length === 0 ? 2 : 3,
    }
    if (plan.sequencerUptimeFeed !== undefined)
      reading.sequencer = sequencerStatus(plan, plan.sequencerUptimeFeed, results[2 * plan.feeds.length])
    return reading
  }
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

/** Per pool, `balances(i)` for each coin in order. */
function poolCalls(plan: ChainReadPlan): PoolCall[] {
  return (plan.pools ?? []).flatMap((pool) =>
    Array.from(
      { length: pool.coins },
      (_, i): PoolCall => ({
        address: pool.address,
        abi: poolAbi,
        functionName: 'balances',
        args: [BigInt(i)],
      }),
    ),
  )
}

/** The pools' results, `coins` of them per pool in the plan's order. */
function poolReadings(plan: ChainReadPlan, results: readonly CallResult[]): PoolReading[] {
  let next = 0
  return (plan.pools ?? []).map((pool) => {
    const own = results.slice(next, next + pool.coins)
    next += pool.coins
    return poolReading(pool, own)
  })
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
