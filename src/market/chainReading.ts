import type { Address } from 'viem'
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
 * A balance-model pool the live market reads (Curve, Curve NG, PancakeSwap stable; live-chain.md (e)): `balances(i)`
 * for each of its coins, in the venue's token order.
 */
export type PoolSpec = {
  /** The venue id in manifest/venues.json. */
  id: string
  address: Address
  coins: number
}

/** Everything one refresh reads on one chain, in one multicall pinned to one block. */
export type ChainReadPlan = {
  chain: ChainCode
  feeds: readonly FeedSpec[]
  /** Chainlink's L2 sequencer-uptime feed (ARB, OPT, BAS): answer 0 means the sequencer is up. */
  sequencerUptimeFeed?: Address
  /** Pools whose balances price their venues (feedCatalogue.ts readPlanOf). */
  pools?: readonly PoolSpec[]
}

/** One pool's balances in atomic units, one per coin, or why they could not be read. */
export type PoolReading = { id: string; ok: true; balances: bigint[] } | { id: string; ok: false; error: string }

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
  /** From `eth_feeHistory` ending at that block: the next block's base fee and the median priority fee, in wei. */
  gas: { baseFeePerGas: bigint; priorityFeePerGas: bigint }
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
