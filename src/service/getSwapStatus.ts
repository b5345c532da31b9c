import { hexToBigInt, isAddress, isHex } from 'viem'
import { z } from 'zod'
import { ChainCode } from '../schemas/catalogue.ts'
import { DisbursementItem } from '../schemas/disburse.ts'
import type { LifecycleState, OrderStatus, SwapStatusWire } from '../schemas/swapStatus.ts'
import { TRACKED_REF_PATTERN } from '../schemas/swapStatus.ts'
import { ORDER_SIGNING_WINDOW_SEC } from '../tx/buildRouteTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { explorerTxUrl } from './explorerTxUrl.ts'
import { hasInertChains, inertRouterSteps, type RouterUse, recordedExecutorUsesOf } from './inertRouter.ts'
import { orderDeadlineOf } from './orderDeadlineOf.ts'
import { isTrackedBy, type SourceTracking, TRACKER_SEEN_WITHIN_MS } from './nextStep.ts'
import { type BuiltOrder, orderStatus } from './orderStatus.ts'
import type { LifecycleRecord } from '../store/createStore.ts'
import { transferLifecycle } from './transferLifecycle.ts'
import { ServiceError } from './serviceError.ts'
import type { SwapTracking } from './swapTracking.ts'

export type GetSwapStatusDeps = Pick<ServiceDeps, 'store' | 'catalogue' | 'files' | 'clock' | 'routerOn'> & { tracking?: SwapTracking }

const REF_FORMAT = 'must be swp_ or dsb_ and 26 characters (0-9, A-Z), as the swap or batch answer gave it'

/** 400 for a reference no swap could have; a well-formed one that names nothing is 404, whoever asks. */
export function checkTrackedRef(ref: string): void {
  if (!TRACKED_REF_PATTERN.test(ref))
    throw new ServiceError('invalid_request', `ref ${REF_FORMAT}.`, { errors: [{ field: 'ref', message: REF_FORMAT }] })
}

/**
 * A reference as recorded: its prefix in lower case and its ULID in upper case, as the build answered it. ULIDs are
 * case-insensitive (Crockford base32), so `swp_01m88…` names the same swap; 400 for anything else.
 */
export function canonicalTrackedRef(ref: string): string {
  const match = /^(swp|dsb)_([0-9a-z]{26})$/i.exec(ref)
  const canonical = match === null ? ref : `${match[1]?.toLowerCase()}_${match[2]?.toUpperCase()}`
  checkTrackedRef(canonical)
  return canonical
}

/** The same 404 whether the reference never existed or is not ours to show: references are unguessable. */
export function unknownRef(ref: string): ServiceError {
  return new ServiceError(
    'not_found',
    `No swap or batch ${ref} is recorded here. Use the swapEaziRef (swp_…) or disbursementRef (dsb_…) the build answered, on the service that built it.`,
    { ref },
  )
}

/** The router and value of a recorded transaction request, as built (the wire TransactionRequest). */
const RecordedCall = z.object({ to: z.string(), value: z.string().optional() })
/** What a recorded swap's quote says of its route: a swap step after the bridge runs on our executor there. */
const RecordedRoute = z.object({ route: z.object({ steps: z.array(z.object({ type: z.string() })) }) })

/** The router a recorded transaction calls on its source chain, with the native value it sends; undefined if none. */
function recordedRouterUseOf(chain: ChainCode, transactionRequest: unknown): RouterUse | undefined {
  const call = RecordedCall.safeParse(transactionRequest)
  if (!call.success || !isAddress(call.data.to, { strict: false })) return undefined
  return {
    chain,
    address: call.data.to,
    role: 'router',
    ...(call.data.value === undefined || !isHex(call.data.value) ? {} : { valueWei: hexToBigInt(call.data.value) }),
  }
}

/**
 * For a record whose calldata is not a call of our router (none this service builds): the executor its quote's route
 * would deliver to (a swap on arrival), as this deployment configures it today.
 */
function configuredExecutorUsesOf(deps: GetSwapStatusDeps, toChain: ChainCode, quote: unknown): RouterUse[] {
  const route = RecordedRoute.safeParse(quote)
  const steps = route.success ? route.data.route.steps : []
  const bridgeAt = steps.findIndex((step) => step.type === 'bridge')
  if (bridgeAt < 0 || !steps.slice(bridgeAt + 1).some((step) => step.type === 'swap')) return []
  return [{ chain: toChain, address: deps.routerOn(toChain).executor, role: 'executor' }]
}

/**
 * Why a recorded swap's transaction must not be signed: it calls the inert default router, or (a swap on arrival) its
 * bridge delivers to the inert executor on the destination chain; undefined when neither. Both are read from the
 * recorded transaction itself (its `to`, and the executor its deposit names in its calldata), not from the routers
 * configured now: a swap built while a chain had no router still delivers to the inert executor after the operator
 * sets one there.
 */
function doNotSignOf(
  deps: GetSwapStatusDeps,
  order: { fromChain: ChainCode; toChain: ChainCode; transactionRequest: unknown; quote: unknown },
): string | undefined {
  const router = recordedRouterUseOf(order.fromChain, order.transactionRequest)
  if (router === undefined) return undefined
  const executors =
    recordedExecutorUsesOf(order.transactionRequest, () => order.toChain) ?? configuredExecutorUsesOf(deps, order.toChain, order.quote)
  return inertRouterSteps([router, ...executors])[0]
}

/**
 * Why a batch's transaction must not be signed (doNotSignOf, over its call and each order's bridge deposit: order k
 * of executeBatch pays recipient k); undefined if none.
 */
async function batchDoNotSignOf(
  deps: GetSwapStatusDeps,
  ref: string,
  batch: { fromChain: string; transactionRequest: unknown },
  items: readonly DisbursementItem[],
): Promise<string | undefined> {
  const router = recordedRouterUseOf(ChainCode.parse(batch.fromChain), batch.transactionRequest)
  if (router === undefined) return undefined
  const chainOf = (index: number): ChainCode | undefined => {
    const chain = ChainCode.safeParse(items[index]?.toChain)
    return chain.success ? chain.data : undefined
  }
  const recorded = recordedExecutorUsesOf(batch.transactionRequest, chainOf)
  if (recorded !== undefined) return inertRouterSteps([router, ...recorded])[0]
  const own = inertRouterSteps([router])[0]
  // Where every chain has a router of the operator's own, no leg can need the inert executor: no reads.
  if (own !== undefined || !hasInertChains(deps.catalogue, deps.routerOn)) return own
  for (const item of items) {
    if (item.kind !== 'bridge') continue
    const leg = await deps.store.lifecycle.getTracked(`${ref}.${item.index}`)
    if (leg === undefined) continue
    const found = inertRouterSteps([router, ...configuredExecutorUsesOf(deps, ChainCode.parse(leg.swap.toChain), leg.swap.quote)])[0]
    if (found !== undefined) return found
  }
  return undefined
}

/** Unix ms of the router's deadline for a built transaction: from its calldata, else the signing window after the build. */
function deadlineMsOf(transactionRequest: unknown, createdAt: string): number {
  return orderDeadlineOf(transactionRequest) ?? Date.parse(createdAt) + ORDER_SIGNING_WINDOW_SEC * 1000
}

/**
 * Who follows a source chain: this service's own tracker (an RPC for it here), or, on a replica without that RPC,
 * another process's (`swapeazi track`) seen in the store scanning the chain: its cursor's last final block is recent;
 * else none seen. The store is read at most once per chain.
 */
function sourceTrackingOf(
  readToMs: (chain: ChainCode) => Promise<number | null>,
  follows: (chain: ChainCode) => boolean,
  nowMs: number,
): (chain: ChainCode) => Promise<SourceTracking> {
  return async (chain) => {
    if (follows(chain)) return 'here'
    const readTo = await readToMs(chain)
    return readTo !== null && nowMs - readTo <= TRACKER_SEEN_WITHIN_MS ? 'elsewhere' : 'unseen'
  }
}

/**
 * The time of the last final block a tracker has read on each chain (its cursor in the store), or null when none has:
 * read at most once per chain and request.
 */
function cursorTimes(deps: GetSwapStatusDeps): (chain: ChainCode) => Promise<number | null> {
  const read = new Map<ChainCode, Promise<number | null>>()
  return (chain) => {
    let answer = read.get(chain)
    if (answer === undefined) {
      answer = deps.store.lifecycle.getCursor(chain).then((cursor) => cursor?.blockTime.getTime() ?? null)
      read.set(chain, answer)
    }
    return answer
  }
}

/**
 * Whether a tracker that reads the destination chain (one with its RPC: this service's or another process's) has
 * looked there for this swap's delivery lately: it records the destination block it reads from at each look.
 */
function isDestinationReadElsewhere(lifecycle: LifecycleRecord | undefined, nowMs: number): boolean {
  if (lifecycle === undefined || lifecycle.destinationFromBlock === null) return false
  return nowMs - Date.parse(lifecycle.updatedAt) <= TRACKER_SEEN_WITHIN_MS
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
  const ref = canonicalTrackedRef(parameters.ref)
  const nowMs = deps.clock()
  const follows = (chain: ChainCode): boolean => deps.tracking?.follows(chain) ?? false
  const readToMs = cursorTimes(deps)
  const sourceTrackingOn = sourceTrackingOf(readToMs, follows, nowMs)
  // An order is followed when a tracker follows its source chain and it has a swap row to move. A batch's plain
  // transfer is read off the batch's other legs, so a batch of transfers only (no leg recorded: every swap or bridge
  // order of a batch is recorded with it) has nothing any tracker moves, whichever chains are read.
  const read = async (order: BuiltOrder, lifecycle: LifecycleRecord | undefined, isFollowable = true): Promise<OrderStatus> => {
    const toChain = ChainCode.parse(order.toChain)
    const fromChain = ChainCode.parse(order.fromChain)
    const sourceTracking = isFollowable ? await sourceTrackingOn(fromChain) : 'never'
    // Past the deadline and still built, whether the order ran depends on how far the tracker has read: a transaction
    // mined just before the deadline is final only some blocks later.
    const isUndecided = (lifecycle?.state ?? 'built') === 'built' && nowMs > order.deadlineMs && isTrackedBy(sourceTracking)
    return orderStatus({
      catalogue: deps.catalogue,
      explorerTxUrl: (chain, txHash) => explorerTxUrl(deps.files, chain, txHash),
      explorerUrl: (chain) => deps.files.chains.chains.find((entry) => entry.id === chain)?.explorer ?? null,
      order,
      lifecycle,
      sourceTracking,
      ...(isUndecided ? { sourceReadToMs: await readToMs(fromChain) } : {}),
      isDestinationTracked: follows(toChain) || isDestinationReadElsewhere(lifecycle, nowMs),
      nowMs,
    })
  }

  if (ref.startsWith('swp_')) {
    const tracked = await deps.store.lifecycle.getTracked(ref)
    if (tracked === undefined) throw unknownRef(ref)
    const { swap, lifecycle } = tracked
    const doNotSign = doNotSignOf(deps, {
      fromChain: ChainCode.parse(swap.fromChain),
      toChain: ChainCode.parse(swap.toChain),
      transactionRequest: swap.transactionRequest,
      quote: swap.quote,
    })
    const order = await read(
      {
        ref,
        kind: 'swap',
        fromChain: swap.fromChain,
        toChain: swap.toChain,
        toToken: swap.toToken,
        createdAt: swap.createdAt,
        deadlineMs: deadlineMsOf(swap.transactionRequest, swap.createdAt),
        ...(doNotSign === undefined ? {} : { doNotSign }),
      },
      lifecycle,
    )
    return { ref, kind: 'swap', state: order.state, substatus: order.substatus, reason: order.reason, orders: [order], next: order.next }
  }

  const batch = await deps.store.disbursements.getDisbursement(ref)
  if (batch === undefined) throw unknownRef(ref)
  const items = DisbursementItem.array().parse(batch.items)
  const deadlineMs = deadlineMsOf(batch.transactionRequest, batch.createdAt)
  // The batch's one transaction pays every recipient: it must not be signed if it calls the inert router, or if any
  // bridged leg delivers to the inert executor for a swap on arrival (read from the calldata of its order).
  const doNotSign = await batchDoNotSignOf(deps, ref, batch, items)
  const legs = new Map((await deps.store.lifecycle.getBatchLegs(ref)).map((leg) => [leg.legIndex, leg]))
  const orders = await Promise.all(
    items.map((item) => {
      const order: BuiltOrder = {
        ref: `${ref}.${item.index}`,
        kind: 'batch',
        fromChain: batch.fromChain,
        toChain: item.toChain,
        toToken: item.toToken,
        createdAt: batch.createdAt,
        deadlineMs,
        ...(doNotSign === undefined ? {} : { doNotSign }),
      }
      const tracked = legs.get(item.index)
      if (tracked !== undefined) return read(order, tracked)
      return read(order, transferLifecycle(deps.catalogue, batch, item, [...legs.values()]), legs.size > 0)
    }),
  )
  const [first, ...rest] = orders
  if (first === undefined) throw new Error(`batch ${ref} records no recipients`)
  return batchStatus(ref, [first, ...rest])
}
