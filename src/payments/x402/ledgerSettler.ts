import type { Settler } from './settlement.ts'

/**
 * The embedded default (DESIGN 7.10): a verified authorization is recorded in the store, not broadcast. The store
 * write that records the swap is the settlement; the receipt's transaction is `ledger:<swapEaziRef>`.
 */
export function ledgerSettler(): Settler {
  return {
    mode: 'ledger',
    check: async () => ({ ok: true }),
    settle: async (_payment, swapEaziRef) => ({ ok: true, transaction: `ledger:${swapEaziRef}` }),
  }
}
