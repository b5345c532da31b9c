import { type Address, getAddress, type Hex } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { LegPosition, LifecycleRecord, LifecycleState, TrackedSwap } from '../store/createStore.ts'
import { blockAtOrBefore } from './blockAtOrBefore.ts'
import type { ExpectedOrder } from './expectedOrder.ts'
import { BRIDGE_DEPOSIT_TOPICS } from './lifecycleEvents.ts'
import { runHook, type SourceReceipt, type TrackerContext } from './trackerContext.ts'

/** A mined `Swapped` log, decoded (eth_getLogs with strict decoding). */
export type SwappedLog = {
  address: Address
  blockNumber: bigint
  blockHash: Hex
  transactionHash: Hex
  logIndex: number
  topics: readonly Hex[]
  args: {
    ref: Hex
    sender: Address
    recipient: Address
    tokenIn: Address
    amountIn: bigint
    fee: bigint
    tokenOut: Address
    amountOut: bigint
  }
}

/**
 * The states a `Swapped` event moves a swap from: built, or failed by a reverted transaction (the order is not spent
 * by a revert: the same transaction sent again before the deadline runs it).
 */
export const REOPENABLE: readonly LifecycleState[] = ['built', 'failed']

/** Why a `Swapped` event with our reference is not this swap's (it is then ignored); undefined when it is. */
export function mismatchOf(log: SwappedLog, expected: ExpectedOrder, router: string): string | undefined {
  const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()
  if (!same(log.address, router) || !same(log.address, expected.router)) return `emitted by ${log.address}, not our router ${router}`
  if (!same(log.args.sender, expected.sender)) return `sender ${log.args.sender}, not ${expected.sender}`
  if (!same(log.args.tokenIn, expected.tokenIn)) return `tokenIn ${log.args.tokenIn}, not ${expected.tokenIn}`
  if (log.args.amountIn !== expected.amountIn) return `amountIn ${log.args.amountIn}, not ${expected.amountIn}`
  if (!same(log.args.recipient, expected.recipient)) return `recipient ${log.args.recipient}, not ${expected.recipient}`
  if (log.args.fee !== expected.fee) return `fee ${log.args.fee}, not ${expected.fee}`
  if (!same(log.args.tokenOut, expected.tokenOut)) return `tokenOut ${log.args.tokenOut}, not ${expected.tokenOut}`
  return undefined
}

export function legOfLog(
  chain: ChainCode,
  log: { transactionHash: string; blockNumber: bigint; blockHash: string; logIndex: number },
): LegPosition {
  return { chain, txHash: log.transactionHash, blockNumber: log.blockNumber, blockHash: log.blockHash, logIndex: log.logIndex }
}

/**
 * Records a final source leg from its checked `Swapped` log: a same-chain swap is then done (the event carries what
 * the recipient got), a cross-chain one pending, with its bridge deposit and the destination block its delivery is
 * looked for from. Only the replica whose update moved the swap calls the hooks.
 */
export async function recordSourceFinal(
  context: TrackerContext,
  tracked: TrackedSwap,
  expected: ExpectedOrder,
  log: SwappedLog,
  receipt: SourceReceipt,
  blockTimeSec: bigint,
): Promise<LifecycleRecord | undefined> {
  const { lifecycle } = context.store
  const chain = expected.chain
  const at = new Date(context.clock())
  const source = legOfLog(chain, log)
  const sent = { chain, token: getAddress(log.args.tokenIn), amount: log.args.amountIn }
  const ref = tracked.swap.ref
  if (expected.destination === undefined) {
    const pending = await lifecycle.update(ref, { state: 'pending', legs: { source }, sent, at }, REOPENABLE)
    if (!pending?.updated) return pending?.record
    await runHook(context, 'onSourceFinal', ref, () => context.onSourceFinal?.(pending.record, receipt))
    const received = { chain, token: getAddress(log.args.tokenOut), amount: log.args.amountOut }
    const done = await lifecycle.update(ref, { state: 'done', substatus: 'completed', legs: { destination: source }, received, at }, [
      'pending',
    ])
    if (done?.updated) await runHook(context, 'onFinished', ref, () => context.onFinished?.(done.record, tracked))
    return done?.record
  }
  const bridge = bridgeLegOf(chain, receipt, log)
  const destinationClient = context.clients[expected.destination.chain]
  const blockTime = context.catalogue().chains.get(expected.destination.chain)?.blockTimeSec ?? 2
  const destinationFromBlock = destinationClient === undefined ? null : await blockAtOrBefore(destinationClient, blockTimeSec, blockTime)
  const pending = await lifecycle.update(
    ref,
    { state: 'pending', legs: { source, ...(bridge ? { bridge } : {}) }, sent, destinationFromBlock, at },
    REOPENABLE,
  )
  if (pending?.updated) {
    context.log.info(
      { event: 'swap_pending', ref, chain, tx: source.txHash, block: source.blockNumber.toString() },
      'swap_pending: source final',
    )
    await runHook(context, 'onSourceFinal', ref, () => context.onSourceFinal?.(pending.record, receipt))
  }
  return pending?.record
}

/** The bridge deposit an order made: the deposit log after the previous `Swapped` of the transaction and before its own. */
function bridgeLegOf(chain: ChainCode, receipt: SourceReceipt, swapped: SwappedLog): LegPosition | undefined {
  const swappedTopic = swapped.topics[0]
  let deposit: (typeof receipt.logs)[number] | undefined
  for (const log of receipt.logs) {
    if (log.logIndex >= swapped.logIndex) break
    if (log.topics[0] === swappedTopic) deposit = undefined
    else if (log.topics[0] !== undefined && BRIDGE_DEPOSIT_TOPICS.has(log.topics[0])) deposit = log
  }
  return deposit === undefined ? undefined : legOfLog(chain, deposit as typeof deposit & { blockHash: string })
}
