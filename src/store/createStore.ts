import type { SwapStatus } from '../schemas/swap.ts'
import { createBudgetStore, type BudgetStore } from './createBudgetStore.ts'
import { createDisbursementStore, type DisbursementStore } from './createDisbursementStore.ts'
import { createMppPaymentStore, type MppPaymentStore } from './createMppPaymentStore.ts'
import { createIntelStore, type IntelStore } from './createIntelStore.ts'
import { createGroupCommit } from './groupCommit.ts'
import { createKeyStore, type KeyStore } from './createKeyStore.ts'
import { createLifecycleStore, type LifecycleStore } from './createLifecycleStore.ts'
import { createMemoryRateLimitStore, createRateLimitStore, type RateLimitStore } from './createRateLimitStore.ts'
import { isoTimestamp, type Sql } from './sql.ts'
import {
  type PaymentReservation,
  type PaymentRow,
  type PaymentStatus,
  type StoredSwap,
  type SwapChannel,
  type SwapRecord,
  swapCorridorOfRow,
} from './swapRows.ts'

export type { PaymentReservation, PaymentRow, PaymentStatus, StoredSwap, SwapChannel, SwapRecord } from './swapRows.ts'
export type {
  ChainCursor,
  LeaseStore,
  LegName,
  LegPosition,
  LifecycleAmount,
  LifecycleLegs,
  LifecycleRecord,
  LifecycleState,
  LifecycleStore,
  LifecycleSubstatus,
  LifecycleTransition,
  LifecycleUpdate,
  LifecycleUpdateReturnType,
  TrackedSwap,
} from './createLifecycleStore.ts'

/** One settlement attempt of a payment: the swap it was for and the transaction broadcast (null when none is known). */
export type UnsettledAttempt = { swapRef: string; transaction: string | null }

/** What the use cases need from the database; both drivers run the same statements. */
export type Store = {
  /**
   * Claims (payer, nonce) for one swap; false when any replica already holds it (single use, DESIGN 7.9). With
   * `swap`, the swap it pays for is recorded in the same statement: a request that stops mid-settlement (a crash, a
   * deploy) leaves its swap for reconciliation to deliver, not only its answer.
   */
  reservePayment(reservation: PaymentReservation, swap?: SwapRecord): Promise<boolean>
  /** Gives a reservation back (the swap was not delivered), with the swap recorded with it: it can pay again. */
  releasePayment(payer: string, nonce: string, swapRef: string): Promise<void>
  /**
   * Keeps a reservation whose settlement outcome is unknown, with what to reconcile (settlement_pending), and records
   * the swap it pays for with it, so that a retry finds the swap once the settlement confirms.
   */
  markPaymentUnsettled(payer: string, nonce: string, detail: { transaction?: string; error: string }, swap?: SwapRecord): Promise<void>
  /** An unsettled payment whose settlement was found confirmed: settled now (its swap is already recorded). */
  settleUnsettledPayment(
    payer: string,
    nonce: string,
    settlement: { transaction: string; settledAt: Date },
    /** The settlement attempt reconciled (its swap and broadcast): another attempt's row is left alone. */
    attempt: UnsettledAttempt,
  ): Promise<boolean>
  /**
   * An unsettled payment found never to have moved money (its settlement reverted and the authorization is unused):
   * the payment and the swap recorded with it go, so the same authorization can pay again. False if not unsettled.
   */
  releaseUnsettledPayment(payer: string, nonce: string, attempt: UnsettledAttempt): Promise<boolean>
  /**
   * Reserves, settles and records in one statement, for payments whose settlement is the record itself (the
   * ledger): false, with nothing written, when any replica already holds (payer, nonce).
   */
  recordSettledSwap(
    reservation: PaymentReservation,
    settlement: { transaction: string; settledAt: Date },
    swap: SwapRecord,
  ): Promise<boolean>
  /** Settles the reserved payment and records its swap in one transaction, committed before the answer leaves. */
  recordPaidSwap(settlement: { payer: string; nonce: string; transaction: string; settledAt: Date }, swap: SwapRecord): Promise<void>
  /**
   * Records a swap built under an API key (no payment), committed before the answer leaves; concurrent calls share
   * one statement (groupCommit.ts).
   */
  recordKeyedSwap(swap: SwapRecord & { keyId: string }): Promise<void>
  getPayment(payer: string, nonce: string): Promise<PaymentRow | undefined>
  /**
   * Payments of `settlementMode` whose settlement is in doubt, oldest first: unsettled ones, and reservations made
   * before `reservedBefore` (their request stopped). What the lifecycle reconciler works through.
   */
  listPaymentsToReconcile(parameters: { settlementMode: string; reservedBefore: Date; limit: number }): Promise<PaymentRow[]>
  getSwap(ref: string): Promise<StoredSwap | undefined>
  /** API key issuance and revocation (DESIGN 7.14). */
  keys: KeyStore
  /** Batch disbursements (POST /api/v1/batch/disburse). */
  disbursements: DisbursementStore
  /** MPP payments (tempo charges), each claimed with the swap it bought (DESIGN 7.25). */
  mpp: MppPaymentStore
  /** Corridor intelligence: observations, their aggregation, monthly call counters (DESIGN 7.17). */
  intel: IntelStore
  /** Per-minute request counters (DESIGN 7.16): in the store on PostgreSQL, in the owning process's memory on PGlite. */
  rateLimits: RateLimitStore
  /** The MCP payer's daily spend (DESIGN 8). */
  budget: BudgetStore
  /** Swap lifecycles (DESIGN 7.29): states and transitions, per-chain cursors, and the leases replicas share work by. */
  lifecycle: LifecycleStore
  sql: Sql
}

/** The store over an open, migrated connection. Addresses and nonces are kept lowercase. */
export function createStore(sql: Sql): Store {
  const keys = createKeyStore(sql)
  return {
    sql,
    keys,
    disbursements: createDisbursementStore(sql, insertSwap),
    mpp: createMppPaymentStore(sql, insertSwap),
    intel: createIntelStore(sql),
    rateLimits: sql.isExclusive ? createMemoryRateLimitStore((id) => keys.isRevoked(id)) : createRateLimitStore(sql),
    budget: createBudgetStore(sql),
    lifecycle: createLifecycleStore(sql),
    async reservePayment(r, swap) {
      if (swap === undefined) {
        const rows = await sql.query(
          `insert into x402_payments (${PAYMENT_COLUMNS}, status)
           values (${PAYMENT_PLACEHOLDERS}, 'reserved')
           on conflict (payer, nonce) do nothing
           returning payer`,
          reservationValues(r),
        )
        return rows.length === 1
      }
      const rows = await sql.query(
        `with payment as (
           insert into x402_payments (${PAYMENT_COLUMNS}, status)
           values (${PAYMENT_PLACEHOLDERS}, 'reserved')
           on conflict (payer, nonce) do nothing
           returning payer, nonce
         )
         insert into swaps (${SWAP_COLUMNS}, payer, payment_nonce)
         select ${placeholders(PAYMENT_COLUMN_COUNT + 1, SWAP_COLUMN_COUNT)}, payment.payer, payment.nonce from payment
         returning ref`,
        [...reservationValues(r), ...swapValues(swap)],
      )
      return rows.length === 1
    },
    async recordSettledSwap(r, settlement, swap) {
      // One statement: PGlite pays per round trip, and a single statement is atomic without a transaction.
      const rows = await sql.query(
        `with payment as (
           insert into x402_payments (${PAYMENT_COLUMNS}, status, transaction, settled_at)
           values (${PAYMENT_PLACEHOLDERS}, 'settled', ${placeholders(PAYMENT_COLUMN_COUNT + 1, 2)})
           on conflict (payer, nonce) do nothing
           returning payer, nonce
         )
         insert into swaps (${SWAP_COLUMNS}, payer, payment_nonce)
         select ${placeholders(PAYMENT_COLUMN_COUNT + 3, SWAP_COLUMN_COUNT)}, payment.payer, payment.nonce from payment
         returning ref`,
        [...reservationValues(r), settlement.transaction, settlement.settledAt.toISOString(), ...swapValues(swap)],
      )
      return rows.length === 1
    },
    async releasePayment(payer, nonce, swapRef) {
      await sql.query(
        `with released as (
           delete from x402_payments where payer = $1 and nonce = $2 and swap_ref = $3 and status = 'reserved'
           returning payer, nonce, swap_ref
         )
         delete from swaps using released
         where swaps.ref = released.swap_ref and swaps.payer = released.payer and swaps.payment_nonce = released.nonce`,
        [payer.toLowerCase(), nonce.toLowerCase(), swapRef],
      )
    },
    async markPaymentUnsettled(payer, nonce, detail, swap) {
      await sql.transaction(async (tx) => {
        const marked = await tx.query(
          `update x402_payments set status = 'unsettled', transaction = $3, error = $4
           where payer = $1 and nonce = $2 and status = 'reserved' returning swap_ref`,
          [payer.toLowerCase(), nonce.toLowerCase(), detail.transaction ?? null, detail.error],
        )
        if (marked.length === 1 && swap !== undefined) await insertSwapIfMissing(tx, { ...swap, payment: { payer, nonce } })
      })
    },
    async settleUnsettledPayment(payer, nonce, settlement, attempt) {
      const rows = await sql.query(
        `update x402_payments set status = 'settled', transaction = $3, settled_at = $4, error = null
         where payer = $1 and nonce = $2 and status = 'unsettled' and swap_ref = $5 and transaction is not distinct from $6
         returning payer`,
        [
          payer.toLowerCase(),
          nonce.toLowerCase(),
          settlement.transaction,
          settlement.settledAt.toISOString(),
          attempt.swapRef,
          attempt.transaction,
        ],
      )
      return rows.length === 1
    },
    async releaseUnsettledPayment(payer, nonce, attempt) {
      return sql.transaction(async (tx) => {
        const released = await tx.query<{ swap_ref: string }>(
          `delete from x402_payments
           where payer = $1 and nonce = $2 and status = 'unsettled' and swap_ref = $3 and transaction is not distinct from $4
           returning swap_ref`,
          [payer.toLowerCase(), nonce.toLowerCase(), attempt.swapRef, attempt.transaction],
        )
        const [row] = released
        if (row === undefined) return false
        await tx.query(`delete from swaps where ref = $1 and payer = $2 and payment_nonce = $3`, [
          row.swap_ref,
          payer.toLowerCase(),
          nonce.toLowerCase(),
        ])
        return true
      })
    },
    async recordPaidSwap(settlement, swap) {
      await sql.transaction(async (tx) => {
        const settled = await tx.query(
          `update x402_payments set status = 'settled', transaction = $3, settled_at = $4
           where payer = $1 and nonce = $2 and status = 'reserved' and swap_ref = $5 returning payer`,
          [
            settlement.payer.toLowerCase(),
            settlement.nonce.toLowerCase(),
            settlement.transaction,
            settlement.settledAt.toISOString(),
            swap.ref,
          ],
        )
        if (settled.length !== 1) throw new Error(`payment ${settlement.payer}/${settlement.nonce} is not reserved for ${swap.ref}`)
        await insertSwapIfMissing(tx, { ...swap, payment: { payer: settlement.payer, nonce: settlement.nonce } })
      })
    },
    recordKeyedSwap: createGroupCommit<SwapRecord>((swaps) => insertSwaps(sql, swaps)),
    async getPayment(payer, nonce) {
      const [row] = await sql.query<Record<string, unknown>>(
        `select ${PAYMENT_ROW_COLUMNS} from x402_payments where payer = $1 and nonce = $2`,
        [payer.toLowerCase(), nonce.toLowerCase()],
      )
      return row === undefined ? undefined : paymentRowOf(row)
    },
    async listPaymentsToReconcile({ settlementMode, reservedBefore, limit }) {
      const rows = await sql.query<Record<string, unknown>>(
        `select ${PAYMENT_ROW_COLUMNS} from x402_payments
         where status <> 'settled' and settlement_mode = $1 and (status = 'unsettled' or reserved_at < $2)
         order by reserved_at limit $3`,
        [settlementMode, reservedBefore.toISOString(), limit],
      )
      return rows.map(paymentRowOf)
    },
    async getSwap(ref) {
      const [row] = await sql.query<Record<string, unknown>>(`select * from swaps where ref = $1`, [ref])
      if (row === undefined) return undefined
      return {
        ...swapCorridorOfRow(row),
        channel: row['channel'] as SwapChannel,
        status: row['status'] as SwapStatus,
        toAmount: String(row['to_amount']),
        toAmountMin: String(row['to_amount_min']),
        fromAddress: String(row['from_address']),
        toAddress: String(row['to_address']),
        quote: row['quote'],
        transactionRequest: row['transaction_request'],
        payment: row['payer'] === null ? null : { payer: String(row['payer']), nonce: String(row['payment_nonce']) },
        keyId: row['key_id'] === null || row['key_id'] === undefined ? null : String(row['key_id']),
      }
    },
  }
}

const PAYMENT_ROW_COLUMNS = `payer, nonce, status, value::text as value, asset, pay_to, valid_after::text as valid_after,
  valid_before::text as valid_before, signature, settlement_mode, swap_ref, transaction, error, reserved_at, settled_at,
  request_key, result`

function paymentRowOf(row: Record<string, unknown>): PaymentRow {
  return {
    payer: String(row['payer']),
    nonce: String(row['nonce']),
    status: row['status'] as PaymentStatus,
    value: BigInt(String(row['value'])),
    asset: String(row['asset']),
    payTo: String(row['pay_to']),
    validAfter: BigInt(String(row['valid_after'])),
    validBefore: BigInt(String(row['valid_before'])),
    signature: String(row['signature']),
    settlementMode: String(row['settlement_mode']),
    swapRef: String(row['swap_ref']),
    transaction: row['transaction'] === null ? null : String(row['transaction']),
    error: row['error'] === null ? null : String(row['error']),
    reservedAt: isoTimestamp(row['reserved_at']),
    settledAt: row['settled_at'] === null ? null : isoTimestamp(row['settled_at']),
    requestKey: row['request_key'] === null || row['request_key'] === undefined ? null : String(row['request_key']),
    result: row['result'] ?? null,
  }
}

const PAYMENT_COLUMNS =
  'payer, nonce, value, asset, pay_to, valid_after, valid_before, signature, settlement_mode, swap_ref, reserved_at, request_key, result'
/** How many values reservationValues gives, in PAYMENT_COLUMNS order. */
const PAYMENT_COLUMN_COUNT = 13
const PAYMENT_PLACEHOLDERS = placeholders(1, PAYMENT_COLUMN_COUNT)

/** `$first, ..., $(first + count - 1)`. */
function placeholders(first: number, count: number): string {
  return Array.from({ length: count }, (_, i) => `$${first + i}`).join(', ')
}

function reservationValues(r: PaymentReservation): unknown[] {
  return [
    r.payer.toLowerCase(),
    r.nonce.toLowerCase(),
    r.value.toString(),
    r.asset.toLowerCase(),
    r.payTo.toLowerCase(),
    r.validAfter.toString(),
    r.validBefore.toString(),
    r.signature,
    r.settlementMode,
    r.swapRef,
    r.reservedAt.toISOString(),
    r.requestKey ?? null,
    r.result === undefined ? null : JSON.stringify(r.result),
  ]
}

/** The swap's own columns, in the order of swapValues; the payment's (payer, payment_nonce) come after them. */
const SWAP_COLUMNS =
  'ref, channel, status, from_chain, to_chain, from_token, to_token, from_amount, to_amount, to_amount_min, from_address, to_address, quote, transaction_request, created_at'
const SWAP_COLUMN_COUNT = 15

async function insertSwap(tx: Pick<Sql, 'query'>, swap: SwapRecord): Promise<void> {
  await insertSwaps(tx, [swap])
}

/**
 * Records a paid swap its reservation has not recorded already (one reserved before reservations kept their swap).
 * Another swap under the same ref is not this one: the insert fails, as it would without the check.
 */
async function insertSwapIfMissing(tx: Pick<Sql, 'query'>, swap: SwapRecord): Promise<void> {
  const [found] = await tx.query(`select 1 from swaps where ref = $1 and payer = $2 and payment_nonce = $3`, [
    swap.ref,
    swap.payment?.payer.toLowerCase() ?? null,
    swap.payment?.nonce.toLowerCase() ?? null,
  ])
  if (found === undefined) await insertSwap(tx, swap)
}

/** The columns insertSwaps writes per swap. */
const INSERTED_SWAP_COLUMNS = 18

/** The insert of `count` swaps, by count: the same few texts, built once (each is a prepared statement of its own). */
const insertSwapsText = new Map<number, string>()

function insertSwapsTextOf(count: number): string {
  let text = insertSwapsText.get(count)
  if (text === undefined) {
    const rows = Array.from(
      { length: count },
      (_, row) =>
        `(${Array.from({ length: INSERTED_SWAP_COLUMNS }, (_, column) => `$${row * INSERTED_SWAP_COLUMNS + column + 1}`).join(', ')})`,
    )
    text = `insert into swaps (${SWAP_COLUMNS}, payer, payment_nonce, key_id) values ${rows.join(', ')}`
    insertSwapsText.set(count, text)
  }
  return text
}

/** Inserts swaps in one statement (all or none). */
async function insertSwaps(tx: Pick<Sql, 'query'>, swaps: readonly SwapRecord[]): Promise<void> {
  await tx.query(
    insertSwapsTextOf(swaps.length),
    swaps.flatMap((swap) => [
      ...swapValues(swap),
      swap.payment?.payer.toLowerCase() ?? null,
      swap.payment?.nonce.toLowerCase() ?? null,
      swap.keyId ?? null,
    ]),
  )
}

function swapValues(swap: SwapRecord): unknown[] {
  return [
    swap.ref,
    swap.channel,
    swap.status,
    swap.fromChain,
    swap.toChain,
    swap.fromToken,
    swap.toToken,
    swap.fromAmount,
    swap.toAmount,
    swap.toAmountMin,
    swap.fromAddress.toLowerCase(),
    swap.toAddress.toLowerCase(),
    JSON.stringify(swap.quote),
    JSON.stringify(swap.transactionRequest),
    swap.createdAt.toISOString(),
  ]
}
