import type { ObservationStatus, PairSide } from '../schemas/intelligence.ts'
import { isoTimestamp, type Sql } from './sql.ts'

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

/**
 * The USD size bands the window aggregate counts by, in order: migration 8's intel_band(amount_usd), and the bands
 * src/intel/sizeBand.ts gives an amount (test/store/corridorFigures.test.ts holds the two together).
 */
export const WINDOW_BANDS: readonly { minUsd: string; maxUsd: string | null }[] = [
  { minUsd: '0', maxUsd: '100' },
  { minUsd: '100', maxUsd: '1000' },
  { minUsd: '1000', maxUsd: '10000' },
  { minUsd: '10000', maxUsd: '100000' },
  { minUsd: '100000', maxUsd: null },
]

/** The index of a size band in WINDOW_BANDS; undefined for any other band, which the window aggregate cannot answer. */
export function windowBandIndex(band: { minUsd: string; maxUsd: string | null }): number | undefined {
  const index = WINDOW_BANDS.findIndex((b) => b.minUsd === band.minUsd && b.maxUsd === band.maxUsd)
  return index < 0 ? undefined : index
}

/** Values are counted exactly and in blocks of 2^4 (migration 8: `value >> 4`), so a percentile reads few rows. */
const BLOCK_SHIFT = 4
const BLOCK_SIZE = 2 ** BLOCK_SHIFT

const DELIVERED = `(status = 'DONE' and substatus <> 'REFUNDED')`

/**
 * The corridor's rows. Column names come from the side's kind (a fixed pair of names), never from the request;
 * the codes are parameters $1 and $2.
 */
function corridor(query: CorridorQuery, alias: string): string {
  const column = (end: 'from' | 'to', side: PairSide): string => `${alias}.${end}_${side.kind === 'chain' ? 'chain' : 'currency'}`
  return `${column('from', query.from)} = $1 and ${column('to', query.to)} = $2`
}

/**
 * The window aggregate (`win`: one row when the aggregate's window [since, until) starts at or before the query's
 * and ends at or before it, so the query's window is the aggregate's minus the raw rows before the query's start
 * (`before`) plus the raw rows from the aggregate's end to the query's end (`after`). The raw rows are under an hour
 * at each end when the aggregate has been moved to the query (intel_window_move). $3 and $4 are the query's since and
 * until (inclusive, as the direct computation has them).
 */
const WINDOW = `win as (select since, until from intel_window where since <= $3::timestamptz and until <= $4::timestamptz)`
// The bounds are scalar subqueries, so the planner ranges over an index on observed_at with them (null, so no rows,
// when there is no `win`), whatever it estimates of the filters.
const edgeRows = (query: CorridorQuery, columns: string, where = 'true'): string => `
  select ${columns}, -1 as sign, false as is_after from observations o
  where ${corridor(query, 'o')} and o.observed_at >= (select since from win)
    and o.observed_at < (select least($3::timestamptz, until) from win) and ${where}
  union all
  select ${columns}, 1, true from observations o
  where ${corridor(query, 'o')} and o.observed_at >= (select greatest($3::timestamptz, until) from win)
    and o.observed_at <= $4::timestamptz and ${where}`

/**
 * Per-bridge figures from the window aggregate and the edges' raw rows. A percentile is percentile_disc's: the
 * first value whose running count reaches ceil(fraction × count), in float8 as PostgreSQL computes it: the block of
 * 16 values where the running count of blocks reaches it, then the value in that block where the running count
 * reaches what is left (counts are positive, so each is the one row whose running count passes the rank). $5 is the
 * size band's index, or null.
 */
function bridgesFromWindow(query: CorridorQuery): string {
  const edgeColumns = `o.bridge, o.status, o.substatus, intel_band(o.amount_usd)::int as band, o.settled_duration_sec,
    o.quoted_duration_sec, o.realised_slippage_bps`
  return `
  with ${WINDOW},
  edge as materialized (${edgeRows(query, edgeColumns)}),
  outcomes as (
    select bridge, band, status, substatus, sum(n) as n from (
      select r.bridge, r.band::int, r.status, r.substatus, r.n from win, intel_outcomes r where r.from_code = $1 and r.to_code = $2
      union all
      select bridge, band, status, substatus, sign from edge
    ) counted
    group by bridge, band, status, substatus
  ),
  counts as (
    select bridge,
           coalesce(sum(n) filter (where status in ('DONE', 'FAILED')), 0)::int as settled,
           coalesce(sum(n) filter (where ${DELIVERED}), 0)::int as delivered,
           coalesce(sum(n) filter (where status = 'DONE' and substatus = 'REFUNDED'), 0)::int as refunded,
           coalesce(sum(n) filter (where status = 'FAILED'), 0)::int as failed,
           coalesce(sum(n) filter (where status = 'PENDING'), 0)::int as pending,
           coalesce(sum(n) filter (where status = 'NOT_FOUND'), 0)::int as not_found,
           coalesce(sum(n) filter (where band = $5::int and status in ('DONE', 'FAILED')), 0)::int as band_settled,
           coalesce(sum(n) filter (where band = $5::int and ${DELIVERED}), 0)::int as band_delivered
    from outcomes
    group by bridge
    having sum(n) > 0
  ),
  edge_values as materialized (
    select e.bridge, m.measure, m.band, m.value, e.sign from edge e
    cross join lateral (values (1, e.settled_duration_sec, -1), (2, e.quoted_duration_sec, -1), (3, e.realised_slippage_bps, -1),
                               (1, e.settled_duration_sec, e.band), (3, e.realised_slippage_bps, e.band)) m(measure, value, band)
    where ${DELIVERED} and m.value is not null and (m.band = -1 or m.band = $5::int)
  ),
  blocks as (
    select bridge, measure, band, block, sum(n) as n from (
      select v.bridge, v.measure::int, v.band::int, v.value as block, v.n from win, intel_values v
      where v.from_code = $1 and v.to_code = $2 and v.level = 1 and (v.band = -1 or v.band = $5::int)
      union all
      select bridge, measure, band, value >> ${BLOCK_SHIFT}, sign from edge_values
    ) counted
    group by bridge, measure, band, block
    having sum(n) <> 0
  ),
  running as (
    select bridge, measure, band, block, n, sum(n) over (partition by bridge, measure, band order by block) as up_to,
           sum(n) over (partition by bridge, measure, band) as total
    from blocks
  ),
  located as (
    select r.bridge, r.measure, r.band, f.percent, r.block, f.rank_wanted - (r.up_to - r.n) as rank_in_block
    from running r
    cross join lateral (select q.percent, ceil(q.fraction * r.total::float8) as rank_wanted
                        from (values (50, 0.5::float8), (95, 0.95::float8)) q(percent, fraction)) f
    where (f.percent = 50 or (r.band = -1 and r.measure <> 2)) and r.up_to - r.n < f.rank_wanted and r.up_to >= f.rank_wanted
  ),
  -- A block holds at most 16 values; the limit keeps this a lookup per block rather than a join the planner may turn
  -- into a scan of the pair's every value.
  in_block as (
    select bridge, measure, band, percent, rank_in_block, value, sum(n) as n from (
      select l.bridge, l.measure, l.band, l.percent, l.rank_in_block, v.value, v.n
      from located l
      cross join lateral (
        select v.value, v.n from intel_values v
        where v.from_code = $1 and v.to_code = $2 and v.level = 0 and v.bridge = l.bridge and v.measure = l.measure and v.band = l.band
          and v.value between l.block * ${BLOCK_SIZE} and l.block * ${BLOCK_SIZE} + ${BLOCK_SIZE - 1}
        limit ${BLOCK_SIZE}
      ) v
      union all
      select l.bridge, l.measure, l.band, l.percent, l.rank_in_block, e.value, e.sign
      from located l
      join edge_values e on e.bridge = l.bridge and e.measure = l.measure and e.band = l.band and e.value >> ${BLOCK_SHIFT} = l.block
    ) counted
    group by bridge, measure, band, percent, rank_in_block, value
    having sum(n) <> 0
  ),
  found as (
    select bridge, measure, band, percent, value from (
      select *, sum(n) over (partition by bridge, measure, band, percent order by value) as up_to from in_block
    ) running_in_block
    where up_to - n < rank_in_block and up_to >= rank_in_block
  ),
  percentiles as (
    select bridge,
           min(value) filter (where measure = 1 and band = -1 and percent = 50) as settled_p50,
           min(value) filter (where measure = 1 and band = -1 and percent = 95) as settled_p95,
           min(value) filter (where measure = 2 and band = -1 and percent = 50) as quoted_p50,
           min(value) filter (where measure = 3 and band = -1 and percent = 50) as slippage_p50,
           min(value) filter (where measure = 3 and band = -1 and percent = 95) as slippage_p95,
           min(value) filter (where measure = 1 and band = $5::int and percent = 50) as band_settled_p50,
           min(value) filter (where measure = 3 and band = $5::int and percent = 50) as band_slippage_p50
    from found
    group by bridge
  )
  select c.*, p.settled_p50, p.settled_p95, p.quoted_p50, p.slippage_p50, p.slippage_p95, p.band_settled_p50, p.band_slippage_p50,
         true as from_window
  from counts c left join percentiles p on p.bridge = c.bridge
  union all
  select null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, false
  where not exists (select from win)
  order by bridge`
}

/** The same figures straight from the observations: for a window or band the window aggregate cannot answer. */
function bridgesFromObservations(query: CorridorQuery): string {
  // percentile_disc returns an observed value, so seconds and bps stay integers. The array form sorts once for
  // both fractions; identical aggregate expressions are computed once however often they are referenced.
  const settledSec = `(percentile_disc(array[0.5, 0.95]) within group (order by settled_duration_sec) filter (where delivered))`
  const slippage = `(percentile_disc(array[0.5, 0.95]) within group (order by realised_slippage_bps) filter (where delivered))`
  return `
  select bridge,
         count(*) filter (where status in ('DONE', 'FAILED'))::int as settled,
         count(*) filter (where delivered)::int as delivered,
         count(*) filter (where status = 'DONE' and substatus = 'REFUNDED')::int as refunded,
         count(*) filter (where status = 'FAILED')::int as failed,
         count(*) filter (where status = 'PENDING')::int as pending,
         count(*) filter (where status = 'NOT_FOUND')::int as not_found,
         count(*) filter (where in_band and status in ('DONE', 'FAILED'))::int as band_settled,
         count(*) filter (where in_band and delivered)::int as band_delivered,
         ${settledSec}[1] as settled_p50, ${settledSec}[2] as settled_p95,
         percentile_disc(0.5) within group (order by quoted_duration_sec) filter (where delivered) as quoted_p50,
         ${slippage}[1] as slippage_p50, ${slippage}[2] as slippage_p95,
         percentile_disc(0.5) within group (order by settled_duration_sec) filter (where in_band and delivered) as band_settled_p50,
         percentile_disc(0.5) within group (order by realised_slippage_bps) filter (where in_band and delivered) as band_slippage_p50
  from (select bridge, status, substatus, settled_duration_sec, quoted_duration_sec, realised_slippage_bps, ${DELIVERED} as delivered,
               coalesce(amount_usd >= $5::numeric and ($6::numeric is null or amount_usd < $6::numeric), false) as in_band
        from observations o
        where ${corridor(query, 'o')} and observed_at >= $3::timestamptz and observed_at <= $4::timestamptz) corridor
  group by bridge
  order by bridge`
}

/** Undelivered observations by (status, substatus, bridge) from the window aggregate and the edges' raw rows. */
function failuresFromWindow(query: CorridorQuery): string {
  const edgeColumns = 'o.status, o.substatus, o.bridge, o.observed_at, o.failure_reason'
  // An aggregate row's last_seen_at is that of its latest observation, and its reason that of its latest observation
  // with one, even once its count has fallen to 0 as the window moved: then both are older than the window's start.
  // So last_seen_at counts only where the aggregate's part of the query's window still holds observations, and a
  // reason only where it was seen in that part.
  return `
  with ${WINDOW},
  counted as (
    select r.status, r.substatus, r.bridge, r.n, 'window' as part, r.last_seen_at, r.reason_at, r.reason
    from win, intel_outcomes r
    where r.from_code = $1 and r.to_code = $2 and not ${DELIVERED}
    union all
    select status, substatus, bridge, sign, case when is_after then 'after' else 'before' end,
           case when is_after then observed_at end, case when is_after and failure_reason is not null then observed_at end,
           case when is_after then failure_reason end
    from (${edgeRows(query, edgeColumns, `not ${DELIVERED}`)}) edge
  )
  select status, substatus, bridge, sum(n)::int as count,
         greatest(case when sum(n) filter (where part <> 'after') > 0 then max(last_seen_at) filter (where part = 'window') end,
                  max(last_seen_at) filter (where part = 'after')) as last_seen_at,
         (array_agg(reason order by reason_at desc, reason desc)
            filter (where reason is not null and (part = 'after' or reason_at >= (select least($3::timestamptz, until) from win))))[1]
           as example_reason,
         true as from_window
  from counted
  group by status, substatus, bridge
  having sum(n) > 0
  union all
  select null, null, null, null, null, null, false
  where not exists (select from win)
  order by count desc, status, substatus, bridge`
}

/** The same straight from the observations. */
function failuresFromObservations(query: CorridorQuery): string {
  return `
  select status, substatus, bridge, count(*)::int as count, max(observed_at) as last_seen_at,
         (array_agg(failure_reason order by observed_at desc, failure_reason desc) filter (where failure_reason is not null))[1]
           as example_reason
  from observations o
  where ${corridor(query, 'o')} and observed_at >= $3::timestamptz and observed_at <= $4::timestamptz and not ${DELIVERED}
  group by status, substatus, bridge
  order by count desc, status, substatus, bridge`
}

const intOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))
const percentiles = (p50: unknown, p95: unknown): Percentiles | null =>
  p50 === null || p50 === undefined || p95 === null || p95 === undefined ? null : { p50: Number(p50), p95: Number(p95) }

function bridgeFigures(row: Record<string, unknown>, hasBand: boolean): BridgeFigures {
  return {
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
  }
}

function failureFigures(row: Record<string, unknown>): FailureFigures {
  return {
    status: row['status'] as ObservationStatus,
    substatus: row['substatus'] === null ? null : String(row['substatus']),
    bridge: String(row['bridge']),
    count: Number(row['count']),
    lastSeenAt: isoTimestamp(row['last_seen_at']),
    exampleReason: row['example_reason'] === null || row['example_reason'] === undefined ? null : String(row['example_reason']),
  }
}

/** A parameter as an SQL literal, for EXECUTE (which takes no bind parameters): text quoted, integers, null. */
function literal(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`
  throw new TypeError(`not a statement parameter: ${typeof value}`)
}

const preparedBySql = new WeakMap<object, Set<string>>()

/**
 * Runs a statement the session prepared once, where the store has one session (PGlite, `isExclusive`): parsing and
 * planning these statements is about half their time there. On PostgreSQL, whose pooled connections each have their
 * own session, a plain query. `declaration` lists the parameters' types.
 */
async function runPrepared(
  sql: Pick<Sql, 'query' | 'isExclusive'>,
  name: string,
  declaration: string,
  text: string,
  params: readonly unknown[],
): Promise<Record<string, unknown>[]> {
  if (!sql.isExclusive) return sql.query<Record<string, unknown>>(text, params)
  let prepared = preparedBySql.get(sql)
  if (prepared === undefined) preparedBySql.set(sql, (prepared = new Set()))
  if (!prepared.has(name)) {
    // 42P05: the session holds it already (another store object over the same connection prepared it).
    await sql.query(`prepare ${name} (${declaration}) as ${text}`).catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== '42P05') throw error
    })
    prepared.add(name)
  }
  return sql.query<Record<string, unknown>>(`execute ${name}(${params.map(literal).join(', ')})`)
}

/** A prepared statement's name: what it computes and the kinds of the pair's sides, which pick its columns. */
const statementName = (what: string, query: CorridorQuery): string => `intel_${what}_${query.from.kind}_${query.to.kind}`

const timeParams = (query: CorridorQuery): unknown[] => [
  query.from.code,
  query.to.code,
  query.since.toISOString(),
  query.until.toISOString(),
]

export type CorridorFiguresReturnType<Figures> = {
  figures: Figures[]
  /** The window aggregate was asked and did not cover the query's window: it is older, or was reset. */
  isWindowBehind: boolean
}

/**
 * Per-bridge counts and percentiles over a corridor: from the window aggregate when it covers the query (one
 * statement), else straight from the observations. Both give the same figures.
 */
export async function corridorBridgeFigures(
  sql: Pick<Sql, 'query' | 'isExclusive'>,
  query: CorridorQuery,
): Promise<CorridorFiguresReturnType<BridgeFigures>> {
  const hasBand = query.band !== null
  const bandIndex = query.band === null ? null : windowBandIndex(query.band)
  let isWindowBehind = false
  if (bandIndex !== undefined) {
    const rows = await runPrepared(
      sql,
      statementName('bridges', query),
      'text, text, timestamptz, timestamptz, int',
      bridgesFromWindow(query),
      [...timeParams(query), bandIndex],
    )
    if (rows.every((row) => row['from_window'] === true)) return { figures: rows.map((row) => bridgeFigures(row, hasBand)), isWindowBehind }
    isWindowBehind = true
  }
  const rows = await sql.query<Record<string, unknown>>(bridgesFromObservations(query), [
    ...timeParams(query),
    query.band?.minUsd ?? null,
    query.band?.maxUsd ?? null,
  ])
  return { figures: rows.map((row) => bridgeFigures(row, hasBand)), isWindowBehind }
}

/** Undelivered observations over a corridor by (status, substatus, bridge), as corridorBridgeFigures reads them. */
export async function corridorFailureFigures(
  sql: Pick<Sql, 'query' | 'isExclusive'>,
  query: CorridorQuery,
): Promise<CorridorFiguresReturnType<FailureFigures>> {
  const rows = await runPrepared(
    sql,
    statementName('failures', query),
    'text, text, timestamptz, timestamptz',
    failuresFromWindow(query),
    timeParams(query),
  )
  if (rows.every((row) => row['from_window'] === true)) return { figures: rows.map(failureFigures), isWindowBehind: false }
  const direct = await sql.query<Record<string, unknown>>(failuresFromObservations(query), timeParams(query))
  return { figures: direct.map(failureFigures), isWindowBehind: true }
}
