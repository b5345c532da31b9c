import type { SwapStatus } from '../schemas/swap.ts'
import type { PairSide } from '../schemas/intelligence.ts'
import type { ChainCode, Currency } from '../schemas/catalogue.ts'
import type { ObservationStatus } from '../schemas/intelligence.ts'
import { isoTimestamp, type Sql } from './sql.ts'
import { type SwapCorridor, swapCorridorOfRow } from './swapRows.ts'

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

/** The observations one answer aggregates: a corridor, a time window and, for the amount, a USD size band. */
export type CorridorQuery = {
  from: PairSide
  to: PairSide
  since: Date
  until: Date
  band: { minUsd: string; maxUsd: string | null } | null
}

export type Percentiles = { p50: number; p95: number }

/** One bridge's figures in a corridor. "Settled" is DONE or FAILED; "delivered" is DONE other than REFUNDED. */
export type BridgeFigures = {
  bridge: string
  settled: number
  delivered: number
  refunded: number
  failed: number
  pending: number
  notFound: number
  settledSec: Percentiles | null
  quotedSecP50: number | null
  slippageBps: Percentiles | null
  /** The same over the size band of CorridorQuery.band; null when no band was asked. */
  band: { settled: number; delivered: number; settledSecP50: number | null; slippageBpsP50: number | null } | null
}

/** Undelivered observations of one (status, substatus) over one bridge. */
export type FailureFigures = {
  status: ObservationStatus
  substatus: string | null
  bridge: string
  count: number
  lastSeenAt: string
  exampleReason: string | null
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
  /** Per-bridge counts and percentiles over a corridor, computed in the database. */
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

/**
 * The corridor's rows. Column names come from the side's kind (a fixed pair of names), never from the request;
 * the codes are parameters. Each kind of source side has an index leading with it that covers every column the
 * aggregates read (migration 4), so a vacuumed table answers from the index alone.
 */
function corridorWhere(query: CorridorQuery): { text: string; params: unknown[] } {
  const column = (end: 'from' | 'to', side: PairSide): string => `${end}_${side.kind === 'chain' ? 'chain' : 'currency'}`
  return {
    text: `${column('from', query.from)} = $1 and ${column('to', query.to)} = $2 and observed_at >= $3 and observed_at <= $4`,
    params: [query.from.code, query.to.code, query.since.toISOString(), query.until.toISOString()],
  }
}

const DELIVERED = `(status = 'DONE' and substatus <> 'REFUNDED')`

const intOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))
const percentiles = (p50: unknown, p95: unknown): Percentiles | null =>
  p50 === null || p50 === undefined || p95 === null || p95 === undefined ? null : { p50: Number(p50), p95: Number(p95) }

/** The intelligence store over a migrated connection. */
export function createIntelStore(sql: Sql): IntelStore {
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
      // Marks the new pages all-visible, so aggregation reads the covering indexes alone (PGlite runs no autovacuum).
      if (counts.inserted > 0) await sql.query('vacuum (analyze) observations')
      return counts
    },

    async corridorBridges(query) {
      const where = corridorWhere(query)
      const hasBand = query.band !== null
      // percentile_disc returns an observed value, so seconds and bps stay integers. The array form sorts once for
      // both fractions; identical aggregate expressions are computed once however often they are referenced.
      const settledSec = `(percentile_disc(array[0.5, 0.95]) within group (order by settled_duration_sec) filter (where delivered))`
      const slippage = `(percentile_disc(array[0.5, 0.95]) within group (order by realised_slippage_bps) filter (where delivered))`
      const bandColumns = hasBand
        ? `count(*) filter (where in_band and status in ('DONE', 'FAILED'))::int as band_settled,
           count(*) filter (where in_band and delivered)::int as band_delivered,
           percentile_disc(0.5) within group (order by settled_duration_sec) filter (where in_band and delivered) as band_settled_p50,
           percentile_disc(0.5) within group (order by realised_slippage_bps) filter (where in_band and delivered) as band_slippage_p50`
        : `null::int as band_settled`
      const inBand = hasBand ? `, (amount_usd >= $5::numeric and ($6::numeric is null or amount_usd < $6::numeric)) as in_band` : ''
      const rows = await sql.query<Record<string, unknown>>(
        `select bridge,
                count(*) filter (where status in ('DONE', 'FAILED'))::int as settled,
                count(*) filter (where delivered)::int as delivered,
                count(*) filter (where status = 'DONE' and substatus = 'REFUNDED')::int as refunded,
                count(*) filter (where status = 'FAILED')::int as failed,
                count(*) filter (where status = 'PENDING')::int as pending,
                count(*) filter (where status = 'NOT_FOUND')::int as not_found,
                ${settledSec}[1] as settled_p50, ${settledSec}[2] as settled_p95,
                percentile_disc(0.5) within group (order by quoted_duration_sec) filter (where delivered) as quoted_p50,
                ${slippage}[1] as slippage_p50, ${slippage}[2] as slippage_p95,
                ${bandColumns}
         from (select bridge, status, substatus, settled_duration_sec, quoted_duration_sec, realised_slippage_bps,
                      ${DELIVERED} as delivered${inBand}
               from observations where ${where.text}) corridor
         group by bridge
         order by bridge`,
        hasBand ? [...where.params, query.band?.minUsd, query.band?.maxUsd] : where.params,
      )
      return rows.map((row) => ({
        bridge: String(row['bridge']),
        settled: Number(row['settled']),
        delivered: Number(row['delivered']),
        refunded: Number(row['refunded']),
        failed: Number(row['failed']),
        pending: Number(row['pending']),
        notFound: Number(row['not_found']),
        settledSec: percentiles(row['settled_p50'], row['settled_p95']),
        quotedSecP50: intOrNull(row['quoted_p50']),
        slippageBps: percentiles(row['slippage_p50'], row['slippage_p95']),
        band: hasBand
          ? {
              settled: Number(row['band_settled']),
              delivered: Number(row['band_delivered']),
              settledSecP50: intOrNull(row['band_settled_p50']),
              slippageBpsP50: intOrNull(row['band_slippage_p50']),
            }
          : null,
      }))
    },

    async corridorFailures(query) {
      const where = corridorWhere(query)
      const rows = await sql.query<Record<string, unknown>>(
        `select status, substatus, bridge, count(*)::int as count, max(observed_at) as last_seen_at,
                (array_agg(failure_reason order by observed_at desc) filter (where failure_reason is not null))[1] as example_reason
         from observations
         where ${where.text} and not ${DELIVERED}
         group by status, substatus, bridge
         order by count desc, status, substatus, bridge`,
        where.params,
      )
      return rows.map((row) => ({
        status: row['status'] as ObservationStatus,
        substatus: row['substatus'] === null ? null : String(row['substatus']),
        bridge: String(row['bridge']),
        count: Number(row['count']),
        lastSeenAt: isoTimestamp(row['last_seen_at']),
        exampleReason: row['example_reason'] === null || row['example_reason'] === undefined ? null : String(row['example_reason']),
      }))
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
