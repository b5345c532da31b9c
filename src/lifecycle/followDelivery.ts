import { getAddress, type Hex } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { LegPosition, LifecycleAmount, LifecycleSubstatus, TrackedSwap } from '../store/createStore.ts'
import { blockAtOrBefore } from './blockAtOrBefore.ts'
import { findAcrossRefund } from './findAcrossRefund.ts'
import { type ExpectedOrder, expectedOrderOf } from './expectedOrder.ts'
import { destinationExecutedEvent, destinationFallbackEvent, reasonText, transferEvent } from './lifecycleEvents.ts'
import { laneDeliveryRefusal } from './laneDelivery.ts'
import { legOfLog } from './recordSource.ts'
import { runHook, type TrackerClient, type TrackerContext } from './trackerContext.ts'

/** A delivery found on the destination chain. */
type Delivery = { leg: LegPosition; substatus: LifecycleSubstatus; received: LifecycleAmount; reason: string | null }

/**
 * Whether this tracker can follow a pending swap's delivery: it reads the destination chain, and the source chain
 * where a step needs it (the first step starts from the source block; an Across refund arrives on the source). A
 * replica that cannot must leave the swap's lease to one that can (a `serve` with fewer RPCs beside a `swapeazi
 * track` with them, or one whose RPC serves another chain): holding it would stop the delivery from being followed.
 */
export function canFollowDelivery(context: TrackerContext, tracked: TrackedSwap): boolean {
  const expected = expectedOrderOf(tracked.swap, context.catalogue())
  const destination = expected?.destination
  if (expected === undefined || destination === undefined) return false
  const reads = (chain: ChainCode): boolean => context.clients[chain] !== undefined && context.isChainUsable?.(chain) !== false
  const needsSource =
    tracked.lifecycle.destinationFromBlock === null || (tracked.swap.quote as { bridge?: unknown } | null)?.bridge === 'across'
  return reads(destination.chain) && (!needsSource || reads(expected.chain))
}

/**
 * One step of following a pending swap's delivery, under the swap's lease: reads the destination chain's final blocks
 * from where the last step stopped, for our executor's `DestinationExecuted` (done/completed) or `DestinationFallback`
 * (done/partial: the bridged token, how much) with the swap's reference and recipient, or, on a route with no
 * destination swap, the destination token's Transfer to the recipient of at least toAmountMin in a transaction that
 * carries the lane's own delivery (laneDeliveryRefusal: the bridge's mint or fill of this deposit). An executor event
 * that delivers less than it must (another token, or less than the minimum) is ignored: anyone can relay a message
 * with our reference. A log another swap already claimed is skipped, and a claim another replica made first is not
 * recorded (the store's unique destination claim). With nothing delivered, an Across deposit
 * refunded after its fill deadline is done/refunded (the refund, on the source chain, is then the destination leg).
 * Returns true when the swap is done.
 */
export async function followDelivery(context: TrackerContext, tracked: TrackedSwap): Promise<boolean> {
  const expected = expectedOrderOf(tracked.swap, context.catalogue())
  const destination = expected?.destination
  if (expected === undefined || destination === undefined) return false
  const client = context.clients[destination.chain]
  if (client === undefined) return false
  const { lifecycle } = context.store
  const ref = tracked.swap.ref
  let fromBlock = tracked.lifecycle.destinationFromBlock
  if (fromBlock === null) {
    const source = tracked.lifecycle.legs.source
    if (source === undefined) return false
    const sourceBlock = await context.clients[expected.chain]?.getBlock({ blockNumber: source.blockNumber })
    const blockTime = context.catalogue().chains.get(destination.chain)?.blockTimeSec ?? 2
    fromBlock = sourceBlock === undefined ? 0n : await blockAtOrBefore(client, sourceBlock.timestamp, blockTime)
  }
  const final = (await client.getBlockNumber({ cacheTime: 0 })) - BigInt(context.confirmations(destination.chain))
  const toBlock = final < fromBlock + context.maxBlockRange - 1n ? final : fromBlock + context.maxBlockRange - 1n
  const claimed = await claimedBySiblings(context, tracked)
  // With the destination read to its last final block and no delivery there, an Across deposit may have been refunded.
  const found =
    (fromBlock <= toBlock ? await findDelivery(context, client, expected, tracked, fromBlock, toBlock, claimed) : undefined) ??
    (toBlock >= final ? await refundOf(context, tracked) : undefined)
  const at = new Date(context.clock())
  if (found === undefined) {
    if (fromBlock <= toBlock) await lifecycle.update(ref, { state: 'pending', destinationFromBlock: toBlock + 1n, at }, ['pending'])
    return false
  }
  const done = await lifecycle.update(
    ref,
    { state: 'done', substatus: found.substatus, reason: found.reason, legs: { destination: found.leg }, received: found.received, at },
    ['pending'],
  )
  if (!done?.updated) return false
  context.log.info(
    { event: 'swap_done', ref, substatus: found.substatus, chain: found.leg.chain, tx: found.leg.txHash },
    `swap_done: ${found.substatus}`,
  )
  await runHook(context, 'onFinished', ref, () => context.onFinished?.(done.record, tracked))
  return true
}

async function refundOf(context: TrackerContext, tracked: TrackedSwap): Promise<Delivery | undefined> {
  const refund = await findAcrossRefund(context, tracked)
  return refund === undefined ? undefined : { ...refund, substatus: 'refunded' }
}

/** Destination logs the other legs of the same batch were matched to (`txHash:logIndex`). */
async function claimedBySiblings(context: TrackerContext, tracked: TrackedSwap): Promise<Set<string>> {
  const claimed = new Set<string>()
  const batch = tracked.lifecycle.disbursementRef
  if (batch === null) return claimed
  for (const leg of await context.store.lifecycle.getBatchLegs(batch)) {
    const destination = leg.legs.destination
    if (leg.ref !== tracked.swap.ref && destination !== undefined) claimed.add(`${destination.txHash}:${destination.logIndex}`)
  }
  return claimed
}

async function findDelivery(
  context: TrackerContext,
  client: TrackerClient,
  expected: ExpectedOrder,
  tracked: TrackedSwap,
  fromBlock: bigint,
  toBlock: bigint,
  claimed: ReadonlySet<string>,
): Promise<Delivery | undefined> {
  const destination = expected.destination
  if (destination === undefined) return undefined
  const chain = destination.chain
  const isFree = (log: { transactionHash: string; logIndex: number }): boolean => !claimed.has(`${log.transactionHash}:${log.logIndex}`)
  if (destination.kind === 'executor') {
    const executor = context.routerOn(chain).executor
    const args = { ref: expected.orderRefBytes32, recipient: expected.recipient }
    const [executed, fellBack] = await Promise.all([
      client.getLogs({ address: executor, event: destinationExecutedEvent, args, fromBlock, toBlock, strict: true }),
      client.getLogs({ address: executor, event: destinationFallbackEvent, args, fromBlock, toBlock, strict: true }),
    ])
    const lane = destination.lane
    const ignore = (log: { transactionHash: string; logIndex: number }, why: string): false => {
      context.log.warn(
        { event: 'delivery_ignored', ref: tracked.swap.ref, chain, tx: log.transactionHash, logIndex: log.logIndex },
        `delivery_ignored: ${why}`,
      )
      return false
    }
    // What our order promised: the destination token, at least toAmountMin; a fallback, the bridged token, at least
    // what the deposit asked of the bridge. Anything less is someone's relay of a message carrying our reference.
    const completes = (log: (typeof executed)[number]): boolean =>
      getAddress(log.args.tokenOut) !== getAddress(destination.token)
        ? ignore(log, `DestinationExecuted paid ${log.args.tokenOut}, not ${destination.token}`)
        : log.args.amountOut < destination.minAmount
          ? ignore(log, `DestinationExecuted paid ${log.args.amountOut}, below the minimum ${destination.minAmount}`)
          : true
    const fallsBack = (log: (typeof fellBack)[number]): boolean =>
      lane === undefined
        ? ignore(log, 'DestinationFallback on a route whose bridge lane the catalogue does not know')
        : getAddress(log.args.token) !== getAddress(lane.token)
          ? ignore(log, `DestinationFallback paid ${log.args.token}, not the bridged ${lane.token}`)
          : log.args.amount < lane.minAmount
            ? ignore(log, `DestinationFallback paid ${log.args.amount}, below the bridged minimum ${lane.minAmount}`)
            : true
    const candidates = [
      ...executed
        .filter(isFree)
        .filter(completes)
        .map((log) => ({
          log,
          substatus: 'completed' as const,
          received: { chain, token: getAddress(log.args.tokenOut), amount: log.args.amountOut },
          reason: null,
        })),
      ...fellBack
        .filter(isFree)
        .filter(fallsBack)
        .map((log) => ({
          log,
          substatus: 'partial' as const,
          received: { chain, token: getAddress(log.args.token), amount: log.args.amount },
          reason: `the destination swap did not run (${reasonText(log.args.reason as Hex)}): the recipient got the bridged token`,
        })),
    ].sort((a, b) =>
      a.log.blockNumber === b.log.blockNumber ? a.log.logIndex - b.log.logIndex : a.log.blockNumber < b.log.blockNumber ? -1 : 1,
    )
    const first = candidates[0]
    return first === undefined ? undefined : { ...first, leg: legOfLog(chain, first.log) }
  }
  const transfers = await client.getLogs({
    address: destination.token,
    event: transferEvent,
    args: { to: expected.recipient },
    fromBlock,
    toBlock,
    strict: true,
  })
  // The smallest Transfer of enough to the recipient that no other swap has claimed: of two swaps to one recipient,
  // each takes the payment nearest its own minimum, whichever the bridges delivered first.
  const enough = transfers
    .filter((log) => isFree(log) && log.args.value >= destination.minAmount)
    .sort((a, b) => (a.args.value === b.args.value ? 0 : a.args.value < b.args.value ? -1 : 1))
  let paid: (typeof transfers)[number] | undefined
  for (const log of enough) {
    if ((await context.store.lifecycle.destinationClaimedBy(chain, log.transactionHash, log.logIndex)) !== undefined) continue
    const refusal = await laneDeliveryRefusal(context, client, expected, tracked, log)
    if (refusal !== undefined) {
      context.log.warn(
        { event: 'delivery_ignored', ref: tracked.swap.ref, chain, tx: log.transactionHash, logIndex: log.logIndex },
        `delivery_ignored: a Transfer to the recipient that is not the bridge's delivery: ${refusal}`,
      )
      continue
    }
    paid = log
    break
  }
  if (paid === undefined) return undefined
  return {
    leg: legOfLog(chain, paid),
    substatus: 'completed',
    received: { chain, token: destination.token, amount: paid.args.value },
    reason: null,
  }
}
