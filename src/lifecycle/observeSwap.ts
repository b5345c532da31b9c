import { type Catalogue, parseUnitsExact } from '../engine/index.ts'
import { completeTrackedSwap } from '../intel/completeTrackedSwap.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { SwapOutcome } from '../schemas/intelligence.ts'
import type { CompleteSwapReturnType } from '../store/createIntelStore.ts'
import type { LifecycleRecord, Store, StoredSwap } from '../store/createStore.ts'

/** The longest duration an observation holds (SwapOutcome's bound): a slower delivery is recorded at it. */
const MAX_DURATION_SEC = 7 * 24 * 3600
/** The longest failure reason an observation holds. */
const MAX_REASON_CHARS = 500

export type ObserveCompletedSwapDeps = {
  store: Pick<Store, 'intel' | 'getSwap'>
  catalogue: Catalogue
  /**
   * Unix seconds of a block, from the chain's RPC: the duration is then from the source block to the delivery block,
   * as the chains dated them. Without it (or when it fails), from the tracker's transitions to pending and done,
   * which each lag their block by about the confirmation depth.
   */
  blockTimeSec?: (chain: ChainCode, blockNumber: bigint) => Promise<number>
}

/** undefined: not an observation (still under way, or expired: never mined, so no transfer happened). */
export type ObserveCompletedSwapReturnType = CompleteSwapReturnType | undefined

const secondsBetween = (fromSec: number, toSec: number): number => Math.min(MAX_DURATION_SEC, Math.max(0, Math.round(toSec - fromSec)))

/** Seconds from the source block to the delivery: block times when they can be read, else the transitions'. */
async function settledDurationSec(deps: ObserveCompletedSwapDeps, record: LifecycleRecord): Promise<number> {
  const { source, destination } = record.legs
  if (deps.blockTimeSec !== undefined && source !== undefined) {
    const delivered = destination ?? source
    try {
      const [fromSec, toSec] = await Promise.all([
        deps.blockTimeSec(source.chain as ChainCode, source.blockNumber),
        deps.blockTimeSec(delivered.chain as ChainCode, delivered.blockNumber),
      ])
      return secondsBetween(fromSec, toSec)
    } catch {
      // The transitions below still date both ends, a confirmation depth late each.
    }
  }
  const minedAt = record.transitions.find((t) => t.state === 'pending')?.at
  const doneAt = [...record.transitions].reverse().find((t) => t.state === 'done')?.at ?? record.updatedAt
  if (minedAt === undefined) return 0
  return secondsBetween(Date.parse(minedAt) / 1000, Date.parse(doneAt) / 1000)
}

/**
 * (quoted − received) / quoted in basis points, positive worse than quoted: only when the recipient got the token
 * quoted (completed), from the swap's quoted toAmount and the received atomic amount; null otherwise.
 */
function realisedSlippageBps(catalogue: Catalogue, swap: StoredSwap, record: LifecycleRecord): number | null {
  if (record.substatus !== 'completed' || record.received === null) return null
  const token = catalogue.tokens.get(`${swap.toChain}:${swap.toToken}`)
  if (token === undefined || token.address.toLowerCase() !== record.received.token.toLowerCase()) return null
  const quoted = parseUnitsExact(swap.toAmount, token.decimals, { strict: false })
  if (!quoted.ok || quoted.value === 0n) return null
  const bps = ((quoted.value - record.received.amount) * 10_000n) / quoted.value
  return Number(bps > 10_000n ? 10_000n : bps < -10_000n ? -10_000n : bps)
}

/** The LI.FI-style failure substatus a failed swap's reason reads as. */
function failureSubstatus(reason: string): NonNullable<SwapOutcome['substatus']> {
  if (/slippage|min ?out|insufficient ?output|too little received/i.test(reason)) return 'SLIPPAGE_EXCEEDED'
  if (/allowance/i.test(reason)) return 'INSUFFICIENT_ALLOWANCE'
  if (/balance/i.test(reason)) return 'INSUFFICIENT_BALANCE'
  if (/out of gas/i.test(reason)) return 'OUT_OF_GAS'
  return 'UNKNOWN_FAILED_ERROR'
}

/** How a finished lifecycle reads as a corridor observation's outcome; undefined when it is not one. */
async function outcomeOf(deps: ObserveCompletedSwapDeps, swap: StoredSwap, record: LifecycleRecord): Promise<SwapOutcome | undefined> {
  if (record.state === 'failed') {
    const reason = (record.reason ?? 'failed').slice(0, MAX_REASON_CHARS)
    return { status: 'FAILED', substatus: failureSubstatus(reason), failureReason: reason }
  }
  if (record.state !== 'done') return undefined
  if (record.substatus === 'refunded')
    return { status: 'DONE', substatus: 'REFUNDED', failureReason: record.reason?.slice(0, MAX_REASON_CHARS) ?? null }
  return {
    status: 'DONE',
    substatus: record.substatus === 'partial' ? 'PARTIAL' : 'COMPLETED',
    settledDurationSec: await settledDurationSec(deps, record),
    realisedSlippageBps: realisedSlippageBps(deps.catalogue, swap, record),
    ...(record.substatus === 'partial' && record.reason !== null ? { failureReason: record.reason.slice(0, MAX_REASON_CHARS) } : {}),
  }
}

/**
 * What the tracker calls on each terminal transition (its `onFinished` hook): a swap that reached `done` or `failed`
 * becomes an observation of its corridor at once, with the real duration (source block to delivery), the amount
 * received against the quote, and the outcome, through completeTrackedSwap (one transaction; a swap completes once,
 * so a second call answers not_pending). `expired` is no observation: nothing was mined, so no transfer happened.
 */
export async function observeCompletedSwap(
  deps: ObserveCompletedSwapDeps,
  record: LifecycleRecord,
): Promise<ObserveCompletedSwapReturnType> {
  const swap = await deps.store.getSwap(record.ref)
  if (swap === undefined) return { ok: false, reason: 'not_found' }
  const outcome = await outcomeOf(deps, swap, record)
  if (outcome === undefined) return undefined
  return completeTrackedSwap(deps, record.ref, outcome)
}
