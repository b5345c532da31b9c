import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sizeBand } from '../../src/intel/sizeBand.ts'
import type { ChainCode, Currency } from '../../src/schemas/catalogue.ts'
import type { PairSide } from '../../src/schemas/intelligence.ts'
import {
  type BridgeFigures,
  type CorridorQuery,
  createIntelStore,
  type FailureFigures,
  type IntelStore,
  type Observation,
} from '../../src/store/createIntelStore.ts'
import { WINDOW_BANDS, windowBandIndex } from '../../src/store/corridorFigures.ts'
import { MIGRATIONS, migrate, migrationStatements } from '../../src/store/migrations.ts'
import type { Sql } from '../../src/store/sql.ts'
import { migrateUpTo, type OpenedStore, storeDrivers, unmigratedStores } from './storeDrivers.ts'

// Every figure an intelligence answer reads from the window aggregate (migration 8) against a direct computation
// over the same random observations, here in the test: equal exactly, counts, percentiles, last seen and reasons.

const TIMEOUT_MS = 180_000
const HOUR_MS = 3_600_000
/** A seed of its own per run would make a failure hard to replay; change it to try other data. */
const SEED = 0x5eed_2026

/** mulberry32: small, seeded, good enough to pick test data. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

// Codes chosen so that every collation orders them alike: the first letters differ.
const CHAINS: readonly ChainCode[] = ['BAS', 'ARB', 'OPT', 'GNO']
const BRIDGES = ['across', 'cctp-v2-fast', 'stargate-v2-taxi', 'none'] as const
const OUTCOMES: readonly [number, Observation['status'], string | null][] = [
  [60, 'DONE', 'COMPLETED'],
  [5, 'DONE', 'PARTIAL'],
  [5, 'DONE', 'REFUNDED'],
  // Counted as settled but neither delivered nor undelivered, as the direct computation has it.
  [2, 'DONE', null],
  [8, 'FAILED', 'SLIPPAGE_EXCEEDED'],
  [5, 'FAILED', 'OUT_OF_GAS'],
  [8, 'PENDING', 'WAIT_DESTINATION_TRANSACTION'],
  [7, 'NOT_FOUND', null],
]
const REASONS = ['alpha', 'bravo', 'charlie', 'delta'] as const
/** Amounts at and beside every band edge. */
const AMOUNTS_USD = ['0', '12.5', '99.999999', '100', '500.5', '999.99', '1000', '5000', '10000', '99999.99', '100000', '250000']

function observationMaker(random: () => number, baseMs: number): (count: number, spreadHours: [number, number]) => Observation[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1))
  const orNull = <T>(share: number, value: () => T): T | null => (random() < share ? null : value())
  let next = 0
  return (count, [fromHour, toHour]) =>
    Array.from({ length: count }, (): Observation => {
      const weight = random() * 100
      let acc = 0
      const [, status, substatus] = OUTCOMES.find(([share]) => (acc += share) > weight) ?? (OUTCOMES[0] as (typeof OUTCOMES)[0])
      // A tenth on the hour exactly, where the aggregate's window and the query's meet.
      const offsetSec =
        random() < 0.1 ? int(fromHour, toHour) * 3600 : int(fromHour * 3600, toHour * 3600) + (random() < 0.5 ? 0 : int(0, 59))
      const settled = (): number =>
        random() < 0.05 ? int(0, 604_800) : random() < 0.5 ? int(0, 40) : random() < 0.8 ? int(0, 3_000) : int(3_000, 20_000)
      const fromChain = pick(CHAINS)
      const toChain = pick(CHAINS)
      return {
        id: `obs_${SEED}_${next++}`,
        observedAt: new Date(baseMs + offsetSec * 1000),
        fromChain,
        toChain,
        fromToken: 'USDC',
        toToken: 'USDC',
        fromCurrency: random() < 0.8 ? 'USD' : 'EUR',
        toCurrency: random() < 0.7 ? 'USD' : 'EUR',
        bridge: fromChain === toChain ? 'none' : pick(BRIDGES.slice(0, 3)),
        amount: '1',
        amountUsd: pick(AMOUNTS_USD),
        quotedDurationSec: orNull(0.2, () => int(0, 120)),
        settledDurationSec: orNull(0.05, settled),
        realisedSlippageBps: orNull(0.1, () => (random() < 0.03 ? pick([-10_000, 10_000]) : int(-30, 30))),
        status,
        substatus,
        failureReason: orNull(0.5, () => pick(REASONS)),
        source: 'import',
      }
    })
}

// The direct computation, by the definitions the API documents.
const sideMatches = (o: Observation, side: PairSide, end: 'from' | 'to'): boolean =>
  side.kind === 'chain' ? o[`${end}Chain`] === side.code : o[`${end}Currency`] === side.code
const isDelivered = (o: Observation): boolean => o.status === 'DONE' && o.substatus !== null && o.substatus !== 'REFUNDED'
const isUndelivered = (o: Observation): boolean => o.status !== 'DONE' || o.substatus === 'REFUNDED'
const isSettled = (o: Observation): boolean => o.status === 'DONE' || o.status === 'FAILED'
/** percentile_disc: the first value whose running count reaches ceil(fraction × count), in doubles as PostgreSQL has it. */
function percentileDisc(values: readonly (number | null)[], fraction: number): number | null {
  const sorted = values.filter((v): v is number => v !== null).sort((a, b) => a - b)
  return sorted.length === 0 ? null : (sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? null)
}
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

function inQuery(observations: readonly Observation[], query: CorridorQuery): Observation[] {
  return observations.filter(
    (o) =>
      sideMatches(o, query.from, 'from') &&
      sideMatches(o, query.to, 'to') &&
      o.observedAt.getTime() >= query.since.getTime() &&
      o.observedAt.getTime() <= query.until.getTime(),
  )
}

function expectedBridges(observations: readonly Observation[], query: CorridorQuery): BridgeFigures[] {
  const rows = inQuery(observations, query)
  const { band } = query
  const inBand = (o: Observation): boolean =>
    band !== null && Number(o.amountUsd) >= Number(band.minUsd) && (band.maxUsd === null || Number(o.amountUsd) < Number(band.maxUsd))
  return [...new Set(rows.map((o) => o.bridge))].sort(byText).map((bridge) => {
    const of = rows.filter((o) => o.bridge === bridge)
    const delivered = of.filter(isDelivered)
    const banded = of.filter(inBand)
    const both = (values: (number | null)[]): { p50: number; p95: number } | null => {
      const p50 = percentileDisc(values, 0.5)
      const p95 = percentileDisc(values, 0.95)
      return p50 === null || p95 === null ? null : { p50, p95 }
    }
    return {
      bridge,
      settled: of.filter(isSettled).length,
      delivered: delivered.length,
      refunded: of.filter((o) => o.status === 'DONE' && o.substatus === 'REFUNDED').length,
      failed: of.filter((o) => o.status === 'FAILED').length,
      pending: of.filter((o) => o.status === 'PENDING').length,
      notFound: of.filter((o) => o.status === 'NOT_FOUND').length,
      settledSec: both(delivered.map((o) => o.settledDurationSec)),
      quotedSecP50: percentileDisc(
        delivered.map((o) => o.quotedDurationSec),
        0.5,
      ),
      slippageBps: both(delivered.map((o) => o.realisedSlippageBps)),
      band:
        band === null
          ? null
          : {
              settled: banded.filter(isSettled).length,
              delivered: banded.filter(isDelivered).length,
              settledSecP50: percentileDisc(
                banded.filter(isDelivered).map((o) => o.settledDurationSec),
                0.5,
              ),
              slippageBpsP50: percentileDisc(
                banded.filter(isDelivered).map((o) => o.realisedSlippageBps),
                0.5,
              ),
            },
    }
  })
}

function expectedFailures(observations: readonly Observation[], query: CorridorQuery): FailureFigures[] {
  const groups = new Map<string, Observation[]>()
  for (const o of inQuery(observations, query).filter(isUndelivered)) {
    const key = JSON.stringify([o.status, o.substatus, o.bridge])
    groups.set(key, [...(groups.get(key) ?? []), o])
  }
  const latestFirst = (a: Observation, b: Observation): number =>
    b.observedAt.getTime() - a.observedAt.getTime() || byText(b.failureReason ?? '', a.failureReason ?? '')
  return [...groups.values()]
    .map((rows): FailureFigures => {
      const [first] = rows as [Observation]
      return {
        status: first.status,
        substatus: first.substatus,
        bridge: first.bridge,
        count: rows.length,
        lastSeenAt: new Date(Math.max(...rows.map((o) => o.observedAt.getTime()))).toISOString(),
        exampleReason: rows.filter((o) => o.failureReason !== null).sort(latestFirst)[0]?.failureReason ?? null,
      }
    })
    .sort(
      (a, b) =>
        b.count - a.count ||
        byText(a.status, b.status) ||
        // Nulls last, as PostgreSQL orders them ascending.
        (a.substatus === null ? 1 : 0) - (b.substatus === null ? 1 : 0) ||
        byText(a.substatus ?? '', b.substatus ?? '') ||
        byText(a.bridge, b.bridge),
    )
}

const chain = (code: ChainCode): PairSide => ({ kind: 'chain', code })
const currency = (code: Currency): PairSide => ({ kind: 'currency', code })
/** Every kind of pair, the whole table (USD-USD) among them. */
const PAIRS: readonly [PairSide, PairSide][] = [
  [chain('BAS'), chain('ARB')],
  [chain('GNO'), chain('GNO')],
  [chain('BAS'), currency('USD')],
  [currency('EUR'), chain('OPT')],
  [currency('USD'), currency('USD')],
  [currency('USD'), currency('EUR')],
]

/** The store's statements as they run, so a test can tell which computation answered. */
function recording(sql: Sql): { sql: Sql; statements: string[] } {
  const statements: string[] = []
  return {
    statements,
    sql: {
      ...sql,
      query: (text, params) => {
        statements.push(text)
        return sql.query(text, params)
      },
    },
  }
}
const answeredDirectly = (statements: readonly string[]): boolean =>
  statements.some((text) => text.includes('percentile_disc') || text.includes('array_agg(failure_reason'))

describe('window bands and migration statements', () => {
  it('names the size bands sizeBand gives, in intel_band order', () => {
    const e18 = 10n ** 18n
    const usd = [0n, 99n, 100n, 999n, 1_000n, 9_999n, 10_000n, 99_999n, 100_000n, 10n ** 9n]
    expect(usd.map((amount) => windowBandIndex(sizeBand(amount * e18)))).toEqual([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    expect(WINDOW_BANDS.map((band) => windowBandIndex(band))).toEqual([0, 1, 2, 3, 4])
    expect(windowBandIndex({ minUsd: '100', maxUsd: '1000.0' })).toBeUndefined()
  })

  it('splits at semicolons outside dollar-quoted bodies', () => {
    expect(
      migrationStatements(`create table a (x int); create function f() returns int language plpgsql as $body$
        begin perform 1; return format($q$%1$s;$q$, 'x')::int; end $body$;
        select 1;`),
    ).toEqual([
      'create table a (x int)',
      `create function f() returns int language plpgsql as $body$
        begin perform 1; return format($q$%1$s;$q$, 'x')::int; end $body$`,
      'select 1',
    ])
  })
})

describe.each(storeDrivers())('corridor figures on $name against a direct computation', (driver) => {
  let opened: OpenedStore | undefined
  beforeAll(async () => {
    opened = await driver.open()
  }, TIMEOUT_MS)
  afterAll(async () => {
    await opened?.cleanup()
  }, TIMEOUT_MS)

  it(
    'equal exactly as observations arrive and the window moves: forward a little, by hours, past its length; shorter and older windows',
    async () => {
      if (opened === undefined) throw new Error('the store did not open')
      const random = seededRandom(SEED)
      const { sql, statements } = recording(opened.sql)
      const intel: IntelStore = createIntelStore(sql)
      // Far beyond the migration's window (now), so the first query moves the aggregate to its own window.
      const baseMs = Date.UTC(2031, 2, 10, 0, 0, 0)
      const make = observationMaker(random, baseMs)
      const observations: Observation[] = []
      const add = async (batch: Observation[]): Promise<void> => {
        observations.push(...batch)
        await intel.importObservations([batch.slice(0, 100), batch.slice(100)])
      }
      const windowUntil = async (): Promise<string> => {
        const [row] = await opened!.sql.query<{ until: Date | string }>('select until from intel_window')
        return new Date(row?.until ?? 0).toISOString()
      }

      const check = async (untilMs: number, lengthHours: number, expectWindow: boolean): Promise<void> => {
        for (const [from, to] of PAIRS) {
          const bandIndexes = [null, Math.floor(random() * WINDOW_BANDS.length), Math.floor(random() * WINDOW_BANDS.length)]
          for (const bandIndex of bandIndexes) {
            const query: CorridorQuery = {
              from,
              to,
              since: new Date(untilMs - lengthHours * HOUR_MS),
              until: new Date(untilMs),
              band: bandIndex === null ? null : (WINDOW_BANDS[bandIndex] ?? null),
            }
            statements.length = 0
            const label = `${from.code}-${to.code} ${query.since.toISOString()}..${query.until.toISOString()} band ${bandIndex}`
            expect(await intel.corridorBridges(query), label).toEqual(expectedBridges(observations, query))
            if (bandIndex === null) expect(await intel.corridorFailures(query), label).toEqual(expectedFailures(observations, query))
            expect(answeredDirectly(statements), `${label}: answered directly`).toBe(!expectWindow)
          }
        }
      }

      await add(make(500, [-14, 10]))
      const firstUntil = baseMs + 17 * 60_000 + 13_000
      await check(firstUntil, 6, true)
      expect(await windowUntil()).toBe(new Date(Math.floor(firstUntil / HOUR_MS) * HOUR_MS).toISOString())

      // Arriving inside the aggregate's window (the trigger adds them), at its edges and outside it.
      await add(make(300, [-8, 2]))
      await check(firstUntil, 6, true)
      // Within the hour: the aggregate stays, the edge grows.
      await check(firstUntil + 40 * 60_000, 6, true)
      // Two hours on: rows enter and leave the aggregate.
      const laterUntil = firstUntil + 2 * HOUR_MS + 5 * 60_000
      await check(laterUntil, 6, true)
      expect(await windowUntil()).toBe(new Date(Math.floor(laterUntil / HOUR_MS) * HOUR_MS).toISOString())
      await add(make(200, [-6, 6]))
      await check(laterUntil, 6, true)
      // Further than its length: rebuilt.
      const lastUntil = laterUntil + 7 * HOUR_MS + 59 * 60_000
      await check(lastUntil, 6, true)
      // A shorter window ending at the same time: the aggregate less the raw rows before the window's start.
      await check(lastUntil, 2, true)
      // An older window, or a longer one, is computed directly; the aggregate does not move back.
      await check(firstUntil, 6, false)
      await check(lastUntil, 12, false)
      expect(await windowUntil()).toBe(new Date(Math.floor(lastUntil / HOUR_MS) * HOUR_MS).toISOString())
      // A band other than the standard ones, directly.
      const odd: CorridorQuery = {
        from: currency('USD'),
        to: currency('USD'),
        since: new Date(lastUntil - 6 * HOUR_MS),
        until: new Date(lastUntil),
        band: { minUsd: '50', maxUsd: '5000' },
      }
      expect(await intel.corridorBridges(odd)).toEqual(expectedBridges(observations, odd))
    },
    TIMEOUT_MS,
  )
})

/** Observations as a store before migration 8 holds them (the store of today vacuums tables 8 adds). */
async function insertBefore8(sql: Sql, observations: readonly Observation[]): Promise<void> {
  for (const o of observations)
    await sql.query(
      `insert into observations (id, observed_at, from_chain, to_chain, from_token, to_token, from_currency, to_currency, bridge, amount,
                                 amount_usd, quoted_duration_sec, settled_duration_sec, realised_slippage_bps, status, substatus,
                                 failure_reason, source)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
      [
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
      ],
    )
}

describe.each(unmigratedStores)('migration 8 on $name', (driver) => {
  it(
    'back-fills the window aggregate from the observations a store already holds',
    async () => {
      const { sql, cleanup } = await driver.open()
      try {
        await migrateUpTo(sql, 7)
        const random = seededRandom(SEED + 1)
        const nowMs = Date.now()
        // Over the last 100 days, so some are older than the window.
        const observations = observationMaker(random, nowMs - 100 * 24 * HOUR_MS)(400, [0, 100 * 24 - 1])
        await insertBefore8(sql, observations)
        expect(await migrate(sql)).toEqual(MIGRATIONS.filter((m) => m.id > 7).map((m) => m.id))

        const recorded = recording(sql)
        const migrated = createIntelStore(recorded.sql)
        for (const [from, to] of PAIRS) {
          const query: CorridorQuery = {
            from,
            to,
            since: new Date(nowMs - 90 * 24 * HOUR_MS),
            until: new Date(nowMs),
            band: WINDOW_BANDS[2] ?? null,
          }
          expect(await migrated.corridorBridges(query)).toEqual(expectedBridges(observations, query))
          expect(await migrated.corridorFailures(query)).toEqual(expectedFailures(observations, query))
        }
        expect(answeredDirectly(recorded.statements)).toBe(false)
      } finally {
        await cleanup()
      }
    },
    TIMEOUT_MS,
  )
})
