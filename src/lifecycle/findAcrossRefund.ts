import { type Address, decodeEventLog, getAddress, type Hex, parseAbiItem, toEventSelector } from 'viem'
import type { LegPosition, LifecycleAmount, TrackedSwap } from '../store/createStore.ts'
import { blockAtOrBefore } from './blockAtOrBefore.ts'
import { transferEvent } from './lifecycleEvents.ts'
import { legOfLog } from './recordSource.ts'
import type { TrackerContext } from './trackerContext.ts'

/** Across's deposit event (shared/reference/live-chain.md (f), from across-protocol/contracts V3SpokePoolInterface.sol). */
const fundsDepositedEvent = parseAbiItem(
  'event FundsDeposited(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 indexed destinationChainId, uint256 indexed depositId, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityDeadline, bytes32 indexed depositor, bytes32 recipient, bytes32 exclusiveRelayer, bytes message)',
)
const FUNDS_DEPOSITED = toEventSelector(fundsDepositedEvent)

/**
 * How long after a swap was built its Across deposit is first looked at for a refund: fills take seconds, and the
 * fill deadline our builds set is hours away (buildRouteTransaction), so a pending swap younger than this costs nothing.
 */
const REFUND_LOOK_AFTER_SEC = 3600n

export type AcrossRefund = { leg: LegPosition; received: LifecycleAmount; reason: string }

const addressOf = (word: Hex): Address => getAddress(`0x${word.slice(26)}`)

/**
 * An Across deposit no relayer filled before its fill deadline is refunded to its depositor (the swap's sender) on
 * the origin chain, by the SpokePool, in a later bundle (Across's documented behaviour; the refund's shape is not
 * checked against a live chain here): the input token's Transfer from the SpokePool to the depositor of exactly the
 * deposit's input amount, in a final block after the deadline. Undefined when the swap's bridge leg is no Across
 * deposit, its deadline has not passed, or no refund is there yet.
 */
export async function findAcrossRefund(context: TrackerContext, tracked: TrackedSwap): Promise<AcrossRefund | undefined> {
  const bridge = tracked.lifecycle.legs.bridge
  const chain = tracked.swap.fromChain as Parameters<TrackerContext['confirmations']>[0]
  const client = context.clients[chain]
  // The quote names the bridge (its wire name, "across"): other swaps cost no read here.
  if ((tracked.swap.quote as { bridge?: unknown } | null)?.bridge !== 'across') return undefined
  if (bridge === undefined || client === undefined) return undefined
  const final = (await client.getBlockNumber({ cacheTime: 0 })) - BigInt(context.confirmations(chain))
  if (final < bridge.blockNumber) return undefined
  const finalBlock = await client.getBlock({ blockNumber: final })
  if (finalBlock.timestamp < BigInt(Math.floor(Date.parse(tracked.swap.createdAt) / 1000)) + REFUND_LOOK_AFTER_SEC) return undefined
  const receipt = await client.getTransactionReceipt({ hash: bridge.txHash as Hex })
  const log = receipt.logs.find((entry) => entry.logIndex === bridge.logIndex)
  if (log?.topics[0] !== FUNDS_DEPOSITED) return undefined
  const { args } = decodeEventLog({ abi: [fundsDepositedEvent], data: log.data, topics: log.topics as [Hex, ...Hex[]] })
  const fillDeadline = BigInt(args.fillDeadline)
  if (finalBlock.timestamp <= fillDeadline) return undefined
  const token = addressOf(args.inputToken)
  const depositor = addressOf(args.depositor)
  const blockTime = context.catalogue().chains.get(chain)?.blockTimeSec ?? 2
  let fromBlock = await blockAtOrBefore(client, fillDeadline, blockTime)
  if (fromBlock < bridge.blockNumber) fromBlock = bridge.blockNumber
  while (fromBlock <= final) {
    const toBlock = final < fromBlock + context.maxBlockRange - 1n ? final : fromBlock + context.maxBlockRange - 1n
    const transfers = await client.getLogs({
      address: token,
      event: transferEvent,
      args: { from: log.address, to: depositor },
      fromBlock,
      toBlock,
      strict: true,
    })
    for (const transfer of transfers) {
      if (transfer.args.value !== args.inputAmount) continue
      if ((await context.store.lifecycle.destinationClaimedBy(chain, transfer.transactionHash, transfer.logIndex)) !== undefined) continue
      return {
        leg: legOfLog(chain, transfer),
        received: { chain, token, amount: transfer.args.value },
        reason: `no relayer filled the Across deposit before its fill deadline (${new Date(Number(fillDeadline) * 1000).toISOString()}): Across refunded the input to the sender on ${chain}`,
      }
    }
    fromBlock = toBlock + 1n
  }
  return undefined
}
