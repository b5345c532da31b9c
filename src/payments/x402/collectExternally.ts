import {
  ALREADY_USED,
  type CollectOutcome,
  type CollectParameters,
  type ExternalSettlement,
  reservationOf,
  type SettlementMode,
  type Settler,
} from './settlement.ts'

/**
 * Collects through an outside party: reserve (payer, nonce) in the store first, with the swap it pays for, so no
 * replica can spend the authorization twice; check and settle; then mark the payment settled. A refusal gives
 * the reservation back, except after a broadcast whose outcome is unknown: then it stays, marked unsettled with
 * what to reconcile, so the authorization can never pay twice.
 */
export async function collectExternally(
  mode: SettlementMode,
  settlement: ExternalSettlement,
  parameters: CollectParameters,
): Promise<CollectOutcome> {
  const { payment, swap, store, now, log, delivery } = parameters
  // The swap is recorded with the reservation: if this request stops before it ends (a crash while the receipt is
  // awaited), reconciliation finds the payment settled and its swap there to follow.
  if (!(await store.reservePayment(reservationOf(payment, mode, swap.ref, now(), delivery), swap))) return ALREADY_USED
  const release = (): Promise<void> => store.releasePayment(payment.payer, payment.nonce, swap.ref)
  let transaction: string
  try {
    const checked = await settlement.check(payment)
    if (!checked.ok) {
      await release()
      return checked
    }
    const settled = await settlement.settle(payment, swap.ref)
    if (!settled.ok) {
      if (settled.isAmbiguous !== true) {
        await release()
        return settled
      }
      // settlement_pending: the swap is recorded with the held payment, so the retry that finds it settled gets it.
      await store.markPaymentUnsettled(
        payment.payer,
        payment.nonce,
        { error: settled.message, ...(settled.transaction === undefined ? {} : { transaction: settled.transaction }) },
        swap,
      )
      return { ...settled, reason: 'settlement_pending' }
    }
    transaction = settled.transaction
  } catch (error) {
    await release().catch(() => {})
    throw error
  }
  // Money moved: if this write fails the swap is still delivered (it was paid for), and the log says what to reconcile.
  const settledAt = now()
  try {
    await store.recordPaidSwap({ payer: payment.payer, nonce: payment.nonce, transaction, settledAt }, swap)
  } catch (error) {
    log.error(
      { event: 'swap_record_failed', swap_ref: swap.ref, payer: payment.payer, nonce: payment.nonce, transaction, err: error },
      'paid swap delivered but not recorded: reconcile from the transaction',
    )
    // Keep what to reconcile in the store when it can still take it: a retry then finds the transaction and settles.
    await store
      .markPaymentUnsettled(payment.payer, payment.nonce, { transaction, error: 'the swap record failed after settlement' }, swap)
      .catch(() => {})
  }
  return { ok: true, transaction }
}

/** A settler over an outside party's two steps; it keeps them, so a caller (or a test) can run each on its own. */
export function externalSettler(mode: SettlementMode, settlement: ExternalSettlement): Settler & ExternalSettlement {
  return {
    mode,
    check: settlement.check,
    settle: settlement.settle,
    collect: (parameters) => collectExternally(mode, settlement, parameters),
    ...(settlement.reconcile === undefined ? {} : { reconcile: settlement.reconcile }),
  }
}
