import type { ChainAmount, LifecycleState, LifecycleSubstatus, NextStep } from '../schemas/swapStatus.ts'

/** How often a pending swap's status is worth reading again: the tracker's own pace, not the bridge's duration. */
export const PENDING_CHECK_AGAIN_SEC = 15
/** How often a built swap's status is worth reading again while its transaction may still be broadcast. */
export const BUILT_CHECK_AGAIN_SEC = 30
/**
 * When to read again a pending swap whose destination this service does not read and no tracker was seen reading
 * for it: a `swapeazi track` beside it that reads the chain records its first look well within this, and the status
 * then says the destination is read.
 */
export const UNSEEN_DESTINATION_CHECK_AGAIN_SEC = 60
/**
 * How recent a sign of another process's tracker must be to count: a chain cursor's last final block (the chain's
 * confirmation depth, about 2 minutes at most, plus its polls behind the head) or a swap's last look at its
 * destination (each poll, every 4 s by default).
 */
export const TRACKER_SEEN_WITHIN_MS = 10 * 60_000

/**
 * Who follows an order's source chain, so moves its status when its transaction is mined: `here` this service's own
 * tracker (an RPC for the chain here); `elsewhere` another process's tracker, seen in the store scanning the chain
 * lately; `unseen` neither, as far as this service can tell; `never` nothing follows this kind of order at all (a
 * batch of plain transfers only: no swap or bridge order for a tracker to move), whichever chains are read.
 */
export type SourceTracking = 'here' | 'elsewhere' | 'unseen' | 'never'

/** Whether a tracker is known to follow an order: the wire's `isTracked`. */
export function isTrackedBy(tracking: SourceTracking): boolean {
  return tracking === 'here' || tracking === 'elsewhere'
}

export type NextStepParameters = {
  kind: 'swap' | 'batch'
  state: LifecycleState
  substatus: LifecycleSubstatus | null
  reason: string | null
  /** Who follows the order's source chain, if anyone: whether, and why, its status moves when the transaction is mined. */
  sourceTracking: SourceTracking
  /**
   * Whether a tracker is known to read the destination chain, where a bridged delivery is seen (an RPC for it here,
   * or a tracker seen reading it for this swap): a pending swap no tracker reads the destination of stays pending
   * whatever arrives. Absent: read, as the source chain is for a same-chain swap.
   */
  isDestinationTracked?: boolean
  /** The chain the order's transaction runs on. */
  fromChain: string
  /** That chain's block explorer (its home page: no transaction is known before one is seen); null when none is set. */
  explorerUrl: string | null
  /** Unix ms after which the router refuses the transaction (OrderExpired). */
  deadlineMs: number
  /**
   * For a built order past its deadline that a tracker follows: the time of the last final block it has read on the
   * source chain (null: none yet). Until it passes the deadline, a transaction mined just before may still show.
   */
  sourceReadToMs?: number | null
  /** Why the transaction must never be signed (it depends on the inert default router): a built order says so. */
  doNotSign?: string
  /** What the recipient got (partial: the bridged token). */
  received: ChainAmount | null
  /** The token the recipient asked for, on its chain. */
  asked: { chain: string; token: string }
  nowMs: number
}

const amountText = (amount: ChainAmount): string => `${amount.amount} ${amount.token} on ${amount.chain}`

const SEEN_WITHIN_MIN = TRACKER_SEEN_WITHIN_MS / 60_000

/**
 * A built order's step, by who follows its source chain: before the deadline, sign (and what this status will show of
 * it once mined); after it, build again, and where to see whether it ran when this status cannot show it.
 */
function builtStep(parameters: NextStepParameters & { deadline: string; transaction: string; isTracked: boolean }): NextStep {
  const { sourceTracking, fromChain, explorerUrl, deadlineMs, nowMs, deadline, transaction, isTracked } = parameters
  if (parameters.doNotSign !== undefined)
    return { action: 'do_not_sign', message: parameters.doNotSign, checkAgainSec: null, deadline: null }
  const explorer = explorerUrl === null ? `on a ${fromChain} block explorer` : `on the block explorer (${explorerUrl})`
  const checkAgainSec = isTracked ? BUILT_CHECK_AGAIN_SEC : null
  const unseen = `This service does not read ${fromChain} and has seen no tracker scan it in the last ${SEEN_WITHIN_MIN} minutes`
  const never = 'No tracker follows this order (a batch of plain transfers only holds no swap or bridge order for one to move)'
  if (nowMs > deadlineMs) {
    const rebuild = 'if it was never mined, nothing moved and it can no longer run: get a new quote and build again.'
    const readTo = parameters.sourceReadToMs
    if (isTracked && readTo !== undefined && (readTo === null || readTo < deadlineMs)) {
      const reader = sourceTracking === 'here' ? 'The tracker' : `The tracker scanning ${fromChain}`
      const read =
        readTo === null
          ? `has read no final block of ${fromChain} yet`
          : `has read final blocks of ${fromChain} up to ${new Date(readTo).toISOString()}`
      // Behind, but reading: a transaction mined before the deadline is not final yet, so it may still show.
      if (readTo !== null && nowMs - readTo <= TRACKER_SEEN_WITHIN_MS)
        return {
          action: 'wait',
          message: `The deadline (${deadline}) has passed, but ${reader.toLowerCase()} ${read}, before it: a transaction mined just before the deadline may still show as pending. Do not build it again yet (the user could pay twice): read this status again; once the tracker has read past the deadline, this order shows pending or expired.`,
          checkAgainSec: BUILT_CHECK_AGAIN_SEC,
          deadline: null,
        }
      return {
        action: 'quote_again',
        message: `The deadline (${deadline}) has passed. ${reader} ${read}${readTo === null ? '' : `, ${Math.round((nowMs - readTo) / 60_000)} minutes ago`}, so this status cannot show yet whether the transaction ran: check it ${explorer} by the hash the wallet gave; ${rebuild}`,
        checkAgainSec,
        deadline: null,
      }
    }
    const message: Record<SourceTracking, string> = {
      here: `The deadline (${deadline}) has passed with no transaction seen; if it was never broadcast, nothing moved: get a new quote and build again. The tracker will mark it expired.`,
      elsewhere: `The deadline (${deadline}) has passed with no transaction seen by the tracker scanning ${fromChain}; if it was never broadcast, nothing moved: get a new quote and build again. That tracker will mark it expired.`,
      unseen: `The deadline (${deadline}) has passed. ${unseen}, so this status cannot show whether the transaction ran: check it ${explorer} by the hash the wallet gave; ${rebuild}`,
      never: `The deadline (${deadline}) has passed. ${never}, so this status stays built whether or not the transaction ran: check it ${explorer} by the hash the wallet gave; ${rebuild}`,
    }
    return { action: 'quote_again', message: message[sourceTracking], checkAgainSec, deadline: null }
  }
  const then: Record<SourceTracking, string> = {
    here: '',
    elsewhere: ` This service does not read ${fromChain}, but a tracker elsewhere (\`swapeazi track\` on the same store) was seen scanning it in the last ${SEEN_WITHIN_MIN} minutes: this status updates once the transaction is mined, while that tracker runs; if it has not a few minutes after, read the transaction ${explorer} by the hash the wallet gave.`,
    unseen: ` ${unseen}: this status updates once the transaction is mined only if a \`swapeazi track\` process with ${fromChain}'s RPC runs on the same store; otherwise it stays built, so once it is broadcast read the transaction ${explorer} by the hash the wallet gave.`,
    never: ` ${never}, so this status stays built whatever happens on chain: once it is broadcast, check the transaction ${explorer} by the hash the wallet gave.`,
  }
  return {
    action: 'sign_and_broadcast',
    message: `Sign and broadcast ${transaction} before ${deadline} (approve the token first if the approval says so); after that the router refuses it and nothing moves.${then[sourceTracking]}`,
    checkAgainSec,
    deadline,
  }
}

/**
 * What the holder of the reference does next, in words an agent can act on and a user can be told: sign before the
 * deadline, wait and read again, nothing (delivered), what to do with a partial delivery, or build again.
 */
export function nextStep(parameters: NextStepParameters): NextStep {
  const { kind, state, substatus, reason, sourceTracking, deadlineMs, received, asked, nowMs } = parameters
  const isTracked = isTrackedBy(sourceTracking)
  const deadline = new Date(deadlineMs).toISOString()
  const transaction = kind === 'batch' ? 'the batch transactionRequest (executeBatch)' : 'the transactionRequest'
  switch (state) {
    case 'built':
      return builtStep({ ...parameters, deadline, transaction, isTracked })
    case 'pending':
      if (parameters.isDestinationTracked === false)
        return {
          action: 'wait',
          message: `The source transaction is mined and the money is on its way to ${asked.chain}. This service does not read ${asked.chain} and has seen no tracker read it for this swap yet: if a \`swapeazi track\` process with its RPC runs beside it, this status will update when the money arrives (read it again in ${UNSEEN_DESTINATION_CHECK_AGAIN_SEC} s); otherwise it stays pending, so look for ${asked.token} in the recipient's wallet on ${asked.chain} (the bridge's own explorer shows the transfer).`,
          checkAgainSec: UNSEEN_DESTINATION_CHECK_AGAIN_SEC,
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
