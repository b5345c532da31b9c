import type { HintSourceTransactionReturnType } from './hintSourceTransaction.ts'

/** How long a hint the chain refused is answered from memory: about a block, so a mined transaction is seen soon. */
const NOT_FOUND_MEMO_MS = 5_000
/** How long a transaction shown not to be the swap's is answered from memory (a receipt does not change but by reorg). */
const NOT_THIS_MEMO_MS = 60_000
/** Hints remembered at most; past it the oldest are forgotten. */
const MAX_REMEMBERED = 10_000
/** Hints checked on the chain at once, per process; past it a hint is answered `busy` at once. */
const MAX_IN_FLIGHT = 16

export type HintGateOptions = { clock?: () => number; maxInFlight?: number; maxRemembered?: number }

/**
 * The RPC calls the public hint endpoint may cost, bounded: the same refused (ref, txHash) is answered from memory
 * for a while instead of asking the node again, identical hints in flight share one check, and at most
 * `maxInFlight` checks run at once. A hint is a public, unauthenticated request that costs RPC calls against our
 * provider's quota; the per-IP limits bound each source, this bounds them all together.
 */
export function createHintGate(
  check: (ref: string, txHash: string) => Promise<HintSourceTransactionReturnType>,
  options: HintGateOptions = {},
): (ref: string, txHash: string) => Promise<HintSourceTransactionReturnType> {
  const clock = options.clock ?? Date.now
  const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT
  const maxRemembered = options.maxRemembered ?? MAX_REMEMBERED
  const remembered = new Map<string, { answer: HintSourceTransactionReturnType; untilMs: number }>()
  const inFlight = new Map<string, Promise<HintSourceTransactionReturnType>>()
  return async (ref, txHash) => {
    const key = `${ref}|${txHash.toLowerCase()}`
    const known = remembered.get(key)
    if (known !== undefined && known.untilMs > clock()) return known.answer
    if (known !== undefined) remembered.delete(key)
    const running = inFlight.get(key)
    if (running !== undefined) return running
    if (inFlight.size >= maxInFlight)
      return { ok: false, reason: 'busy', detail: `too many hints are being checked at once; ${ref} was not checked` }
    const checking = check(ref, txHash).finally(() => inFlight.delete(key))
    inFlight.set(key, checking)
    const answer = await checking
    const memoMs = answer.ok
      ? 0
      : answer.reason === 'not_this_swap'
        ? NOT_THIS_MEMO_MS
        : answer.reason === 'transaction_not_found'
          ? NOT_FOUND_MEMO_MS
          : 0
    if (memoMs > 0) {
      if (remembered.size >= maxRemembered) remembered.delete(remembered.keys().next().value as string)
      remembered.set(key, { answer, untilMs: clock() + memoMs })
    }
    return answer
  }
}
