import { type Hex, isHash, parseEventLogs, TransactionReceiptNotFoundError } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { LifecycleRecord, TrackedSwap } from '../store/createStore.ts'
import { expectedOrderOf } from './expectedOrder.ts'
import { refOfBytes32, swappedEvent } from './lifecycleEvents.ts'
import { mismatchOf, REOPENABLE, recordSourceFinal, type SwappedLog } from './recordSource.ts'
import { isRpcFailure, revertReason } from './revertReason.ts'
import { recordReverted } from './scanSourceChain.ts'
import type { TrackerContext } from './trackerContext.ts'

export type HintSourceTransactionReturnType =
  /** Checked: the records as they are now (`isFinal` false: mined but not yet at the confirmation depth; the scan records it then). */
  | { ok: true; isFinal: boolean; records: LifecycleRecord[] }
  | {
      ok: false
      /** `rpc_unavailable`: the chain's RPC failed or timed out while checking; `busy`: too many hints were being checked to check this one. Nothing was decided or recorded. */
      reason: 'invalid_hash' | 'unknown_ref' | 'chain_not_tracked' | 'transaction_not_found' | 'not_this_swap' | 'rpc_unavailable' | 'busy'
      detail: string
    }

/** Thrown by a read of the chain that failed (transport, timeout, the node's own error): the hint decides nothing. */
class RpcUnavailable extends Error {}

/** A chain read whose failure is the RPC's, not an answer: it becomes RpcUnavailable. */
function read<T>(call: Promise<T>): Promise<T> {
  return call.catch((error: unknown) => {
    throw new RpcUnavailable(error instanceof Error ? error.name : 'rpc error')
  })
}

/**
 * POST /api/v1/swap/{ref}/transaction: a hint of the source transaction. Its receipt must carry the router's `Swapped`
 * event for the reference (for a batch `dsb_…`, each leg's by its order), matching the record as the scan checks it,
 * or be a reverted router call from the swap's sender carrying the reference. A final one is recorded at once
 * (pending, done, failed or expired); one not yet final is left for the scan. Nothing is recorded from a hint the
 * chain does not bear out.
 */
export async function hintSourceTransaction(
  context: TrackerContext,
  ref: string,
  txHash: string,
): Promise<HintSourceTransactionReturnType> {
  try {
    return await checkHint(context, ref, txHash)
  } catch (error) {
    if (!(error instanceof RpcUnavailable)) throw error
    const tracked = await trackedOf(context, ref)
    const chain = tracked[0]?.swap.fromChain ?? 'the source chain'
    return { ok: false, reason: 'rpc_unavailable', detail: `${chain}'s RPC could not be read just now` }
  }
}

async function checkHint(context: TrackerContext, ref: string, txHash: string): Promise<HintSourceTransactionReturnType> {
  if (!isHash(txHash)) return { ok: false, reason: 'invalid_hash', detail: 'txHash must be 0x and 64 hex characters' }
  const tracked = await trackedOf(context, ref)
  const first = tracked[0]
  if (first === undefined) return { ok: false, reason: 'unknown_ref', detail: `no swap ${ref} is recorded` }
  const chain = first.swap.fromChain as ChainCode
  // A swap whose source is already recorded (pending, done, expired) is answered from the store: a hint on a public
  // reference must not buy RPC calls once the chain has spoken.
  if (tracked.every((entry) => !REOPENABLE.includes(entry.lifecycle.state))) {
    const recorded = tracked.flatMap((entry) => (entry.lifecycle.legs.source === undefined ? [] : [entry.lifecycle.legs.source.txHash]))
    if (recorded.some((hash) => hash.toLowerCase() === txHash.toLowerCase()))
      return { ok: true, isFinal: true, records: await recordsOf(context, tracked) }
    return {
      ok: false,
      reason: 'not_this_swap',
      detail:
        recorded.length === 0
          ? `${ref} is ${first.lifecycle.state}: it takes no source transaction now`
          : `${ref} already ran in ${[...new Set(recorded)].join(', ')} on ${chain}`,
    }
  }
  const client = context.clients[chain]
  if (client === undefined) return { ok: false, reason: 'chain_not_tracked', detail: `${chain} has no RPC configured to check it on` }
  // Only the node's own "no such receipt" means not mined; any other failure is the RPC's, and decides nothing.
  const receipt = await client.getTransactionReceipt({ hash: txHash as Hex }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return undefined
    throw new RpcUnavailable(error instanceof Error ? error.name : 'rpc error')
  })
  if (receipt === undefined) return { ok: false, reason: 'transaction_not_found', detail: `${txHash} is not mined on ${chain} (yet)` }
  const final = (await read(client.getBlockNumber({ cacheTime: 0 }))) - BigInt(context.confirmations(chain))
  const isFinal = receipt.blockNumber <= final
  const catalogue = context.catalogue()
  const router = context.routerOn(chain).router
  const notThis = { ok: false, reason: 'not_this_swap', detail: `${txHash} does not run ${ref} through our router on ${chain}` } as const

  if (receipt.status === 'reverted') {
    const tx = await read(client.getTransaction({ hash: txHash as Hex }))
    const ours = tracked.filter((entry) => {
      const expected = expectedOrderOf(entry.swap, catalogue)
      return (
        expected !== undefined &&
        tx.to?.toLowerCase() === router.toLowerCase() &&
        tx.from.toLowerCase() === expected.sender.toLowerCase() &&
        tx.input.toLowerCase().includes(expected.orderRefBytes32.slice(2).toLowerCase())
      )
    })
    if (ours.length === 0) return notThis
    if (isFinal) {
      const reason = (await revertReason(client, tx, receipt.blockNumber).catch((error: unknown) => {
        throw isRpcFailure(error) ? new RpcUnavailable('replay') : error
      })) ?? { text: 'reverted', isExpired: false }
      for (const entry of ours) await recordReverted(context, chain, entry, receipt, reason)
    }
    return { ok: true, isFinal, records: await recordsOf(context, ours) }
  }

  const logs = parseEventLogs({ abi: [swappedEvent], logs: receipt.logs, eventName: 'Swapped', strict: true }) as unknown as SwappedLog[]
  const matched: { entry: TrackedSwap; log: SwappedLog }[] = []
  const positions = new Map<string, number>()
  for (const log of logs) {
    const orderRef = refOfBytes32(log.args.ref)
    const position = positions.get(orderRef) ?? 0
    positions.set(orderRef, position + 1)
    const legRef = orderRef.startsWith('dsb_') ? `${orderRef}.${position}` : orderRef
    const entry = tracked.find((candidate) => candidate.swap.ref === legRef)
    const expected = entry === undefined ? undefined : expectedOrderOf(entry.swap, catalogue)
    if (entry === undefined || expected === undefined || mismatchOf(log, expected, router) !== undefined) continue
    matched.push({ entry, log })
  }
  if (matched.length === 0) return notThis
  if (isFinal) {
    const blockTime = (await read(client.getBlock({ blockNumber: receipt.blockNumber }))).timestamp
    for (const { entry, log } of matched) {
      const expected = expectedOrderOf(entry.swap, catalogue)
      if (expected !== undefined && REOPENABLE.includes(entry.lifecycle.state))
        await recordSourceFinal(context, entry, expected, log, receipt, blockTime)
    }
  }
  return {
    ok: true,
    isFinal,
    records: await recordsOf(
      context,
      matched.map(({ entry }) => entry),
    ),
  }
}

/** A swap, or every tracked leg of a batch. */
async function trackedOf(context: TrackerContext, ref: string): Promise<TrackedSwap[]> {
  const { lifecycle } = context.store
  if (/^dsb_[0-9A-Z]{26}$/.test(ref)) {
    const legs = await lifecycle.getBatchLegs(ref)
    const tracked = await Promise.all(legs.map((leg) => lifecycle.getTracked(leg.ref)))
    return tracked.filter((entry): entry is TrackedSwap => entry !== undefined)
  }
  const one = await lifecycle.getTracked(ref)
  return one === undefined ? [] : [one]
}

async function recordsOf(context: TrackerContext, tracked: readonly TrackedSwap[]): Promise<LifecycleRecord[]> {
  const records = await Promise.all(tracked.map((entry) => context.store.lifecycle.get(entry.swap.ref)))
  return records.filter((record): record is LifecycleRecord => record !== undefined)
}
