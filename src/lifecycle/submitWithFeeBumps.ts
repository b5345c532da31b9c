import {
  BaseError,
  type Hash,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
} from 'viem'

/** EIP-1559 fees of one submission, wei per gas. */
export type SubmissionFees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }

/** What a submission's receipt says; viem's receipt fits. */
export type SubmissionReceipt = { status: 'success' | 'reverted'; gasUsed: bigint; transactionHash: Hash }

/** What the submitter reads on the chain; a viem public client fits. */
export type SubmissionPublicClient = {
  estimateFeesPerGas(): Promise<SubmissionFees>
  waitForTransactionReceipt(parameters: { hash: Hash; timeout: number }): Promise<SubmissionReceipt>
  getTransactionReceipt(parameters: { hash: Hash }): Promise<SubmissionReceipt>
}

export type SubmitWithFeeBumpsParameters = {
  publicClient: SubmissionPublicClient
  /** Sends the transaction at the submission's nonce with these fees (the first time and each bump). */
  send(fees: SubmissionFees): Promise<Hash>
  /**
   * Sends a transaction at the same nonce that does nothing (a transfer of 0 to the key itself), used when
   * `isDoneElsewhere` says the work no longer needs ours: without it, the stuck submission holds back every later one
   * from the key.
   */
  cancel(fees: SubmissionFees): Promise<Hash>
  /** Read before each bump: true when someone else did the work meanwhile (CCTP: the message's nonce is used). */
  isDoneElsewhere(): Promise<boolean>
  /**
   * Read before each replacement: false once this sender may no longer send from the key (its lease is lost), when
   * the submissions are left as they are and waited for.
   */
  canReplace?: () => Promise<boolean>
  /** How long the submission (all its replacements) is waited for in all. */
  timeoutMs: number
  /** How long one submission may stay unmined before it is replaced with higher fees. */
  bumpAfterMs: number
  clock: () => number
  /** Tests: the pause after a receipt read the RPC failed to answer. */
  sleep?: (ms: number) => Promise<void>
  /** Called after each replacement, for the log. */
  onReplaced?: (replacement: { hash: Hash; fees: SubmissionFees; cancel: boolean }) => void
  /**
   * Awaited after each send (the first, each replacement and cancel) with every send so far: the caller keeps them
   * where a restart finds them, so a process stopped mid-wait still knows what of its own is pending at the nonce. A
   * failure of its own is the caller's to report: the submission goes on.
   */
  onSent?: (sent: SentSubmission) => Promise<void>
  /**
   * An earlier submission of ours at this nonce, given up on while still unmined, that the first send replaces: what a
   * `not_mined` or `rpc_failed` outcome gave back, kept by the caller.
   */
  replacing?: ReplacedSubmission
  /**
   * Called when `replacing` is one the node dropped (no `fees`) and the chain now asks more than its ceiling: that
   * ceiling is given up, and the nonce's is measured afresh from the chain's fees (`ceiling`: the new one), for the log.
   */
  onCeilingGivenUp?: (given: { oldCeiling: bigint; ceiling: bigint; fees: SubmissionFees }) => void
}

/** An earlier submission of ours still pending at the nonce, as the next submission from the key takes it over. */
export type ReplacedSubmission = {
  /**
   * What the last of them offers: the first send pays at least an eighth more on both fees. Absent when the node holds
   * none of them now (the key's pending count is its mined count: dropped from the pool), so there is nothing to outbid.
   */
  fees?: SubmissionFees
  /**
   * The hashes of that earlier submission and its replacements: they are ours, so one of them mined instead is
   * `earlier_mined`, never `nonce_taken` (another sender with the key).
   */
  hashes: readonly Hash[]
  /** The nonce's fee ceiling (`feeCeiling` of the outcome given up on): kept, never raised by a replacement. */
  feeCeiling: bigint
}

/**
 * A submission of ours given up on while still unmined, as its sender keeps it: `works` names what its submissions at
 * the nonce carried (a CCTP message's nonce, a compose's guid and index), any of which may still be mined there.
 */
export type StuckSubmission = { nonce: number; fees: SubmissionFees; hashes: Hash[]; feeCeiling: bigint; works: string[] }

/** Where a sender's next submission goes: its nonce and, when it takes over a stuck one of ours, that one. */
export type NonceChoice = { nonce: number; held?: StuckSubmission; replacing?: ReplacedSubmission }

/**
 * One sender's stuck submissions, kept by nonce for as long as the nonce is unmined. Kept by nonce, not one per key:
 * with a lower nonce pending (another sender's stuck submission on the key), a relay sent behind it and left unmined
 * must not be forgotten when the next is left unmined too, or its work, still pending at its nonce, is sent again at
 * another nonce and both are mined (the second reverts, paying gas twice).
 */
export function createStuckSubmissions(initial: readonly StuckSubmission[] = []) {
  const stuck = new Map<number, StuckSubmission>(initial.map((entry) => [entry.nonce, entry]))
  return {
    /** The stuck submission of ours at `nonce`, if one is kept. */
    at(nonce: number): StuckSubmission | undefined {
      return stuck.get(nonce)
    },
    /** Every nonce a stuck submission of ours is kept at. */
    nonces(): number[] {
      return [...stuck.keys()]
    },
    /**
     * The nonce for the next submission of `work` (mined and pending: the key's counts). Work with a stuck submission
     * of ours goes only at that one's nonce (never at another, where both could be mined); other work takes over the
     * lowest stuck nonce the key's pending count has reached (instead of queueing behind it), or, with none, goes at
     * the pending count. It outbids the one it takes over while the node holds anything at that nonce (the pending
     * count past it); one the node dropped (the pending count back at its nonce) leaves nothing to outbid.
     */
    choose(work: string, mined: number, pending: number): NonceChoice {
      for (const nonce of [...stuck.keys()]) if (nonce < mined) stuck.delete(nonce)
      const byNonce = [...stuck.values()].sort((a, b) => a.nonce - b.nonce)
      const held =
        byNonce.find((entry) => entry.works.includes(work)) ?? byNonce.find((entry) => entry.nonce >= mined && entry.nonce <= pending)
      if (held === undefined) return { nonce: pending }
      return {
        nonce: held.nonce,
        held,
        replacing: { ...(held.nonce !== pending ? { fees: held.fees } : {}), hashes: held.hashes, feeCeiling: held.feeCeiling },
      }
    },
    /** After a submission: kept while still unmined (with what it took over), forgotten once its nonce is taken. */
    settle(choice: NonceChoice, work: string, submission: Submission): void {
      if (submission.kind === 'not_sent') return
      // A ceiling given up (the one it took over was dropped) is the outcome's: the nonce's from now on.
      if (submission.kind === 'not_mined' || submission.kind === 'rpc_failed') stuck.set(choice.nonce, stuckAt(choice, work, submission))
      else stuck.delete(choice.nonce)
    },
  }
}

/**
 * What is pending at the chosen nonce once `sent` went there: the sends this submission made (with their last fees and
 * the nonce's ceiling) and the stuck one of ours it took over, with what each carried.
 */
export function stuckAt(choice: NonceChoice, work: string, sent: SentSubmission): StuckSubmission {
  return {
    nonce: choice.nonce,
    fees: sent.fees,
    hashes: [...(choice.held?.hashes ?? []), ...sent.hashes],
    feeCeiling: sent.feeCeiling,
    works: [...new Set([...(choice.held?.works ?? []), work])],
  }
}

/** The sends of one submission so far: their hashes, the last fees offered and the nonce's fee ceiling. */
export type SentSubmission = { hashes: readonly Hash[]; fees: SubmissionFees; feeCeiling: bigint }

export type Submission =
  /** One of the submissions was mined (its receipt: success, or reverted). `cancelled`: the mined one was the cancel. */
  | { kind: 'mined'; receipt: SubmissionReceipt; cancelled: boolean; hashes: Hash[] }
  /**
   * None was mined within `timeoutMs`; the last may still be (`fees`: what it offers; `feeCeiling`: the nonce's ceiling,
   * for the submission that replaces it).
   */
  | { kind: 'not_mined'; hashes: Hash[]; fees: SubmissionFees; feeCeiling: bigint }
  /**
   * Nothing was sent: outbidding the earlier submission replaced (`replacing`), or the chain's fees now, would pass the
   * nonce's fee ceiling, so that submission is left pending as it is and waited out (the caller keeps it as it was).
   */
  | { kind: 'not_sent'; hashes: []; feeCeiling: bigint }
  /** The nonce was taken by a transaction that is none of these (another sender with the key): none of ours can run. */
  | { kind: 'nonce_taken'; receipt: SubmissionReceipt; hashes: Hash[] }
  /**
   * The earlier submission this one replaced (`replacingHashes`) was mined instead: the nonce went to our own earlier
   * work, not to this one.
   */
  | { kind: 'earlier_mined'; receipt: SubmissionReceipt; hashes: Hash[] }
  /**
   * The RPC failed the last receipt reads before `timeoutMs`: whether one was mined is unknown (the last may still be;
   * `fees`: what it offers). `reason`: the RPC's short error, without its URL.
   */
  | { kind: 'rpc_failed'; hashes: Hash[]; fees: SubmissionFees; feeCeiling: bigint; reason: string }

/**
 * Each replacement pays at least an eighth more than the last, on both fees: geth and most nodes refuse a replacement
 * of the same nonce that raises either by less than 10% ("replacement transaction underpriced").
 */
const BUMP_NUMERATOR = 9n
const BUMP_DENOMINATOR = 8n
/**
 * Replacements stop at this multiple of the fee cap of the first submission at a nonce: a fee spike is waited out, not
 * chased. The ceiling is the nonce's, whatever replaces what: a later submission taking over a stuck one keeps it.
 */
export const MAX_FEE_MULTIPLE = 5n

/** The fee ceiling of a nonce whose first submission offers `first`. */
export const feeCeilingOf = (first: SubmissionFees): bigint => first.maxFeePerGas * MAX_FEE_MULTIPLE

/** After a receipt read the RPC failed, the next waits this long, doubled after each failure in a row up to the most. */
const READ_RETRY_FIRST_MS = 500
const READ_RETRY_MOST_MS = 5_000

const bump = (value: bigint): bigint => (value * BUMP_NUMERATOR + BUMP_DENOMINATOR - 1n) / BUMP_DENOMINATOR
const maxOf = (a: bigint, b: bigint): bigint => (a > b ? a : b)

/**
 * The fees of the next replacement: an eighth more than the last on both fees (rounded up), or what the chain asks
 * now if that is more; undefined past MAX_FEE_MULTIPLE of the first.
 */
export function nextFees(first: SubmissionFees, last: SubmissionFees, now: SubmissionFees): SubmissionFees | undefined {
  return nextFeesUnder(feeCeilingOf(first), last, now)
}

/** nextFees under an absolute fee ceiling (the nonce's): undefined when the next fee cap would pass it. */
function nextFeesUnder(ceiling: bigint, last: SubmissionFees, now: SubmissionFees): SubmissionFees | undefined {
  const maxPriorityFeePerGas = maxOf(bump(last.maxPriorityFeePerGas), now.maxPriorityFeePerGas)
  const maxFeePerGas = maxOf(maxOf(bump(last.maxFeePerGas), now.maxFeePerGas), maxPriorityFeePerGas)
  if (maxFeePerGas > ceiling) return undefined
  return { maxFeePerGas, maxPriorityFeePerGas }
}

/**
 * Sends a transaction and sees it mined, replacing it at the same nonce with higher fees while it is not: a relay
 * sent when the base fee was low would otherwise sit in the mempool, and every later transaction from the key (the
 * next relay takes the next nonce) behind it. Each `bumpAfterMs` without a receipt: if someone else did the work, the
 * submission is cancelled (a 0 transfer to self at the same nonce, with higher fees); otherwise it is sent again with
 * `nextFees`. Whichever of the submissions is mined ends it; they share one nonce, so only one can be. A receipt read
 * the RPC fails is no round without a receipt: it is retried after a pause (READ_RETRY_FIRST_MS, doubled, at most
 * READ_RETRY_MOST_MS), nothing is replaced until the node answers, and reads still failing at the end are `rpc_failed`.
 */
export async function submitWithFeeBumps(parameters: SubmitWithFeeBumpsParameters): Promise<Submission> {
  const { publicClient, clock } = parameters
  const sleep = parameters.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const estimated = await publicClient.estimateFeesPerGas()
  const { replacing } = parameters
  // The nonce's ceiling comes from its first submission and stays: a replacement taking over a stuck submission pays
  // above it but under the same ceiling, so replacements of replacements never raise it. Except for one the node has
  // dropped (no fees: nothing of ours in the pool at the nonce) when the chain now asks more than that ceiling: the
  // ceiling is there so a fee spike is waited out, but nothing is left to wait for, and keeping it would refuse every
  // send at the key's next nonce (every relay and compose retry from the key) until fees fall, while a restart, which
  // forgets the stuck one, would send at once. So it is given up at once (no time to wait out) and measured afresh
  // from the chain's fees, as for a first submission; its hashes are kept, so if it is mined after all it is ours.
  const givenUp = replacing !== undefined && replacing.fees === undefined && estimated.maxFeePerGas > replacing.feeCeiling
  const ceiling = replacing === undefined || givenUp ? feeCeilingOf(estimated) : replacing.feeCeiling
  if (givenUp) parameters.onCeilingGivenUp?.({ oldCeiling: replacing.feeCeiling, ceiling, fees: estimated })
  // A submission the node still holds is outbid (an eighth more); none held, the chain's fees do, under the ceiling.
  const first =
    replacing?.fees !== undefined
      ? nextFeesUnder(ceiling, replacing.fees, estimated)
      : estimated.maxFeePerGas > ceiling
        ? undefined
        : estimated
  if (first === undefined) return { kind: 'not_sent', hashes: [], feeCeiling: ceiling }
  const earlier = replacing?.hashes ?? []
  const hashes: Hash[] = [await parameters.send(first)]
  const kept = async (fees: SubmissionFees): Promise<void> => {
    await parameters.onSent?.({ hashes: [...hashes], fees, feeCeiling: ceiling }).catch(() => undefined)
  }
  await kept(first)
  const cancels = new Set<Hash>()
  const deadline = clock() + parameters.timeoutMs
  let last = first
  // When the current round began (the first send, or the last decision to replace or not): the next waits a whole
  // bumpAfterMs after it.
  let roundFrom = clock()
  // The pause after a failed read: doubled while reads fail in a row, back to the first once the RPC answers.
  let retryMs = READ_RETRY_FIRST_MS
  for (;;) {
    const bumpAt = roundFrom + parameters.bumpAfterMs
    const waitMs = Math.max(1, Math.min(bumpAt, deadline) - clock())
    const latest = hashes[hashes.length - 1] as Hash
    // viem follows a replaced transaction to whatever took its nonce: only one of our own hashes counts as ours.
    const waited = await publicClient.waitForTransactionReceipt({ hash: latest, timeout: waitMs }).then(
      (receipt) => ({ receipt, error: undefined }),
      (error: unknown) => ({ receipt: undefined, error: isNotMinedAnswer(error) ? undefined : error }),
    )
    const mined = waited.receipt
    if (mined !== undefined && !isAmong(mined, hashes) && !isAmong(mined, earlier))
      return { kind: 'nonce_taken', receipt: mined, hashes: [...hashes] }
    // Each receipt is read again even after the wait timed out: viem's wait also times out when the RPC fails every
    // poll, and only an answer of the node ("no receipt") says a submission is unmined.
    const read = mined === undefined ? await minedAmong(publicClient, [...hashes, ...earlier]) : { receipt: mined, error: undefined }
    const { receipt } = read
    if (receipt !== undefined && isAmong(receipt, earlier)) return { kind: 'earlier_mined', receipt, hashes: [...hashes] }
    if (receipt !== undefined) return { kind: 'mined', receipt, cancelled: cancels.has(receipt.transactionHash), hashes: [...hashes] }
    // Only the receipt reads decide: viem's wait also fails when a read it makes besides (getTransaction, the block
    // number) does, while the node may plainly answer that no submission has a receipt, and that is a round unmined.
    if (read.error !== undefined) {
      if (clock() >= deadline)
        return { kind: 'rpc_failed', hashes: [...hashes], fees: last, feeCeiling: ceiling, reason: rpcErrorReason(read.error) }
      // Not a round without a receipt: nothing is replaced on a submission that could not be checked, and the next read
      // waits, so a failing RPC is not asked in a tight loop.
      await sleep(Math.max(1, Math.min(retryMs, deadline - clock())))
      retryMs = Math.min(retryMs * 2, READ_RETRY_MOST_MS)
      continue
    }
    if (clock() >= deadline) return { kind: 'not_mined', hashes: [...hashes], fees: last, feeCeiling: ceiling }
    // A timer may fire a little before the clock reaches its end: waiting that out is not a reason to pay more. An
    // answer past bumpAt after failed reads is enough: a submission unmined now was unmined all the round.
    if (clock() < bumpAt) {
      // A wait that failed at once ends the round's wait early: paused, as a failed read is, not asked again at once.
      if (waited.error !== undefined) {
        await sleep(Math.max(1, Math.min(retryMs, bumpAt - clock(), deadline - clock())))
        retryMs = Math.min(retryMs * 2, READ_RETRY_MOST_MS)
      } else retryMs = READ_RETRY_FIRST_MS
      continue
    }
    retryMs = READ_RETRY_FIRST_MS
    roundFrom = clock()
    if (parameters.canReplace !== undefined && !(await parameters.canReplace().catch(() => false))) continue
    const now = await publicClient.estimateFeesPerGas().catch(() => last)
    const capped = nextFeesUnder(ceiling, last, now)
    const cancel = cancels.size > 0 || (await parameters.isDoneElsewhere().catch(() => false))
    // Past the cap a relay is waited out, but a cancel (a plain transfer, a twentieth of a relay's gas) is still worth
    // an eighth more, enough to replace a relay sent at the ceiling: the stuck nonce holds back every later
    // transaction from the key. No further: a cancel the chain will not take at that is waited out too.
    const fees = capped ?? (cancel ? nextFeesUnder(bump(ceiling), last, now) : undefined)
    if (fees === undefined) continue
    try {
      const hash = cancel ? await parameters.cancel(fees) : await parameters.send(fees)
      hashes.push(hash)
      if (cancel) cancels.add(hash)
      last = fees
      parameters.onReplaced?.({ hash, fees, cancel })
      await kept(fees)
    } catch {
      // Refused (one of ours was mined meanwhile: "nonce too low"; the node wants more; or it has it already, from a
      // send that timed out on its way): the next round reads the receipts again and, if none, bumps above these.
      last = fees
    }
    roundFrom = clock()
  }
}

const isAmong = (receipt: SubmissionReceipt, hashes: readonly Hash[]): boolean =>
  hashes.some((hash) => hash.toLowerCase() === receipt.transactionHash.toLowerCase())

/** True when the error is the node's answer that there is no receipt yet (or viem's wait ran out), not a failed read. */
function isNotMinedAnswer(error: unknown): boolean {
  return (
    error instanceof WaitForTransactionReceiptTimeoutError ||
    error instanceof TransactionReceiptNotFoundError ||
    error instanceof TransactionNotFoundError
  )
}

/** What a failed read says, for the outcome: viem's short message (its full one carries the RPC URL, a provider's key). */
function rpcErrorReason(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage
  return error instanceof Error ? error.name : String(error)
}

/**
 * The receipt of whichever submission was mined, if one was; `error` when the RPC failed to answer for one of them
 * (then none of the others it answered for was mined either).
 */
async function minedAmong(
  publicClient: SubmissionPublicClient,
  hashes: readonly Hash[],
): Promise<{ receipt: SubmissionReceipt | undefined; error: unknown }> {
  let failed: unknown
  for (const hash of hashes) {
    try {
      return { receipt: await publicClient.getTransactionReceipt({ hash }), error: undefined }
    } catch (error) {
      if (!isNotMinedAnswer(error)) failed = error
    }
  }
  return { receipt: undefined, error: failed }
}
