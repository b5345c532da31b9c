import type { Logger } from 'pino'
import { reconcilePayment, STALE_RESERVATION_MS, unsettleStaleReservation } from '../payments/x402/reconcilePayment.ts'
import type { Settler } from '../payments/x402/settlement.ts'
import type { LeaseStore } from '../store/createLifecycleStore.ts'
import type { Store } from '../store/createStore.ts'

export type ReconcilePaymentsParameters = {
  /** The `onchain` settler: its `reconcile` reads the chain, never broadcasts. */
  settler: Pick<Settler, 'mode' | 'reconcile'>
  store: Pick<
    Store,
    'listPaymentsToReconcile' | 'getPayment' | 'markPaymentUnsettled' | 'settleUnsettledPayment' | 'releaseUnsettledPayment'
  >
  leases: LeaseStore
  /** This replica's name in the lease table. */
  holder: string
  clock: () => number
  log: Logger
  /** How often a pass runs. Default 30 000. */
  intervalMs?: number
  /** The most payments one pass looks at. Default 100. */
  batchSize?: number
}

/** What one pass did; `isLeader` false: another replica holds the lease and nothing was looked at. */
export type ReconcilePassSummary = { isLeader: boolean; settled: number; released: number; pending: number; changed: number }

export type PaymentReconciler = {
  /** One pass now (the loop runs the same). */
  runOnce(): Promise<ReconcilePassSummary>
  /** Stops the loop after the pass in progress and gives the lease back. */
  stop(): Promise<void>
}

/** The lease that makes one replica the reconciler. */
export const RECONCILE_LEASE = 'x402-reconcile'

/**
 * The background reconciler of `onchain` x402 payments (issue 18 item 5): every interval, the replica holding the
 * lease lists the payments left unsettled (and the reservations whose request stopped, older than the stale limit)
 * and reconciles each from the chain with the same function a paid retry uses: a successful receipt settles it (the
 * swap recorded with it is then answered to a retry, as today); an authorization that expired with its nonce unused
 * on chain releases it; anything else stays for the next pass. Settling and releasing are compare-and-set on one
 * attempt, so a payment is never both.
 */
export function startPaymentReconciler(parameters: ReconcilePaymentsParameters): PaymentReconciler {
  const { settler, store, leases, holder, clock, log } = parameters
  const intervalMs = parameters.intervalMs ?? 30_000
  const batchSize = parameters.batchSize ?? 100
  const leaseTtlMs = intervalMs * 3
  const deps = { settler, store, clock, log }
  let running: Promise<ReconcilePassSummary> | undefined
  let stopped = false

  async function pass(): Promise<ReconcilePassSummary> {
    const summary: ReconcilePassSummary = { isLeader: false, settled: 0, released: 0, pending: 0, changed: 0 }
    if (!(await leases.tryAcquire(RECONCILE_LEASE, holder, leaseTtlMs))) return summary
    summary.isLeader = true
    const rows = await store.listPaymentsToReconcile({
      settlementMode: settler.mode,
      reservedBefore: new Date(clock() - STALE_RESERVATION_MS),
      limit: batchSize,
    })
    for (const row of rows) {
      if (stopped) break
      const now = await unsettleStaleReservation(deps, row)
      if (now === undefined || now.status !== 'unsettled') {
        summary.changed += 1
        continue
      }
      const outcome = await reconcilePayment(deps, now)
      summary[outcome.state] += 1
    }
    if (rows.length > 0) log.info({ event: 'payments_reconciled', ...summary }, 'payments_reconciled')
    return summary
  }

  const runOnce = (): Promise<ReconcilePassSummary> => {
    running ??= pass().finally(() => {
      running = undefined
    })
    return running
  }

  const timer = setInterval(() => {
    runOnce().catch((error: unknown) => log.warn({ event: 'payment_reconcile_failed', err: error }, 'payment_reconcile_failed'))
  }, intervalMs)
  timer.unref()

  return {
    runOnce,
    async stop() {
      stopped = true
      clearInterval(timer)
      await running?.catch(() => {})
      await leases.release(RECONCILE_LEASE, holder).catch(() => {})
    },
  }
}
