import type { Sql } from './sql.ts'

/**
 * A submission of ours at one nonce of a relayer key, still unmined when last seen: every transaction sent at the
 * nonce (`hashes`, any of which may be mined yet), what they carried (`works`: CCTP message nonces, compose guids),
 * the last fees offered and the nonce's fee ceiling.
 */
export type StoredSubmission = {
  nonce: number
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  hashes: readonly string[]
  feeCeiling: bigint
  works: readonly string[]
}

/**
 * Relay submissions kept across a restart (migration 15), per sender: one relayer key on one chain (its lease's
 * name, shared by the CCTP relayer and the compose retrier). Only the holder of that lease writes them, so no two
 * writers race for a sender's rows.
 */
export type SubmissionStore = {
  /** The sender's submissions still unmined when last written, by nonce. */
  list(sender: string): Promise<StoredSubmission[]>
  /** Writes (or overwrites) the sender's submission at its nonce. */
  put(sender: string, submission: StoredSubmission): Promise<void>
  /** Forgets the sender's submissions at these nonces (mined, or taken by another). */
  remove(sender: string, nonces: readonly number[]): Promise<void>
}

type SubmissionDocument = {
  maxFeePerGas: string
  maxPriorityFeePerGas: string
  hashes: string[]
  feeCeiling: string
  works: string[]
}

export function createSubmissionStore(sql: Sql): SubmissionStore {
  return {
    async list(sender) {
      const rows = await sql.query<{ nonce: number; submission: SubmissionDocument }>(
        `select nonce, submission from relay_submissions where sender = $1 order by nonce`,
        [sender],
      )
      return rows.map(({ nonce, submission }) => ({
        nonce,
        maxFeePerGas: BigInt(submission.maxFeePerGas),
        maxPriorityFeePerGas: BigInt(submission.maxPriorityFeePerGas),
        hashes: submission.hashes,
        feeCeiling: BigInt(submission.feeCeiling),
        works: submission.works,
      }))
    },
    async put(sender, submission) {
      const document: SubmissionDocument = {
        maxFeePerGas: submission.maxFeePerGas.toString(),
        maxPriorityFeePerGas: submission.maxPriorityFeePerGas.toString(),
        hashes: [...submission.hashes],
        feeCeiling: submission.feeCeiling.toString(),
        works: [...submission.works],
      }
      await sql.query(
        `insert into relay_submissions (sender, nonce, submission, updated_at) values ($1, $2, $3, now())
         on conflict (sender, nonce) do update set submission = excluded.submission, updated_at = excluded.updated_at`,
        [sender, submission.nonce, JSON.stringify(document)],
      )
    },
    async remove(sender, nonces) {
      // A sender has a handful at most: one statement each.
      for (const nonce of nonces) await sql.query(`delete from relay_submissions where sender = $1 and nonce = $2`, [sender, nonce])
    },
  }
}
