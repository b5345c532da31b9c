import { ALREADY_USED, reservationOf, type Settler } from './settlement.ts'

/**
 * The embedded default (DESIGN 7.10): a verified authorization is recorded in the store, not broadcast. The record is
 * the settlement, so reserving the authorization, settling it and recording the swap are one atomic statement; the
 * receipt's transaction is `ledger:<swapEaziRef>`.
 */
export function ledgerSettler(): Settler {
  return {
    mode: 'ledger',
    async collect({ payment, swap, store, now, delivery }) {
      const transaction = `ledger:${swap.ref}`
      const at = now()
      const reservation = reservationOf(payment, 'ledger', swap.ref, at, delivery)
      const isRecorded = await store.recordSettledSwap(reservation, { transaction, settledAt: at }, swap)
      return isRecorded ? { ok: true, transaction } : ALREADY_USED
    },
  }
}
