// Keyed business routes under load with rate limiting on (every request's key verified and counted in the store),
// against the bare node:http JSON handler in the same run: POST /api/v1/quote (three ranked quotes) and
// POST /api/v1/swap (a signed quote built into a transaction and recorded), both with a pro key.
import { fileURLToPath } from 'node:url'
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

export async function runKeyedThroughput(options: ThroughputOptions = {}): Promise<KeyedThroughputResult> {
  const settings = withDefaults(options)
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
    const appServer = await startServer('app', APP_SERVER, { SWAPEAZI_KEY_SECRET: KEY_SECRET, SWAPEAZI_RATE_LIMIT_PRO: BENCH_LIMIT })
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
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await runKeyedThroughput(), null, 2))
}
