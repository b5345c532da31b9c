import type { Logger } from 'pino'
import type { Hash } from 'viem'
import type { LeaseStore, LifecycleStore, TrackedSwap } from '../store/createLifecycleStore.ts'
import type { CctpRelayer, RelayOutcome, RelayReceipt, RelayRecord } from './cctpRelayer.ts'

/** A lifecycle record as the tracker's onSourceFinal hook passes it (its source leg names the chain). */
export type SourceFinalRecord = { ref: string; legs: { source?: { chain: string } } }

export type RelaySchedulerParameters = {
  relayer: Pick<CctpRelayer, 'relayForSwap' | 'hasBurnsToRelay'>
  lifecycle: Pick<LifecycleStore, 'listOpen' | 'getTracked'>
  leases: LeaseStore
  holder: string
  /** The source chains' receipt readers: the chains of SWAPEAZI_RPC_URLS; a viem public client fits. */
  clients: Readonly<Partial<Record<string, { getTransactionReceipt(parameters: { hash: Hash }): Promise<RelayReceipt> }>>>
  log: Logger
  /** Swaps read per page of the sweep. Default 100. */
  pageSize?: number
}

export type RelayScheduler = {
  /**
   * Starts relaying a swap in the background unless it is already being relayed here; never rejects. Given the
   * lifecycle record (the tracker's hook), the swap's recorded build is read first: only its DestinationOrders are
   * relayed.
   */
  schedule(record: RelayRecord | SourceFinalRecord, receipt: RelayReceipt): void
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

  /** The relay record of a lifecycle record: its source chain and the swap's recorded build, read from the store. */
  async function relayRecordOf(record: RelayRecord | SourceFinalRecord): Promise<RelayRecord | undefined> {
    if ('transactionRequest' in record) return record
    const fromChain = record.legs.source?.chain
    if (fromChain === undefined) return undefined
    try {
      const tracked: TrackedSwap | undefined = await lifecycle.getTracked(record.ref)
      return tracked === undefined ? undefined : { ref: record.ref, fromChain, transactionRequest: tracked.swap.transactionRequest }
    } catch (error) {
      log.warn({ event: 'cctp_record_read_failed', swap_ref: record.ref, err: error }, 'cctp_record_read_failed')
      return undefined
    }
  }

  const scheduler: RelayScheduler = {
    schedule(record, receipt) {
      if (running.has(record.ref)) return
      const relaying = relayRecordOf(record).then(async (relayRecord) => {
        const outcome: RelayOutcome =
          relayRecord === undefined
            ? { ref: record.ref, messages: [{ kind: 'failed', nonce: null, reason: 'no recorded swap with a source leg' }] }
            : await relayer.relayForSwap(relayRecord, receipt)
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
        for (const tracked of page) {
          const record = tracked.lifecycle
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
          const relayRecord = { ref: record.ref, fromChain: source.chain, transactionRequest: tracked.swap.transactionRequest }
          if (!relayer.hasBurnsToRelay(relayRecord, receipt)) {
            notOurs.add(record.ref)
            continue
          }
          scheduler.schedule(relayRecord, receipt)
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
