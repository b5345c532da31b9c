import { isoTimestamp, type Sql } from './sql.ts'
import type { SwapRecord } from './swapRows.ts'

/** A verified MPP push payment (tempo charge) and what it bought. Amounts are atomic pathUSD. */
export type MppClaim = {
  /** The Tempo transaction hash: one hash pays for one swap, on every replica. */
  hash: string
  chainId: number
  payer: string
  amount: bigint
  currency: string
  recipient: string
  challengeId: string
  /** When the challenge expired or expires: after it the credential could not have been verified. */
  challengeExpires: Date
  swapRef: string
  /** The normalised request the payment bought (paidRequestKey), so a retry with it gets the same swap. */
  requestKey: string
  /** The SwapResult answered. */
  result: unknown
  claimedAt: Date
}

export type MppPaymentRow = Omit<MppClaim, 'amount' | 'challengeExpires' | 'claimedAt'> & {
  amount: bigint
  challengeExpires: string
  claimedAt: string
}

/** What the MPP rail needs from the database. */
export type MppPaymentStore = {
  /**
   * Claims the payment's hash and records the swap it bought, in one transaction committed before the answer leaves:
   * false, with nothing written, when the hash is already claimed (here or on another replica). This is the only
   * claim of an MPP payment (payments/mpp/createTempoCharge.ts says why mppx's own is not used), so a payment whose swap
   * could not be recorded stays unclaimed.
   */
  recordPaidSwap(claim: MppClaim, swap: SwapRecord): Promise<boolean>
  getPayment(hash: string): Promise<MppPaymentRow | undefined>
}

/** The MPP payment store over a migrated connection. Hashes and addresses are kept lowercase. */
export function createMppPaymentStore(sql: Sql, insertSwap: (tx: Pick<Sql, 'query'>, swap: SwapRecord) => Promise<void>): MppPaymentStore {
  return {
    recordPaidSwap(claim, swap) {
      return sql.transaction(async (tx) => {
        const claimed = await tx.query(
          `insert into mpp_payments (${COLUMNS})
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
           on conflict (hash) do nothing
           returning hash`,
          [
            claim.hash.toLowerCase(),
            claim.chainId,
            claim.payer.toLowerCase(),
            claim.amount.toString(),
            claim.currency.toLowerCase(),
            claim.recipient.toLowerCase(),
            claim.challengeId,
            claim.challengeExpires.toISOString(),
            claim.swapRef,
            claim.requestKey,
            JSON.stringify(claim.result),
            claim.claimedAt.toISOString(),
          ],
        )
        if (claimed.length === 0) return false
        await insertSwap(tx, swap)
        return true
      })
    },
    async getPayment(hash) {
      const [row] = await sql.query<Record<string, unknown>>(
        `select ${COLUMNS.replace('amount', 'amount::text as amount')} from mpp_payments where hash = $1`,
        [hash.toLowerCase()],
      )
      if (row === undefined) return undefined
      return {
        hash: String(row['hash']),
        chainId: Number(row['chain_id']),
        payer: String(row['payer']),
        amount: BigInt(String(row['amount'])),
        currency: String(row['currency']),
        recipient: String(row['recipient']),
        challengeId: String(row['challenge_id']),
        challengeExpires: isoTimestamp(row['challenge_expires']),
        swapRef: String(row['swap_ref']),
        requestKey: String(row['request_key']),
        result: row['result'],
        claimedAt: isoTimestamp(row['claimed_at']),
      }
    },
  }
}

const COLUMNS =
  'hash, chain_id, payer, amount, currency, recipient, challenge_id, challenge_expires, swap_ref, request_key, result, claimed_at'
