import type { Logger } from 'pino'
import type { PaymentRow, Store } from '../../store/createStore.ts'
import type { Settler } from './settlement.ts'

/**
 * A reservation older than this has lost the request that made it: settlement waits at most 60 s for a receipt and
 * its RPC calls are bounded, so a live request finishes well within it.
 */
export const STALE_RESERVATION_MS = 180_000

export type ReconcilePaymentDeps = {
  settler: Pick<Settler, 'reconcile'>
  store: Pick<Store, 'getPayment' | 'markPaymentUnsettled' | 'settleUnsettledPayment' | 'releaseUnsettledPayment'>
  clock: () => number
  log: Logger
}

export type ReconcilePaymentReturnType =
  /** Its settlement confirmed: the payment is settled now, with its swap (already recorded with it). */
  | { state: 'settled'; transaction: string }
  /** Money certainly did not move and cannot move any more: the payment and its swap are gone; it can pay afresh. */
  | { state: 'released'; message: string }
  /** Not known yet: nothing changed. */
  | { state: 'pending'; message: string }
  /** Another replica (or request) moved this attempt first: `now` is what the store holds now. */
  | { state: 'changed'; now: PaymentRow | undefined }

/**
 * Hands a reservation whose request stopped (older than STALE_RESERVATION_MS) to reconciliation: it becomes
 * unsettled. Returns the row as it now stands, or undefined when it is gone.
 */
export async function unsettleStaleReservation(deps: ReconcilePaymentDeps, recorded: PaymentRow): Promise<PaymentRow | undefined> {
  if (recorded.status !== 'reserved' || deps.clock() - Date.parse(recorded.reservedAt) <= STALE_RESERVATION_MS) return recorded
  await deps.store.markPaymentUnsettled(recorded.payer, recorded.nonce, {
    error: 'the request settling this payment stopped before it finished',
  })
  return deps.store.getPayment(recorded.payer, recorded.nonce)
}

/**
 * Reconciles one unsettled payment from the chain, without broadcasting anything: the settler looks up its
 * transaction and authorization; a confirmed settlement settles it, an authorization that can no longer move money
 * releases it, and each of those writes is a compare-and-set on this attempt (its swap and transaction), so a
 * payment is never both settled and released, whichever replica or request gets there first. A retry of the paid
 * request (payForSwap.ts) and the lifecycle reconciler both call it.
 */
export async function reconcilePayment(deps: ReconcilePaymentDeps, recorded: PaymentRow): Promise<ReconcilePaymentReturnType> {
  const ref = recorded.swapRef
  const outcome =
    deps.settler.reconcile === undefined
      ? { state: 'pending' as const, message: 'Its outcome is reconciled by the operator.' }
      : await deps.settler.reconcile(recorded, BigInt(Math.floor(deps.clock() / 1000)))
  const attempt = { swapRef: recorded.swapRef, transaction: recorded.transaction }
  const changed = async (): Promise<ReconcilePaymentReturnType> => ({
    state: 'changed',
    now: await deps.store.getPayment(recorded.payer, recorded.nonce),
  })
  if (outcome.state === 'pending') return outcome
  if (outcome.state === 'unused') {
    if (!(await deps.store.releaseUnsettledPayment(recorded.payer, recorded.nonce, attempt))) return changed()
    deps.log.info({ event: 'payment_released', swap_ref: ref, payer: recorded.payer, reason: outcome.message }, 'payment_released')
    return { state: 'released', message: outcome.message }
  }
  const settlement = { transaction: outcome.transaction, settledAt: new Date(deps.clock()) }
  if (!(await deps.store.settleUnsettledPayment(recorded.payer, recorded.nonce, settlement, attempt))) return changed()
  deps.log.info(
    { event: 'payment_reconciled', swap_ref: ref, payer: recorded.payer, transaction: outcome.transaction },
    'payment_reconciled',
  )
  return { state: 'settled', transaction: outcome.transaction }
}
