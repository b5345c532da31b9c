import { ChainCode } from '../schemas/catalogue.ts'
import { DisbursementItem } from '../schemas/disburse.ts'
import type { LifecycleState, OrderStatus, SwapStatusWire } from '../schemas/swapStatus.ts'
import { TRACKED_REF_PATTERN } from '../schemas/swapStatus.ts'
import { ORDER_SIGNING_WINDOW_SEC } from '../tx/buildRouteTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { explorerTxUrl } from './explorerTxUrl.ts'
import { orderDeadlineOf } from './orderDeadlineOf.ts'
import { type BuiltOrder, orderStatus } from './orderStatus.ts'
import type { LifecycleRecord } from '../store/createStore.ts'
import { transferLifecycle } from './transferLifecycle.ts'
import { ServiceError } from './serviceError.ts'
import type { SwapTracking } from './swapTracking.ts'

export type GetSwapStatusDeps = Pick<ServiceDeps, 'store' | 'catalogue' | 'files' | 'clock'> & { tracking?: SwapTracking }

const REF_FORMAT = 'must be swp_ or dsb_ and 26 characters (0-9, A-Z), as the swap or batch answer gave it'

/** 400 for a reference no swap could have; a well-formed one that names nothing is 404, whoever asks. */
export function checkTrackedRef(ref: string): void {
  if (!TRACKED_REF_PATTERN.test(ref))
    throw new ServiceError('invalid_request', `ref ${REF_FORMAT}.`, { errors: [{ field: 'ref', message: REF_FORMAT }] })
}

/** The same 404 whether the reference never existed or is not ours to show: references are unguessable. */
export function unknownRef(ref: string): ServiceError {
  return new ServiceError(
    'not_found',
    `No swap or batch ${ref} is recorded here. Use the swapEaziRef (swp_…) or disbursementRef (dsb_…) the build answered, on the service that built it.`,
    { ref },
  )
}

/** Unix ms of the router's deadline for a built transaction: from its calldata, else the signing window after the build. */
function deadlineMsOf(transactionRequest: unknown, createdAt: string): number {
  return orderDeadlineOf(transactionRequest) ?? Date.parse(createdAt) + ORDER_SIGNING_WINDOW_SEC * 1000
}

/** How far along each state is, for a batch's state as a whole: its least advanced order. */
const PROGRESS: Readonly<Record<LifecycleState, number>> = { built: 0, pending: 1, done: 2, failed: 2, expired: 2 }

/**
 * The order a batch's state as a whole is that of: one that failed or expired (one transaction pays every order, so
 * a source that reverted or expired is every order's), else the least advanced, else one done other than completed,
 * else the first.
 */
function decidingOrder(orders: readonly [OrderStatus, ...OrderStatus[]]): OrderStatus {
  return (
    orders.find((o) => o.state === 'failed') ??
    orders.find((o) => o.state === 'expired') ??
    orders.find((o) => PROGRESS[o.state] < PROGRESS.done) ??
    orders.find((o) => o.substatus !== 'completed') ??
    orders[0]
  )
}

/** A batch's answer: the deciding order's state, and its next step naming the recipient when there are several. */
function batchStatus(ref: string, orders: readonly [OrderStatus, ...OrderStatus[]]): SwapStatusWire {
  const least = [...orders].sort((a, b) => PROGRESS[a.state] - PROGRESS[b.state])[0] ?? orders[0]
  const deciding = least.state === 'built' || least.state === 'pending' ? least : decidingOrder(orders)
  const isWhole = orders.length === 1 || deciding.state === 'built' || deciding.state === 'expired' || deciding.state === 'failed'
  const next = isWhole ? deciding.next : { ...deciding.next, message: `Recipient ${deciding.ref}: ${deciding.next.message}` }
  return { ref, kind: 'batch', state: deciding.state, substatus: deciding.substatus, reason: deciding.reason, orders: [...orders], next }
}

/**
 * GET /api/v1/swap/{ref}/status: what the chains show of a swap (swp_) or of every order of a batch (dsb_), for
 * whoever holds the reference, and what to do next. Nothing of the record beyond it (addresses, the transaction, the
 * payment): that stays keyed (GET /api/v1/swap/{ref}).
 */
export async function getSwapStatus(deps: GetSwapStatusDeps, parameters: { ref: string }): Promise<SwapStatusWire> {
  const { ref } = parameters
  checkTrackedRef(ref)
  const nowMs = deps.clock()
  // An order is tracked when a tracker follows its source chain and it has a swap row to move (a batch's plain
  // transfer is read off the batch's other legs, so it is tracked only when the batch has one).
  const read = (order: BuiltOrder, lifecycle: LifecycleRecord | undefined, isFollowable = true): OrderStatus =>
    orderStatus({
      catalogue: deps.catalogue,
      explorerTxUrl: (chain, txHash) => explorerTxUrl(deps.files, chain, txHash),
      order,
      lifecycle,
      isTracked: isFollowable && (deps.tracking?.follows(ChainCode.parse(order.fromChain)) ?? false),
      isDestinationTracked: deps.tracking?.follows(ChainCode.parse(order.toChain)) ?? false,
      nowMs,
    })

  if (ref.startsWith('swp_')) {
    const tracked = await deps.store.lifecycle.getTracked(ref)
    if (tracked === undefined) throw unknownRef(ref)
    const { swap, lifecycle } = tracked
    const order = read(
      {
        ref,
        kind: 'swap',
        fromChain: swap.fromChain,
        toChain: swap.toChain,
        toToken: swap.toToken,
        createdAt: swap.createdAt,
        deadlineMs: deadlineMsOf(swap.transactionRequest, swap.createdAt),
      },
      lifecycle,
    )
    return { ref, kind: 'swap', state: order.state, substatus: order.substatus, reason: order.reason, orders: [order], next: order.next }
  }

  const batch = await deps.store.disbursements.getDisbursement(ref)
  if (batch === undefined) throw unknownRef(ref)
  const items = DisbursementItem.array().parse(batch.items)
  const deadlineMs = deadlineMsOf(batch.transactionRequest, batch.createdAt)
  const legs = new Map((await deps.store.lifecycle.getBatchLegs(ref)).map((leg) => [leg.legIndex, leg]))
  const orders = items.map((item) => {
    const order: BuiltOrder = {
      ref: `${ref}.${item.index}`,
      kind: 'batch',
      fromChain: batch.fromChain,
      toChain: item.toChain,
      toToken: item.toToken,
      createdAt: batch.createdAt,
      deadlineMs,
    }
    const tracked = legs.get(item.index)
    if (tracked !== undefined) return read(order, tracked)
    return read(order, transferLifecycle(deps.catalogue, batch, item, [...legs.values()]), legs.size > 0)
  })
  const [first, ...rest] = orders
  if (first === undefined) throw new Error(`batch ${ref} records no recipients`)
  return batchStatus(ref, [first, ...rest])
}
