import type { SwapRecord } from './swapRows.ts'
import { isoTimestamp, type Sql } from './sql.ts'

/** A batch disbursement the service built: its source, every recipient's leg, the totals and the transaction. */
export type DisbursementRecord = {
  ref: string
  fromChain: string
  fromToken: string
  fromAddress: string
  /** The wire items (DisbursementItem[]): recipient, amounts and route of each leg. */
  items: unknown
  /** The wire totals (DisbursementTotals). */
  totals: unknown
  transactionRequest: unknown
  /** The API key the disbursement was built under. */
  keyId: string
  createdAt: Date
}

export type StoredDisbursement = Omit<DisbursementRecord, 'createdAt'> & { createdAt: string }

/** What batch disbursements need from the database. */
export type DisbursementStore = {
  /**
   * Records a built disbursement with the swap or bridge leg of each recipient that is not a plain transfer (in
   * `swaps`, so a tracker completes them as it completes any swap), in one transaction, before the answer leaves.
   */
  recordDisbursement(record: DisbursementRecord, legs: readonly SwapRecord[]): Promise<void>
  getDisbursement(ref: string): Promise<StoredDisbursement | undefined>
}

/** The disbursement store over a migrated connection. Addresses are kept lowercase. */
export function createDisbursementStore(
  sql: Sql,
  insertSwap: (tx: Pick<Sql, 'query'>, swap: SwapRecord) => Promise<void>,
): DisbursementStore {
  return {
    async recordDisbursement(record, legs) {
      await sql.transaction(async (tx) => {
        await tx.query(
          `insert into disbursements (ref, from_chain, from_token, from_address, items, totals, transaction_request, key_id, created_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [
            record.ref,
            record.fromChain,
            record.fromToken,
            record.fromAddress.toLowerCase(),
            JSON.stringify(record.items),
            JSON.stringify(record.totals),
            JSON.stringify(record.transactionRequest),
            record.keyId,
            record.createdAt.toISOString(),
          ],
        )
        for (const leg of legs) await insertSwap(tx, leg)
      })
    },
    async getDisbursement(ref) {
      const [row] = await sql.query<Record<string, unknown>>(`select * from disbursements where ref = $1`, [ref])
      if (row === undefined) return undefined
      return {
        ref: String(row['ref']),
        fromChain: String(row['from_chain']),
        fromToken: String(row['from_token']),
        fromAddress: String(row['from_address']),
        items: row['items'],
        totals: row['totals'],
        transactionRequest: row['transaction_request'],
        keyId: String(row['key_id']),
        createdAt: isoTimestamp(row['created_at']),
      }
    },
  }
}
