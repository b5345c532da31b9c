// Chainlink AggregatorV3 stand-ins (test/chain/contracts/FeedStandIns.sol) placed at the addresses the live market
// reads (the catalogue's real feed addresses), with the controls a test needs to move them: a feed's answer and
// updatedAt, a failing feed, an L2 sequencer going down, blocks mined and time passing.
import type { Abi, Address } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import type { ChainReadPlan } from '../../src/market/chainReading.ts'
import { type AnvilInstance, type StartAnvilOptions, startAnvil, writeContractAndWait } from './anvil.ts'
import { type DepthPool, depthStandIns } from './depthStandIns.ts'
import { l1FeeStandIns } from './l1FeeStandIns.ts'
import { tokenRatioStandIns } from './tokenRatioStandIns.ts'
import { oftQuoteStandIns } from './oftQuoteStandIns.ts'
import { poolStandIns } from './poolStandIns.ts'
import { solidlyStandIns } from './solidlyStandIns.ts'
import { compiledTestContracts } from './testContracts.ts'

/** Decimals of Chainlink's FX and native-token USD feeds (live-chain.md (d)). */
export const FEED_DECIMALS = 8

export type PlaceFeedOptions = {
  /** Default FEED_DECIMALS. */
  decimals?: number
  description?: string
  /** A first round's answer; without it the feed answers 0 (round 0) until `setRound`. */
  answer?: bigint
  /** The first round's updatedAt (unix seconds); default the timestamp of the block that sets it. */
  updatedAt?: number
}

/** Controls over stand-in feeds on one anvil node. Each change is one transaction, mined in a block of its own. */
export type FeedStandIns = {
  anvil: AnvilInstance
  /** Puts a StandInAggregator's runtime code at `address` (anvil_setCode) and configures it. */
  placeFeed(address: Address, options?: PlaceFeedOptions): Promise<void>
  /**
   * Every feed of a live-market plan placed at its address with the answer `answers` gives its id (all required), its
   * sequencer-uptime feed, if any, up since an hour before the latest block, and each of its pools (a pool stand-in,
   * test/chain/poolStandIns.ts, or for a Solidly pool a router stand-in, test/chain/solidlyStandIns.ts) answering the balances `balances` gives its venue id (required for every pool), and
   * each of its depth venues quoted by a stand-in (test/chain/depthStandIns.ts) from the pool `depths` gives its
   * venue id (required for every depth venue), and each OFT its LayerZero lanes leave from asking `messagingFeeWei`
   * (default 10^12 wei, a negligible fee) for every lane (test/chain/oftQuoteStandIns.ts), and on a rollup its L1
   * data-fee stand-in asking 10^8 wei a byte (test/chain/l1FeeStandIns.ts: about USD 0.001 for our largest
   * transaction at ETH 3,100), and each ERC-4626 vault whose token price it reads answering 1.19 assets a share
   * (test/chain/tokenRatioStandIns.ts; a Curve pool's EMA is its pool stand-in's, 1 unless set).
   */
  placePlan(
    plan: ChainReadPlan,
    answers: Readonly<Record<string, bigint>>,
    balances?: Readonly<Record<string, readonly bigint[]>>,
    depths?: Readonly<Record<string, DepthPool>>,
    messagingFeeWei?: bigint,
  ): Promise<void>
  /** A new round on the feed at `address`, updated at `updatedAt` (unix seconds) or at the block that sets it. */
  setRound(address: Address, answer: bigint, updatedAt?: number): Promise<void>
  /**
   * An L2 sequencer-uptime feed at `address` (placed there if it is not yet): answer 0 while up, 1 while down, and
   * `startedAt` = `since`, when that status began (unix seconds).
   */
  setSequencer(address: Address, status: { isUp: boolean; since: number }): Promise<void>
  /** While failing, every read of the feed at `address` reverts ("StandInAggregator: failing"). */
  setFailing(address: Address, failing: boolean): Promise<void>
  /** Mines `blocks` empty blocks (default 1). */
  mine(blocks?: number): Promise<void>
  /** Moves the clock `seconds` forward and mines one block at the new time. */
  advanceTime(seconds: number): Promise<void>
  /** The latest block's number and timestamp (unix seconds). */
  latestBlock(): Promise<{ number: bigint; timestamp: number }>
}

let artifact: CompiledContract | undefined

/** StandInAggregator's ABI and bytecode, from the test contracts' compilation (test/chain/testContracts.ts). */
export function standInAggregatorArtifact(): CompiledContract {
  if (artifact) return artifact
  const output = compiledTestContracts('standIns')
  const found = output['FeedStandIns.sol:StandInAggregator']
  if (!found) throw new Error('feed stand-ins: StandInAggregator is missing from the compiled test contracts')
  artifact = found
  return artifact
}

const abi = (): Abi => standInAggregatorArtifact().abi

/** Feed controls over an anvil node already running (for example one of test/chain/deployCatalogue.ts's chains). */
export function feedStandIns(anvil: AnvilInstance): FeedStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  // A fixed gas limit: setRoundNow stores the block's timestamp, and an estimate made on a block of the same second as
  // the round before (rewriting a slot with its own value costs less) ran out of gas in the next second's block.
  const write = async (address: Address, functionName: string, args: readonly unknown[]): Promise<void> => {
    await writeContractAndWait(anvil, sender, { address, abi: abi(), functionName, args, gas: 300_000n })
  }
  const setRound = (address: Address, answer: bigint, updatedAt?: number): Promise<void> =>
    updatedAt === undefined ? write(address, 'setRoundNow', [answer]) : write(address, 'setRound', [answer, BigInt(updatedAt)])
  const latestBlock = async (): Promise<{ number: bigint; timestamp: number }> => {
    const block = await anvil.publicClient.getBlock({ blockTag: 'latest' })
    return { number: block.number, timestamp: Number(block.timestamp) }
  }
  const placeFeed = async (address: Address, options: PlaceFeedOptions = {}): Promise<void> => {
    await anvil.testClient.setCode({ address, bytecode: standInAggregatorArtifact().deployedBytecode })
    await write(address, 'configure', [options.decimals ?? FEED_DECIMALS, options.description ?? ''])
    if (options.answer !== undefined) await setRound(address, options.answer, options.updatedAt)
  }
  const setSequencer = async (address: Address, { isUp, since }: { isUp: boolean; since: number }): Promise<void> => {
    const code = await anvil.publicClient.getCode({ address })
    if (code !== standInAggregatorArtifact().deployedBytecode)
      await placeFeed(address, { decimals: 0, description: 'L2 Sequencer Uptime Status Feed' })
    const { timestamp } = await latestBlock()
    // The status change is reported in the next block, at least a second after the latest.
    await write(address, 'setRoundStartedAt', [isUp ? 0n : 1n, BigInt(since), BigInt(Math.max(since, timestamp + 1))])
  }
  return {
    anvil,
    placeFeed,
    async placePlan(plan, answers, balances = {}, depths = {}, messagingFeeWei = 10n ** 12n) {
      await depthStandIns(anvil).placeLadders(plan, depths)
      if (plan.l1Fee !== undefined) await l1FeeStandIns(anvil).place(plan.l1Fee, 0n, 10n ** 8n)
      for (const oft of new Set((plan.messagingFees ?? []).map((lane) => lane.oft)))
        await oftQuoteStandIns(anvil).placeOft(oft, messagingFeeWei)
      for (const pool of plan.pools ?? []) {
        const given = balances[pool.id]
        if (given === undefined) throw new Error(`feed stand-ins: no balances given for pool ${pool.id} on ${plan.chain}`)
        if (pool.solidly !== undefined) await solidlyStandIns(anvil).placePool({ address: pool.address, solidly: pool.solidly }, given)
        else await poolStandIns(anvil).placePool(pool.address, given)
      }
      for (const ratio of plan.tokenRatios ?? [])
        if (ratio.kind === 'erc4626') await tokenRatioStandIns(anvil).placeVault(ratio.vault, 119n * 10n ** 16n)
      for (const feed of plan.feeds) {
        const answer = answers[feed.id]
        if (answer === undefined) throw new Error(`feed stand-ins: no answer given for ${feed.id} on ${plan.chain}`)
        await placeFeed(feed.address, { description: feed.id, answer })
      }
      if (plan.sequencerUptimeFeed !== undefined)
        await setSequencer(plan.sequencerUptimeFeed, { isUp: true, since: (await latestBlock()).timestamp - 3_600 })
    },
    setRound,
    setSequencer,
    setFailing: (address, failing) => write(address, 'setFailing', [failing]),
    async mine(blocks = 1) {
      await anvil.testClient.mine({ blocks })
    },
    async advanceTime(seconds) {
      await anvil.testClient.increaseTime({ seconds })
      await anvil.testClient.mine({ blocks: 1 })
    },
    latestBlock,
  }
}

/** A fresh anvil node with feed controls over it; `stop()` in afterAll. */
export async function startFeedStandIns(options: StartAnvilOptions = {}): Promise<FeedStandIns & { stop(): Promise<void> }> {
  const anvil = await startAnvil(options)
  return { ...feedStandIns(anvil), stop: () => anvil.stop() }
}
