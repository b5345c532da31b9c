import type { Logger } from 'pino'
import type { Hash } from 'viem'
import type { LeaseStore, LifecycleStore } from '../store/createLifecycleStore.ts'
import type { CctpRelayer, RelayOutcome, RelayReceipt, RelayRecord } from './cctpRelayer.ts'

export type RelaySchedulerParameters = {
  relayer: Pick<CctpRelayer, 'relayForSwap' | 'hasBurnsToRelay'>
  lifecycle: Pick<LifecycleStore, 'listOpen'>
  leases: LeaseStore
  holder: string
  /** The source chains' receipt readers: the chains of SWAPEAZI_RPC_URLS; a viem public client fits. */
  clients: Readonly<Partial<Record<string, { getTransactionReceipt(parameters: { hash: Hash }): Promise<RelayReceipt> }>>>
  log: Logger
  /** Swaps read per page of the sweep. Default 100. */
  pageSize?: number
}

export type RelayScheduler = {
  /** Starts relaying a swap in the background unless it is already being relayed here; never rejects. */
  schedule(record: RelayRecord, receipt: RelayReceipt): void
  /**
   * Under a lease (one replica sweeps at a time): every swap still pending, with a source leg and no delivery, whose
   * receipt holds a burn for our executor, is scheduled again. This is what relays a message after a restart (the
   * tracker's hook is called once), a relay that failed, or one whose replica died.
   */
  sweep(): Promise<{ isLeader: boolean; scheduled: number }>
  /** Resolves when every relay scheduled so far has ended, with the outcomes of those that ended since the last call. */
  idle(): Promise<RelayOutcome[]>
}

/** The lease that makes one replica the sweeper. */
export const RELAY_SWEEP_LEASE = 'cctp-relay-sweep'
const SWEEP_LEASE_TTL_MS = 120_000

/** Schedules relays from the tracker's hook and from a periodic sweep of the pending swaps, one at a time per swap. */
export function createRelayScheduler(parameters: RelaySchedulerParameters): RelayScheduler {
  const { relayer, lifecycle, leases, holder, clients, log } = parameters
  const pageSize = parameters.pageSize ?? 100
  const running = new Map<string, Promise<RelayOutcome>>()
  const ended: RelayOutcome[] = []
  /** Swaps whose receipt holds no burn for us (Across, Stargate, a bridge-only CCTP route): never read again. */
  const notOurs = new Set<string>()

  const scheduler: RelayScheduler = {
    schedule(record, receipt) {
      if (running.has(record.ref)) return
      const relaying = relayer.relayForSwap(record, receipt).then((outcome) => {
        running.delete(record.ref)
        ended.push(outcome)
        return outcome
      })
      running.set(record.ref, relaying)
    },

    async sweep() {
      if (!(await leases.tryAcquire(RELAY_SWEEP_LEASE, holder, SWEEP_LEASE_TTL_MS))) return { isLeader: false, scheduled: 0 }
      let scheduled = 0
      let afterRef: string | undefined
      for (;;) {
        const page = await lifecycle.listOpen({
          chains: Object.keys(clients),
          limit: pageSize,
          ...(afterRef === undefined ? {} : { afterRef }),
        })
        for (const { lifecycle: record } of page) {
          const source = record.legs.source
          if (record.state !== 'pending' || source === undefined || record.legs.destination !== undefined) continue
          if (notOurs.has(record.ref) || running.has(record.ref)) continue
          const client = clients[source.chain]
          if (client === undefined) continue
          let receipt: RelayReceipt
          try {
            receipt = await client.getTransactionReceipt({ hash: source.txHash as Hash })
          } catch (error) {
            log.warn(
              { event: 'cctp_sweep_receipt_failed', swap_ref: record.ref, chain: source.chain, err: error },
              'cctp_sweep_receipt_failed',
            )
            continue
          }
          if (!relayer.hasBurnsToRelay(record, receipt)) {
            notOurs.add(record.ref)
            continue
          }
          scheduler.schedule(record, receipt)
          scheduled += 1
        }
        if (page.length < pageSize) break
        afterRef = page[page.length - 1]?.swap.ref
      }
      return { isLeader: true, scheduled }
    },

    async idle() {
      while (running.size > 0) await Promise.all([...running.values()])
      return ended.splice(0)
    },
  }
  return scheduler
}
