import type { Hash } from 'viem'
import type { StoredSubmission, SubmissionStore } from '../store/createSubmissionStore.ts'
import {
  createStuckSubmissions,
  type NonceChoice,
  type SentSubmission,
  type StuckSubmission,
  type Submission,
  stuckAt,
} from './submitWithFeeBumps.ts'

/** Where a failed write of a kept submission is reported (a pino logger fits). */
type KeptSubmissionsLog = { warn(fields: Record<string, unknown>, message: string): void }

/**
 * One sender's stuck submissions (createStuckSubmissions: where its next submission goes) kept in the store, so a
 * restart knows them. Each choice reads what the store holds for the sender (the lease holder is its one writer: a
 * replica that held the key before wrote what this one reads), each send is written before its receipt is waited for
 * (a process stopped, or killed, mid-wait leaves it there), and each outcome updates it: kept while unmined, forgotten
 * once its nonce is mined. So a relay sent before a restart is taken over at its own nonce after it, never sent again
 * at another where both could be mined. Without a store they are kept in memory, for this process's life.
 */
export function keptSubmissions(store: SubmissionStore | undefined, sender: string, log: KeptSubmissionsLog) {
  let memory = createStuckSubmissions()
  const failed = (error: unknown, what: string): void =>
    log.warn({ event: 'relay_submission_store_failed', sender, err: error }, `${what} the relay submissions kept for ${sender} failed`)
  const write = async (nonce: number): Promise<void> => {
    if (store === undefined) return
    const entry = memory.at(nonce)
    try {
      if (entry === undefined) await store.remove(sender, [nonce])
      else await store.put(sender, storedOf(entry))
    } catch (error) {
      failed(error, 'writing')
    }
  }
  return {
    /** createStuckSubmissions' choice, over what the store holds for the sender now; nonces since mined are forgotten. */
    async choose(work: string, mined: number, pending: number): Promise<NonceChoice> {
      if (store !== undefined) {
        try {
          memory = createStuckSubmissions((await store.list(sender)).map(stuckOf))
        } catch (error) {
          // What this process last knew still holds; the next choice reads the store again.
          failed(error, 'reading')
        }
      }
      const before = memory.nonces()
      const choice = memory.choose(work, mined, pending)
      const pruned = before.filter((nonce) => memory.at(nonce) === undefined)
      if (store !== undefined && pruned.length > 0) await store.remove(sender, pruned).catch((error: unknown) => failed(error, 'pruning'))
      return choice
    },
    /** After each send at the chosen nonce: what is pending there now, written before the receipt is waited for. */
    async sent(choice: NonceChoice, work: string, sent: SentSubmission): Promise<void> {
      if (store === undefined) return
      await store.put(sender, storedOf(stuckAt(choice, work, sent))).catch((error: unknown) => failed(error, 'writing'))
    },
    /** The outcome: kept while unmined (or unknown), forgotten once mined or taken; nothing sent leaves it as it was. */
    async settle(choice: NonceChoice, work: string, submission: Submission): Promise<void> {
      memory.settle(choice, work, submission)
      if (submission.kind !== 'not_sent') await write(choice.nonce)
    },
  }
}

export type KeptSubmissions = ReturnType<typeof keptSubmissions>

const storedOf = (entry: StuckSubmission): StoredSubmission => ({
  nonce: entry.nonce,
  maxFeePerGas: entry.fees.maxFeePerGas,
  maxPriorityFeePerGas: entry.fees.maxPriorityFeePerGas,
  hashes: entry.hashes,
  feeCeiling: entry.feeCeiling,
  works: entry.works,
})

const stuckOf = (row: StoredSubmission): StuckSubmission => ({
  nonce: row.nonce,
  fees: { maxFeePerGas: row.maxFeePerGas, maxPriorityFeePerGas: row.maxPriorityFeePerGas },
  hashes: row.hashes as Hash[],
  feeCeiling: row.feeCeiling,
  works: [...row.works],
})
