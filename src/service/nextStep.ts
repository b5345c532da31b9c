import type { ChainAmount, LifecycleState, LifecycleSubstatus, NextStep } from '../schemas/swapStatus.ts'

/** How often a pending swap's status is worth reading again: the tracker's own pace, not the bridge's duration. */
export const PENDING_CHECK_AGAIN_SEC = 15
/** How often a built swap's status is worth reading again while its transaction may still be broadcast. */
export const BUILT_CHECK_AGAIN_SEC = 30

export type NextStepParameters = {
  kind: 'swap' | 'batch'
  state: LifecycleState
  substatus: LifecycleSubstatus | null
  reason: string | null
  /** Whether a tracker follows the order: an untracked built swap never moves, whatever happens on chain. */
  isTracked: boolean
  /**
   * Whether the tracker reads the destination chain, where a bridged delivery is seen: a pending swap to a chain with
   * no RPC here stays pending whatever arrives. Default: as `isTracked` (a same-chain swap).
   */
  isDestinationTracked?: boolean
  /** Unix ms after which the router refuses the transaction (OrderExpired). */
  deadlineMs: number
  /** What the recipient got (partial: the bridged token). */
  received: ChainAmount | null
  /** The token the recipient asked for, on its chain. */
  asked: { chain: string; token: string }
  nowMs: number
}

const amountText = (amount: ChainAmount): string => `${amount.amount} ${amount.token} on ${amount.chain}`

/**
 * What the holder of the reference does next, in words an agent can act on and a user can be told: sign before the
 * deadline, wait and read again, nothing (delivered), what to do with a partial delivery, or build again.
 */
export function nextStep(parameters: NextStepParameters): NextStep {
  const { kind, state, substatus, reason, isTracked, deadlineMs, received, asked, nowMs } = parameters
  const deadline = new Date(deadlineMs).toISOString()
  const transaction = kind === 'batch' ? 'the batch transactionRequest (executeBatch)' : 'the transactionRequest'
  switch (state) {
    case 'built': {
      if (nowMs > deadlineMs)
        return {
          action: 'quote_again',
          message: `The deadline (${deadline}) has passed with no transaction seen; if it was never broadcast, nothing moved: get a new quote and build again.${isTracked ? ' The tracker will mark it expired.' : ''}`,
          checkAgainSec: isTracked ? BUILT_CHECK_AGAIN_SEC : null,
          deadline: null,
        }
      return {
        action: 'sign_and_broadcast',
        message: `Sign and broadcast ${transaction} before ${deadline} (approve the token first if the approval says so); after that the router refuses it and nothing moves.${isTracked ? '' : ' No tracker follows this chain here, so this status will not change when it is mined: read it on the block explorer.'}`,
        checkAgainSec: isTracked ? BUILT_CHECK_AGAIN_SEC : null,
        deadline,
      }
    }
    case 'pending':
      if (parameters.isDestinationTracked === false)
        return {
          action: 'wait',
          message: `The source transaction is mined and the money is on its way to ${asked.chain}, but no tracker reads ${asked.chain} here, so this status will not change when it arrives: look for ${asked.token} in the recipient's wallet on ${asked.chain} (the bridge's own explorer shows the transfer).`,
          checkAgainSec: null,
          deadline: null,
        }
      return {
        action: 'wait',
        message: `The source transaction is mined and the money is on its way to ${asked.chain}; nothing to do but wait. Check again in ${PENDING_CHECK_AGAIN_SEC} s.`,
        checkAgainSec: PENDING_CHECK_AGAIN_SEC,
        deadline: null,
      }
    case 'done':
      if (substatus === 'partial')
        return {
          action: 'use_delivered_token',
          message: `The destination swap could not run, so the recipient got ${received === null ? 'the bridged token' : amountText(received)} instead of ${asked.token}. The money is safe in the recipient's wallet: keep it, or swap it to ${asked.token} with a new quote.`,
          checkAgainSec: null,
          deadline: null,
        }
      if (substatus === 'refunded')
        return {
          action: 'check_sender',
          message: `The bridge refunded the transfer to the sender${received === null ? '' : ` (${amountText(received)})`}: nothing reached the recipient. Get a new quote to try again.`,
          checkAgainSec: null,
          deadline: null,
        }
      return {
        action: 'none',
        message: `Delivered${received === null ? '' : `: the recipient got ${amountText(received)}`}. Nothing more to do.`,
        checkAgainSec: null,
        deadline: null,
      }
    case 'failed': {
      // A reverted order is not spent: the same transaction sent again before its deadline still runs.
      const canResend = nowMs <= deadlineMs
      const again = canResend
        ? `fix the cause (the approval or the balance, say) and send the same ${transaction === 'the transactionRequest' ? 'transactionRequest' : 'batch transactionRequest'} again before ${deadline}, or get a new quote`
        : 'get a new quote to try again'
      return {
        action: 'check_sender',
        message: `It failed${reason === null ? '' : `: ${reason}`}. A reverted transaction moves nothing, so the money is still with the sender: ${again}.`,
        checkAgainSec: canResend && isTracked ? BUILT_CHECK_AGAIN_SEC : null,
        deadline: canResend ? deadline : null,
      }
    }
    case 'expired':
      return {
        action: 'quote_again',
        message: `The deadline (${deadline}) passed and the transaction was never mined, so nothing moved and it can no longer run: get a new quote and build again.`,
        checkAgainSec: null,
        deadline: null,
      }
  }
}
