import type { ChainCode, Currency } from '../schemas/catalogue.ts'
import type { ObservationStatus } from '../schemas/intelligence.ts'
import type { SwapStatus } from '../schemas/swap.ts'
import {
  type BridgeFigures,
  type CorridorQuery,
  corridorBridgeFigures,
  corridorFailureFigures,
  type FailureFigures,
} from './corridorFigures.ts'
import { isoTimestamp, type Sql } from './sql.ts'
import { type SwapCorridor, swapCorridorOfRow } from './swapRows.ts'

export type { BridgeFigures, CorridorQuery, FailureFigures, Percentiles } from './corridorFigures.ts'

/** One transfer someone observed (an import) or a tracker completed (one of our swaps), and how it ended. */
export type Observation = {
  /** Unique per transfer: a source tx hash or LI.FI transactionId on import, the swap ref for our own swaps. */
  id: string
  /** When the transfer started. */
  observedAt: Date
  fromChain: ChainCode
  toChain: ChainCode
  /** Canonical catalogue symbols. */
  fromToken: string
  toToken: string
  fromCurrency: Currency
  toCurrency: Currency
  /** As quotes name it (QuoteResult.bridge), or "none" for a same-chain swap. */
  bridge: string
  /** Whole fromToken units, a decimal string, stored exactly. */
  amount: string
  /** The amount in USD at the snapshot's prices, 6 places, rounded down: only for size bands. */
  amountUsd: string
  quotedDurationSec: number | null
  settledDurationSec: number | null
  realisedSlippageBps: number | null
  status: ObservationStatus
  substatus: string | null
  failureReason: string | null
  source: 'import' | 'tracker'
}

/** The columns of a built swap an observation is derived from. */
export type BuiltSwap = SwapCorridor & { quote: unknown }

export type CompleteSwapReturnType =
  | { ok: true; observation: Observation; swapStatus: SwapStatus }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'not_pending'; status: string }

/** A built swap no tracker has completed yet. */
export type PendingSwap = {
  ref: string
  channel: string
  fromChain: string
  toChain: string
  fromToken: string
  toToken: string
  fromAmount: string
  fromAddress: string
  bridge: string | null
  createdAt: string
}

/** What corridor intelligence needs from the database: observations, their aggregation, and call counters. */
export type IntelStore = {
  /**
   * Inserts every batch in one transaction: all or nothing, so a bad line (thrown by the iterable) imports nothing.
   * An id already stored is skipped, so re-importing a file is harmless.
   */
  importObservations(
    batches: Iterable<readonly Observation[]> | AsyncIterable<readonly Observation[]>,
  ): Promise<{ inserted: number; skipped: number }>
  /**
   * Per-bridge counts and percentiles over a corridor, computed in the database: from the window aggregate (migration
   * 8), moved to the query's window first when its hour has passed, and the raw rows at the window's edges.
   */
  corridorBridges(query: CorridorQuery): Promise<BridgeFigures[]>
  /** Undelivered observations over a corridor by (status, substatus, bridge). */
  corridorFailures(query: CorridorQuery): Promise<FailureFigures[]>
  /**
   * Counts one call of `subject` in `period` and returns the new count; with a `limit`, a subject already at it is
   * not counted and undefined comes back. One statement, so every replica on the store sees the same count.
   */
  countCall(subject: string, period: string, limit?: number): Promise<number | undefined>
  /** The counts of `period` whose subject starts with `subjectPrefix`, by subject. */
  usage(period: string, subjectPrefix: string): Promise<{ subject: string; calls: number }[]>
  /**
   * For a tracker: in one transaction, records the observation `derive` makes of a built swap and moves the swap's
   * status to its outcome (done, refunded, failed, not_found). A swap completes once.
   */
  completeSwap(ref: string, derive: (swap: BuiltSwap) => Observation): Promise<CompleteSwapReturnType>
  /** Built swaps no tracker has completed, oldest first, created at or before `createdBefore`. */
  pendingSwaps(parameters: { createdBefore: Date; limit: number }): Promise<PendingSwap[]>
}

const OBSERVATION_COLUMNS =
  'id, observed_at, from_chain, to_chain, from_token, to_token, from_currency, to_currency, bridge, amount, amount_usd, quoted_duration_sec, settled_duration_sec, realised_slippage_bps, status, substatus, failure_reason, source'
const COLUMN_COUNT = OBSERVATION_COLUMNS.split(',').length
/** Rows per multi-row insert: 18 parameters each stays far below the protocol's 65,535. */
const INSERT_CHUNK_ROWS = 500

function observationValues(o: Observation): unknown[] {
  return [
    o.id,
    o.observedAt.toISOString(),
    o.fromChain,
    o.toChain,
    o.fromToken,
    o.toToken,
    o.fromCurrency,
    o.toCurrency,
    o.bridge,
    o.amount,
    o.amountUsd,
    o.quotedDurationSec,
    o.settledDurationSec,
    o.realisedSlippageBps,
    o.status,
    o.substatus,
    o.failureReason,
    o.source,
  ]
}

async function insertObservations(q: Pick<Sql, 'query'>, rows: readonly Observation[]): Promise<number> {
  let inserted = 0
  for (let start = 0; start < rows.length; start += INSERT_CHUNK_ROWS) {
    const chunk = rows.slice(start, start + INSERT_CHUNK_ROWS)
    const tuples = chunk.map((_, r) => `(${Array.from({ length: COLUMN_COUNT }, (_, c) => `$${r * COLUMN_COUNT + c + 1}`).join(', ')})`)
    const result = await q.query(
      `insert into observations (${OBSERVATION_COLUMNS}) values ${tuples.join(', ')} on conflict (id) do nothing returning id`,
      chunk.flatMap(observationValues),
    )
    inserted += result.length
  }
  return inserted
}

/** The swap status an outcome moves a built swap to. */
function swapStatusFor(observation: Pick<Observation, 'status' | 'substatus'>): SwapStatus {
  if (observation.status === 'DONE') return observation.substatus === 'REFUNDED' ? 'refunded' : 'done'
  if (observation.status === 'FAILED') return 'failed'
  if (observation.status === 'NOT_FOUND') return 'not_found'
  throw new RangeError('a PENDING transfer has not completed; record it once it has')
}

const HOUR_MS = 60 * 60 * 1000

/**
 * Moves the window aggregate to the hour the query's window ends in (its start as far before as the query's), once
 * per hour: intel_window_move adds the rows that enter and subtracts those that leave, or does nothing when the
 * aggregate is already there or later, or when another transaction holds it (an import; another replica moving it).
 * Answers are right either way: the aggregate only decides how many raw rows an answer reads. `behind` forgets the
 * hour it was last seen at when an answer found it behind a query that hour (an operator reset it), so the next
 * answer moves it again.
 */
function windowMover(sql: Sql): { move(query: CorridorQuery): Promise<void>; behind(query: CorridorQuery): void } {
  let knownUntilMs = Number.NEGATIVE_INFINITY
  let moving: Promise<void> | undefined
  const hourOf = (query: CorridorQuery): number => Math.floor(query.until.getTime() / HOUR_MS) * HOUR_MS
  return {
    async move(query) {
      const untilMs = hourOf(query)
      const lengthMs = query.until.getTime() - query.since.getTime()
      if (untilMs <= knownUntilMs || lengthMs <= 0) return
      moving ??= (async () => {
        const [row] = await sql.query<{ until: unknown }>('select intel_window_move($1, $2) as until', [
          new Date(untilMs - lengthMs).toISOString(),
          new Date(untilMs).toISOString(),
        ])
        if (row?.until !== null && row?.until !== undefined) knownUntilMs = Date.parse(isoTimestamp(row.until))
      })().finally(() => {
        moving = undefined
      })
      await moving
    },
    behind(query) {
      if (hourOf(query) >= knownUntilMs) knownUntilMs = Number.NEGATIVE_INFINITY
    },
  }
}

/** The intelligence store over a migrated connection. */
export function createIntelStore(sql: Sql): IntelStore {
  const aggregate = windowMover(sql)
  return {
    async importObservations(batches) {
      const counts = await sql.transaction(async (tx) => {
        let inserted = 0
        let total = 0
        for await (const batch of batches) {
          total += batch.length
          inserted += await insertObservations(tx, batch)
        }
        return { inserted, skipped: total - inserted }
      })
      // Marks the new pages all-visible, so answers read the covering indexes alone (PGlite runs no autovacuum).
      if (counts.inserted > 0) await sql.query('vacuum (analyze) observations, intel_outcomes, intel_values')
      return counts
    },

    async corridorBridges(query) {
      await aggregate.move(query)
      const { figures, isWindowBehind } = await corridorBridgeFigures(sql, query)
      if (isWindowBehind) aggregate.behind(query)
      return figures
    },

    async corridorFailures(query) {
      await aggregate.move(query)
      const { figures, isWindowBehind } = await corridorFailureFigures(sql, query)
      if (isWindowBehind) aggregate.behind(query)
      return figures
    },

    async countCall(subject, period, limit) {
      const rows = await sql.query<{ calls: number }>(
        `insert into usage_counters (subject, period, calls) values ($1, $2, 1)
         on conflict (subject, period) do update set calls = usage_counters.calls + 1
         where $3::int is null or usage_counters.calls < $3::int
         returning calls`,
        [subject, period, limit ?? null],
      )
      const [row] = rows
      return row === undefined ? undefined : Number(row.calls)
    },

    async usage(period, subjectPrefix) {
      const rows = await sql.query<{ subject: string; calls: number }>(
        `select subject, calls from usage_counters where period = $1 and left(subject, length($2)) = $2 order by subject`,
        [period, subjectPrefix],
      )
      return rows.map((row) => ({ subject: String(row.subject), calls: Number(row.calls) }))
    },

    completeSwap(ref, derive) {
      return sql.transaction(async (tx): Promise<CompleteSwapReturnType> => {
        const [row] = await tx.query<Record<string, unknown>>(
          `select ref, status, from_chain, to_chain, from_token, to_token, from_amount, quote, created_at from swaps where ref = $1 for update`,
          [ref],
        )
        if (row === undefined) return { ok: false, reason: 'not_found' }
        if (row['status'] !== 'built') return { ok: false, reason: 'not_pending', status: String(row['status']) }
        const observation = derive({ ...swapCorridorOfRow(row), quote: row['quote'] })
        const swapStatus = swapStatusFor(observation)
        if ((await insertObservations(tx, [observation])) !== 1) throw new Error(`an observation ${observation.id} is already recorded`)
        await tx.query(`update swaps set status = $2 where ref = $1`, [ref, swapStatus])
        return { ok: true, observation, swapStatus }
      })
    },

    async pendingSwaps({ createdBefore, limit }) {
      // No index on swaps.status: it would cost every paid swap's insert, and a tracker polls seldom.
      const rows = await sql.query<Record<string, unknown>>(
        `select ref, channel, from_chain, to_chain, from_token, to_token, from_amount, from_address, quote->>'bridge' as bridge, created_at
         from swaps where status = 'built' and created_at <= $1 order by created_at, ref limit $2`,
        [createdBefore.toISOString(), limit],
      )
      return rows.map((row) => ({
        ...swapCorridorOfRow(row),
        channel: String(row['channel']),
        fromAddress: String(row['from_address']),
        bridge: row['bridge'] === null || row['bridge'] === undefined ? null : String(row['bridge']),
      }))
    },
  }
}
