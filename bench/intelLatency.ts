// Corridor-intelligence latency with 1,000,000 observations in the store, against the bare node:http JSON handler in
// the same run (DESIGN 10), on the embedded store and on PostgreSQL. The app runs in its own process (this file, with
// INTEL_BENCH_ROLE=server): a PGlite data directory of its own (as serve runs it), or a schema of its own on
// PostgreSQL (dropped afterwards), seeded by one generate_series insert (the store's trigger adds the rows to the window aggregate in the same statement), then
// served as `swapeazi serve` serves it. Requests go one at a time over a keep-alive socket, timed here to the
// microsecond, alternating baseline and app in rounds.
import { serve } from '@hono/node-server'
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { signApiKey } from '../src/auth/apiKey.ts'
import { isoTimestamp } from '../src/store/sql.ts'
import { BASELINE_SERVER, QUOTE_BODY, type Server, startServer, stopServer } from './endpointThroughput.ts'
import { BENCH_DATABASE_URL, benchSchema } from './keyedThroughput.ts'

const KEY_SECRET = 'bench-key-secret-bench-key-secret-0123456789'
/** High enough that the per-minute limiter never refuses: every request pays the full check-and-count cost. */
const BENCH_LIMIT = '1000000000'
export const BENCH_OBSERVATIONS = 1_000_000
const SELF = fileURLToPath(import.meta.url)
const HOUR_MS = 60 * 60 * 1000
/** How long the app process may take to seed: a million rows on in-memory PGlite take a minute or two. */
const SEED_TIMEOUT_MS = 15 * 60 * 1000

/**
 * The clock the server runs on and the seed is dated against: 59 min 59 s into the hour after the one the run starts
 * in. The store's window aggregate ends on the hour the store migrated in (this one, or the next if it turns while the
 * app starts), never later than the clock's, and the first answer moves it to the clock's hour; each answer then also
 * reads the raw rows of almost a whole hour at each end of its 90-day window, the most it ever reads.
 */
function benchNow(): Date {
  return new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 2 * HOUR_MS - 1_000)
}

/** `pglite`: a data directory, as serve runs it; `pglite-memory`: in memory, on the event loop's thread; `postgres`. */
export type IntelStoreKind = 'pglite' | 'pglite-memory' | 'postgres'

export type IntelLatencyOptions = { rounds?: number; roundSec?: number; warmupRequests?: number; store?: IntelStoreKind }

export type LatencyFigures = { requests: number; p50Us: number; p99Us: number; meanUs: number }

export type IntelCase = {
  name: string
  path: string
  /** What the app answered on the preflight: its basis and how many settled transfers it aggregated. */
  basis: string
  sampleSize: number
  rounds: LatencyFigures[]
  /** The round with the least p50. */
  best: LatencyFigures
  /** The least p99 of any round: the quietest moment of a shared machine. */
  p99BestUs: number
  p50Ratio: number
  p99Ratio: number
}

export type IntelLatencyResult = Required<IntelLatencyOptions> & {
  observations: number
  /** Process start to seeded: store open, migrations and the seed (with the window aggregate). */
  startMs: number
  baseline: { rounds: LatencyFigures[]; best: LatencyFigures }
  cases: IntelCase[]
}

/**
 * The seed: a million transfers over the eight agent-callable chains (56 directed chain pairs plus same-chain swaps),
 * four bridges, LI.FI outcomes in realistic shares, amounts from 10 to 100,000 USD, evenly over the last 90 days (one
 * every 7.8 s, so about 460 an hour). One statement: the database generates the rows.
 */
const SEED_SQL = `
  insert into observations (id, observed_at, from_chain, to_chain, from_token, to_token, from_currency, to_currency, bridge, amount, amount_usd,
                            quoted_duration_sec, settled_duration_sec, realised_slippage_bps, status, substatus, failure_reason, source)
  select 'bench-' || i, $1::timestamptz - ((i::bigint * 7776000) / $2::int) * interval '1 second', f, t,
         case f when 'GNO' then 'USDC.e' when 'CEL' then 'USDT' else 'USDC' end,
         case t when 'GNO' then 'USDC.e' when 'CEL' then 'USDT' else 'USDC' end,
         'USD', 'USD',
         case when f = t then 'none' else (array['across', 'cctp-v2-fast', 'stargate-v2-taxi', 'stargate-v2-bus'])[1 + (i / 64) % 4] end,
         amount, amount, 4 + (i % 5) * 10,
         case when outcome < 0.95 then 2 + floor(r1 * r2 * 600)::int end,
         case when outcome < 0.95 then floor(r2 * 12)::int - 2 end,
         case when outcome < 0.95 then 'DONE' when outcome < 0.96 then 'DONE' when outcome < 0.985 then 'FAILED' when outcome < 0.995 then 'PENDING' else 'NOT_FOUND' end,
         case when outcome < 0.95 then 'COMPLETED' when outcome < 0.96 then 'REFUNDED' when outcome < 0.975 then 'SLIPPAGE_EXCEEDED'
              when outcome < 0.985 then 'OUT_OF_GAS' when outcome < 0.995 then 'WAIT_DESTINATION_TRANSACTION' end,
         case when outcome >= 0.96 and outcome < 0.985 then 'bench failure ' || (i % 7) end,
         'import'
  from (select i, (array['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL'])[1 + i % 8] as f,
               (array['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL'])[1 + (i / 8) % 8] as t,
               round((10 ^ (1 + random() * 4))::numeric, 2) as amount, random() as outcome, random() as r1, random() as r2
        from generate_series(1, $2::int) as i) seed`

/**
 * The server role: the real app over a store holding the seed (a PGlite data directory when SWAPEAZI_DATA_DIR is
 * set, as `serve` runs it, on the store's own thread; else in memory; PostgreSQL when DATABASE_URL is set),
 * on the clock INTEL_BENCH_NOW. It reports its port at once and `{seeded: true}` once the seed is in.
 */
async function runServer(): Promise<void> {
  const { buildAppDeps } = await import('../src/app/buildAppDeps.ts')
  const { benchConfig } = await import('./benchConfig.ts')
  const { createServer } = await import('../src/app/createServer.ts')
  const databaseUrl = process.env['DATABASE_URL']
  const dataDir = process.env['SWAPEAZI_DATA_DIR']
  const config = benchConfig({
    SWAPEAZI_KEY_SECRET: KEY_SECRET,
    SWAPEAZI_TRUST_PROXY: 'true',
    SWAPEAZI_RATE_LIMIT_ANONYMOUS: BENCH_LIMIT,
    SWAPEAZI_RATE_LIMIT_FREE: BENCH_LIMIT,
    SWAPEAZI_RATE_LIMIT_PRO: BENCH_LIMIT,
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
    ...(dataDir === undefined ? {} : { SWAPEAZI_DATA_DIR: dataDir }),
  })
  const now = process.env['INTEL_BENCH_NOW'] ?? ''
  const deps = { ...(await buildAppDeps(config)), clock: () => Date.parse(now) }
  const app = createServer(deps)
  // Listening, and the port sent, before the seed: PGlite runs it on this thread and holds the event loop meanwhile.
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, hostname: config.host, port: 0 }, (info: AddressInfo) => {
      process.send?.({ port: info.port })
      resolve(listening)
    })
  })
  process.on('disconnect', () => server.close(() => process.exit(0)))
  process.once('SIGTERM', () => server.close(() => process.exit(0)))
  await deps.store.sql.query('select setseed(0.42)')
  await deps.store.sql.query(SEED_SQL, [now, BENCH_OBSERVATIONS])
  // The window aggregate moved to the clock's hour, as the first answer would move it: the answers must come from it,
  // and a bench that measured the direct computation instead would say nothing true.
  const hourMs = Math.floor(Date.parse(now) / HOUR_MS) * HOUR_MS
  const [moved] = await deps.store.sql.query<{ until: unknown }>('select intel_window_move($1, $2) as until', [
    new Date(hourMs - 90 * 24 * HOUR_MS).toISOString(),
    new Date(hourMs).toISOString(),
  ])
  if (moved?.until === null || moved?.until === undefined || isoTimestamp(moved.until) !== new Date(hourMs).toISOString())
    throw new Error(`the window aggregate ends at ${String(moved?.until)}, not at the clock's hour ${new Date(hourMs).toISOString()}`)
  // What `swapeazi intel import` does after its transaction: all-visible pages, fresh statistics.
  await deps.store.sql.query('vacuum (analyze) observations, intel_outcomes, intel_values')
  process.send?.({ seeded: true })
}

/** Resolves when the app process reports its seed in; rejects if it exits first or takes longer than SEED_TIMEOUT_MS. */
function seeded(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the intel app did not seed within ${SEED_TIMEOUT_MS / 60_000} min`)), SEED_TIMEOUT_MS)
    server.child.on('message', (message: unknown) => {
      if ((message as { seeded?: unknown }).seeded !== true) return
      clearTimeout(timer)
      resolve()
    })
    server.child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the intel app exited while seeding (code ${code})`))
    })
  })
}

type Target = {
  name: string
  server: Server
  method: 'GET' | 'POST'
  path: (i: number) => string
  headers: (i: number) => Record<string, string>
  body?: string
}

/** One socket per run, kept alive: requests go one at a time. */
let agent = new Agent({ keepAlive: true, maxSockets: 1 })

/** One request; resolves with its status and body once the response has ended. */
function send(target: Target, i: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${target.server.origin}${target.path(i)}`)
    const headers: Record<string, string> = { ...target.headers(i) }
    if (target.body !== undefined)
      Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(target.body)) })
    const req = request(
      { agent, host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: target.method, headers },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(target.body)
  })
}

const percentile = (sorted: readonly number[], fraction: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? Number.NaN

/** Sequential requests for `seconds` (at least 50), each timed; any non-200 aborts the benchmark. */
async function measure(target: Target, seconds: number, counter: { next: number }): Promise<LatencyFigures> {
  const samplesUs: number[] = []
  const until = performance.now() + seconds * 1_000
  while (performance.now() < until || samplesUs.length < 50) {
    const i = counter.next++
    const started = process.hrtime.bigint()
    const { status, body } = await send(target, i)
    samplesUs.push(Number(process.hrtime.bigint() - started) / 1_000)
    if (status !== 200) throw new Error(`${target.name} answered ${status} under load: ${body.slice(0, 300)}`)
  }
  const sorted = [...samplesUs].sort((a, b) => a - b)
  return {
    requests: sorted.length,
    p50Us: percentile(sorted, 0.5),
    p99Us: percentile(sorted, 0.99),
    meanUs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  }
}

/** The round with the least p50: the machine is shared, and the quietest round is the one that measures the code. */
const bestRound = (rounds: readonly LatencyFigures[]): LatencyFigures => [...rounds].sort((a, b) => a.p50Us - b.p50Us)[0] as LatencyFigures

/**
 * The intelligence route on the embedded store (`pglite`: a data directory of its own, removed afterwards, as
 * `serve` runs it) or on PostgreSQL (`postgres`: a schema of its own on BENCH_DATABASE_URL, dropped afterwards).
 */
export async function runIntelLatency(options: IntelLatencyOptions = {}): Promise<IntelLatencyResult> {
  const settings = {
    rounds: options.rounds ?? 3,
    roundSec: options.roundSec ?? 3,
    warmupRequests: options.warmupRequests ?? 100,
    store: options.store ?? 'pglite',
  }
  const database = settings.store === 'postgres' ? await benchSchema() : undefined
  if (settings.store === 'postgres' && database === undefined) throw new Error(`PostgreSQL at ${BENCH_DATABASE_URL} cannot be reached`)
  const dataDir = settings.store === 'pglite' ? mkdtempSync(join(tmpdir(), 'swapeazi-bench-intel-')) : undefined
  const now = benchNow()
  agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const proKey = signApiKey(new TextEncoder().encode(KEY_SECRET), {
    v: 1,
    id: 'key_000000000000000000b1e7e1',
    tier: 'pro',
    iat: Math.floor(now.getTime() / 1000) - 60,
  })
  const servers: Server[] = []
  try {
    const baselineServer = await startServer('baseline', BASELINE_SERVER)
    servers.push(baselineServer)
    const started = performance.now()
    const appServer = await startServer('intel app', SELF, {
      INTEL_BENCH_ROLE: 'server',
      INTEL_BENCH_NOW: now.toISOString(),
      ...(database === undefined ? {} : { DATABASE_URL: database.url }),
      ...(dataDir === undefined ? {} : { SWAPEAZI_DATA_DIR: dataDir }),
    })
    servers.push(appServer)
    await seeded(appServer)
    const startMs = performance.now() - started

    const pro = { authorization: `Bearer ${proKey}` }
    const baseline: Target = {
      name: 'baseline',
      server: baselineServer,
      method: 'POST',
      path: () => '/',
      headers: () => ({}),
      body: QUOTE_BODY,
    }
    const intel = (name: string, pair: string, headers: (i: number) => Record<string, string>): Target => ({
      name,
      server: appServer,
      method: 'GET',
      path: () => `/api/v1/intelligence/corridor/${pair}?amount=1000`,
      headers,
    })
    // Free calls come from a fresh IP each (X-Forwarded-For, trusted here), so none meets the monthly quota.
    const freeIp = (i: number): Record<string, string> => ({ 'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` })
    // Each kind of pair side; USD-USD spans the whole table.
    const cases = [
      intel('free, chain pair BAS-ARB', 'BAS-ARB', freeIp),
      intel('pro, chain pair BAS-ARB', 'BAS-ARB', () => pro),
      intel('pro, chain-currency BAS-USD', 'BAS-USD', () => pro),
      intel('pro, currency-chain USD-ARB', 'USD-ARB', () => pro),
      intel('pro, whole table USD-USD', 'USD-USD', () => pro),
    ]

    const counter = { next: 1 }
    const preflight: Record<string, { basis: string; sampleSize: number }> = {}
    const all = await send(
      intel('preflight', 'USD-USD', () => pro),
      0,
    )
    const outcomes = (JSON.parse(all.body) as { outcomes?: Record<string, number> }).outcomes ?? {}
    const observations = Object.values(outcomes).reduce((a, b) => a + b, 0)
    if (all.status !== 200 || observations !== BENCH_OBSERVATIONS)
      throw new Error(
        `the app should aggregate ${BENCH_OBSERVATIONS} observations over USD-USD; it answered ${all.status}: ${all.body.slice(0, 300)}`,
      )
    for (const target of [baseline, ...cases]) {
      const { status, body } = await send(target, counter.next++)
      if (status !== 200) throw new Error(`${target.name} answered ${status}: ${body.slice(0, 300)}`)
      const parsed = JSON.parse(body) as { basis?: string; sampleSize?: number }
      preflight[target.name] = { basis: parsed.basis ?? '-', sampleSize: parsed.sampleSize ?? 0 }
      if (target !== baseline && parsed.basis !== 'observed')
        throw new Error(`${target.name} answered from ${parsed.basis}, not observations`)
      for (let i = 0; i < settings.warmupRequests; i++) await send(target, counter.next++)
    }

    const rounds: Record<string, LatencyFigures[]> = {}
    for (let round = 0; round < settings.rounds; round++)
      for (const target of [baseline, ...cases]) (rounds[target.name] ??= []).push(await measure(target, settings.roundSec, counter))

    const baselineBest = bestRound(rounds['baseline'] ?? [])
    return {
      ...settings,
      observations,
      startMs,
      baseline: { rounds: rounds['baseline'] ?? [], best: baselineBest },
      cases: cases.map((target) => {
        const best = bestRound(rounds[target.name] ?? [])
        return {
          name: target.name,
          path: target.path(0),
          basis: preflight[target.name]?.basis ?? '-',
          sampleSize: preflight[target.name]?.sampleSize ?? 0,
          rounds: rounds[target.name] ?? [],
          best,
          p99BestUs: Math.min(...(rounds[target.name] ?? []).map((round) => round.p99Us)),
          p50Ratio: best.p50Us / baselineBest.p50Us,
          p99Ratio: best.p99Us / baselineBest.p99Us,
        }
      }),
    }
  } finally {
    agent.destroy()
    for (const server of servers.reverse()) await stopServer(server)
    await database?.drop()
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1] && SELF === process.argv[1]) {
  if (process.env['INTEL_BENCH_ROLE'] === 'server') await runServer()
  else
    console.log(
      JSON.stringify(
        await runIntelLatency({
          store: process.argv.includes('--postgres') ? 'postgres' : process.argv.includes('--memory') ? 'pglite-memory' : 'pglite',
        }),
        null,
        2,
      ),
    )
}
