// Keyed business routes under load with rate limiting on (every request's key verified and counted: in the owning
// process on the embedded store, in the store on PostgreSQL),
// against the bare node:http JSON handler in the same run: POST /api/v1/quote (three ranked quotes) and
// POST /api/v1/swap (a signed quote built into a transaction and recorded), both with a pro key.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { signApiKey } from '../src/auth/apiKey.ts'
import {
  APP_SERVER,
  BASELINE_SERVER,
  bestOf,
  type LoadTarget,
  measureRounds,
  preflight,
  QUOTE_BODY,
  type RunFigures,
  type Server,
  startServer,
  stopServer,
  type ThroughputOptions,
  withDefaults,
} from './endpointThroughput.ts'

const KEY_SECRET = 'bench-key-secret-bench-key-secret-0123456789'
/** High enough that the bench is never refused, so every request pays the full check-and-count cost. */
const BENCH_LIMIT = '1000000000'

export type KeyedThroughputResult = Required<ThroughputOptions> & {
  runs: Record<string, RunFigures[]>
  baselineBest: number
  quoteBest: number
  swapBest: number
  quoteRatio: number
  swapRatio: number
  /** Rows in rate_counters are not visible from here; this is what the app said on the preflight. */
  rateLimitHeader: string
}

/** The PostgreSQL the bench's second run uses (BENCH_DATABASE_URL, else the local one every machine here has). */
export const BENCH_DATABASE_URL = process.env['BENCH_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test'

/** Runs one statement on its own connection. */
async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/**
 * A fresh schema on the bench's PostgreSQL for one run, and the DATABASE_URL that works in it; `drop` removes it.
 * Undefined when PostgreSQL cannot be reached (the run is then reported as skipped).
 */
export async function benchSchema(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const schema = `bench_${randomBytes(6).toString('hex')}`
  try {
    await adminQuery(BENCH_DATABASE_URL, `create schema ${schema}`)
  } catch {
    return undefined
  }
  const url = new URL(BENCH_DATABASE_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), drop: () => adminQuery(BENCH_DATABASE_URL, `drop schema if exists ${schema} cascade`) }
}

/**
 * Where the bench's app keeps its store: `pglite`, a data directory of its own (removed afterwards), as `swapeazi
 * serve` runs it, the database on a thread of its own; `pglite-memory`, PGlite in memory on the event loop's thread;
 * `postgres`, a schema of its own on BENCH_DATABASE_URL, dropped afterwards.
 */
export type KeyedStore = 'pglite' | 'pglite-memory' | 'postgres'

/** The keyed routes on one store (KeyedStore). */
export async function runKeyedThroughput(options: ThroughputOptions & { store?: KeyedStore } = {}): Promise<KeyedThroughputResult> {
  const settings = withDefaults(options)
  const store = options.store ?? 'pglite'
  const database = store === 'postgres' ? await benchSchema() : undefined
  const dataDir = store === 'pglite' ? mkdtempSync(join(tmpdir(), 'swapeazi-bench-keyed-')) : undefined
  if (options.store === 'postgres' && database === undefined) throw new Error(`PostgreSQL at ${BENCH_DATABASE_URL} cannot be reached`)
  const key = signApiKey(new TextEncoder().encode(KEY_SECRET), {
    v: 1,
    id: 'key_000000000000000000bec4ed',
    tier: 'pro',
    iat: Math.floor(Date.now() / 1000),
  })
  const servers: Server[] = []
  try {
    const baselineServer = await startServer('baseline', BASELINE_SERVER)
    servers.push(baselineServer)
    const appServer = await startServer('app', APP_SERVER, {
      SWAPEAZI_KEY_SECRET: KEY_SECRET,
      SWAPEAZI_RATE_LIMIT_PRO: BENCH_LIMIT,
      ...(database === undefined ? {} : { DATABASE_URL: database.url }),
      ...(dataDir === undefined ? {} : { SWAPEAZI_DATA_DIR: dataDir }),
    })
    servers.push(appServer)
    const headers = { 'x-swapeazi-key': key }
    const probe = await fetch(`${appServer.origin}/api/v1/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: QUOTE_BODY,
    })
    const rateLimitHeader = probe.headers.get('ratelimit') ?? ''
    if (probe.status !== 200 || !rateLimitHeader.startsWith('"pro"'))
      throw new Error(`the keyed quote answered ${probe.status} with RateLimit "${rateLimitHeader}"`)
    const ranked = (await probe.json()) as { routes: { quoteId: string }[] }
    const quoteId = ranked.routes[0]?.quoteId
    if (quoteId === undefined) throw new Error('the keyed quote carried no quoteId')

    const targets: LoadTarget[] = [
      { name: 'baseline', server: baselineServer, path: '/', headers: {}, body: QUOTE_BODY },
      { name: 'keyed quote', server: appServer, path: '/api/v1/quote', headers, body: QUOTE_BODY },
      { name: 'keyed swap', server: appServer, path: '/api/v1/swap', headers, body: JSON.stringify({ quoteId }) },
    ]
    await preflight(targets[0] as LoadTarget)
    await preflight(targets[1] as LoadTarget, (body) => Array.isArray((body as { routes?: unknown }).routes))
    await preflight(targets[2] as LoadTarget, (body) => typeof (body as { swapEaziRef?: unknown }).swapEaziRef === 'string')
    // A quote lives 60 s; the whole run must fit inside it, as a keyed client's would.
    const runSec = settings.rounds * 3 * (settings.warmupSec + settings.durationSec)
    if (runSec > 55) throw new Error(`the keyed bench would run ${runSec} s, longer than a quote lives (60 s)`)
    const runs = await measureRounds(targets, settings)
    const baselineBest = bestOf(runs['baseline'])
    const quoteBest = bestOf(runs['keyed quote'])
    const swapBest = bestOf(runs['keyed swap'])
    return {
      ...settings,
      runs,
      baselineBest,
      quoteBest,
      swapBest,
      quoteRatio: quoteBest / baselineBest,
      swapRatio: swapBest / baselineBest,
      rateLimitHeader,
    }
  } finally {
    for (const server of servers.reverse()) await stopServer(server)
    await database?.drop()
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(
    JSON.stringify(
      await runKeyedThroughput({
        store: process.argv.includes('--postgres') ? 'postgres' : process.argv.includes('--memory') ? 'pglite-memory' : 'pglite',
      }),
      null,
      2,
    ),
  )
}
