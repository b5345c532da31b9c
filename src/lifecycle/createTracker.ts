import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { ChainCode } from '../schemas/catalogue.ts'
import { canFollowDelivery, followDelivery } from './followDelivery.ts'
import { createHintGate } from './hintGate.ts'
import { type HintSourceTransactionReturnType, hintSourceTransaction } from './hintSourceTransaction.ts'
import { openSwaps } from './openSwaps.ts'
import { scanSourceChain } from './scanSourceChain.ts'
import type { TrackerContext } from './trackerContext.ts'

/**
 * Blocks before a block is treated as final, by chain, where configuration names none: about a minute of blocks on
 * the rollups (their sequencer's blocks are reorganised only by an L1 reorganisation), Ethereum's epoch-scale depth,
 * and deeper on the sidechains.
 */
export const DEFAULT_CONFIRMATIONS: Readonly<Record<ChainCode, number>> = {
  ETH: 12,
  BAS: 30,
  OPT: 30,
  ARB: 60,
  POL: 64,
  BNB: 15,
  GNO: 12,
  CEL: 30,
  SOL: 32,
  TRX: 20,
}

export type CreateTrackerParameters = Omit<TrackerContext, 'confirmations' | 'maxBlockRange'> & {
  /** Per-chain confirmation depths over DEFAULT_CONFIRMATIONS. */
  confirmations?: Partial<Record<ChainCode, number>>
  /** Default 2000 blocks per eth_getLogs. */
  maxBlockRange?: number
  /** Between two polls; default 4000 ms. */
  pollMs?: number
  /** How long a lease lasts unrenewed (a dead replica's work is taken over after it); default 30 s. */
  leaseTtlMs?: number
  /** This replica's name in the leases; default host, pid and a random suffix. */
  holder?: string
}

export type Tracker = {
  /** This replica's name in the leases. */
  holder: string
  /** The chains followed (those with an RPC). */
  chains: readonly ChainCode[]
  /** Polls every pollMs until stop(). */
  start(): void
  /**
   * Stops polling and waits for a poll under way; gives up its leases unless `release` is false (a test's way of
   * dying as a killed replica does, leaving them to expire).
   */
  stop(options?: { release?: boolean }): Promise<void>
  /** One poll: each chain's scan whose lease it gets, to the last final block, then each pending swap's delivery. */
  pollOnce(): Promise<void>
  /** Checks and records a source transaction hash an agent reported (POST /api/v1/swap/{ref}/transaction). */
  hintSourceTransaction(ref: string, txHash: string): Promise<HintSourceTransactionReturnType>
}

/** Most scan steps per chain in one poll, so one poll of a chain far behind still yields to the others. */
const MAX_STEPS_PER_POLL = 50

/**
 * The swap tracker (issue 18): follows every recorded swap whose source chain has an RPC, from its `Swapped` event to
 * its delivery, storing each transition. Replicas share the work through leases in the store: one scans a chain at a
 * time (`tracker:chain:<code>`), one follows a swap's delivery at a time (`tracker:swap:<ref>`), and a lease a
 * replica stops renewing passes to another. It resumes from each chain's stored cursor.
 */
export function createTracker(parameters: CreateTrackerParameters): Tracker {
  const { pollMs = 4000, leaseTtlMs = 30_000 } = parameters
  const holder = parameters.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  const confirmations = { ...DEFAULT_CONFIRMATIONS, ...parameters.confirmations }
  const context: TrackerContext = {
    ...parameters,
    confirmations: (chain) => confirmations[chain],
    maxBlockRange: BigInt(parameters.maxBlockRange ?? 2000),
  }
  const chains = Object.keys(parameters.clients) as ChainCode[]
  const { leases } = parameters.store.lifecycle
  const held = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let isStopped = false

  const acquire = async (name: string): Promise<boolean> => {
    const got = await leases.tryAcquire(name, holder, leaseTtlMs)
    if (got) held.add(name)
    else held.delete(name)
    return got
  }

  /** Releases a lease this replica holds (a failed release is left to expire). */
  const giveUp = async (name: string): Promise<void> => {
    if (!held.delete(name)) return
    await leases.release(name, holder).catch(() => {})
  }

  const pollOnce = async (): Promise<void> => {
    for (const chain of chains) {
      if (isStopped) return
      const name = `tracker:chain:${chain}`
      // A chain this replica cannot read is left to one that can, its lease too.
      if (context.isChainUsable?.(chain) === false) {
        await giveUp(name)
        continue
      }
      try {
        if (!(await acquire(name))) continue
        for (let step = 0; step < MAX_STEPS_PER_POLL && !isStopped; step++) {
          // A catch-up poll can outlast the lease: renewed before each step, and given up at once if another replica
          // took it, so two replicas never scan one chain together.
          if (step > 0 && !(await leases.renew(name, holder, leaseTtlMs))) {
            held.delete(name)
            context.log.warn({ event: 'tracker_lease_lost', chain, lease: name }, `tracker_lease_lost: ${name}`)
            break
          }
          if (!(await scanSourceChain(context, chain))) break
        }
      } catch (error) {
        context.log.warn({ event: 'tracker_scan_failed', chain, err: error }, `tracker_scan_failed: ${chain}; retried at the next poll`)
        // Another replica, whose RPC may answer, can take the scan at its next poll (its cursor is in the store).
        await giveUp(name)
      }
    }
    let pending: Awaited<ReturnType<typeof openSwaps>>
    try {
      pending = (await openSwaps(context, chains)).filter((entry) => entry.lifecycle.state === 'pending')
    } catch (error) {
      context.log.warn({ event: 'tracker_list_failed', err: error }, 'tracker_list_failed')
      return
    }
    for (const tracked of pending) {
      if (isStopped) return
      // A swap this replica cannot follow is left to one that can, lease and all.
      const name = `tracker:swap:${tracked.swap.ref}`
      if (!canFollowDelivery(context, tracked)) {
        await giveUp(name)
        continue
      }
      try {
        if (!(await acquire(name))) continue
        if (await followDelivery(context, tracked)) {
          await leases.release(name, holder)
          held.delete(name)
        }
      } catch (error) {
        context.log.warn(
          { event: 'tracker_follow_failed', ref: tracked.swap.ref, err: error },
          `tracker_follow_failed: ${tracked.swap.ref}; retried at the next poll`,
        )
        await giveUp(name)
      }
    }
  }

  const loop = (): void => {
    if (isStopped) return
    running = pollOnce().finally(() => {
      running = undefined
      if (!isStopped) timer = setTimeout(loop, pollMs)
    })
  }

  return {
    holder,
    chains,
    start() {
      if (timer !== undefined || running !== undefined) return
      isStopped = false
      context.log.info(
        {
          event: 'tracker_started',
          holder,
          chains,
          confirmations: Object.fromEntries(chains.map((chain) => [chain, confirmations[chain]])),
        },
        `tracker: following swaps from ${chains.join(', ')}`,
      )
      loop()
    },
    async stop({ release = true } = {}) {
      isStopped = true
      clearTimeout(timer)
      timer = undefined
      await running
      if (release) for (const name of held) await leases.release(name, holder).catch(() => {})
      held.clear()
    },
    pollOnce,
    hintSourceTransaction: createHintGate((ref, txHash) => hintSourceTransaction(context, ref, txHash)),
  }
}
