// Profiling aid for the keyed swap (not part of `npm run bench`). Two measures:
//   `tsx bench/profileKeyedSwap.ts cpu [rounds] [sec] [postgres|pglite] [name=appServer.ts ...]`
//       CPU time per request of the baseline, the app answering keyed swaps (each recorded in the store) and the app
//       answering them without recording (BENCH_SWAP_RECORD=skip), from /proc, under the bench's autocannon load.
//       Further app server files (name=path) join the comparison, for an A/B in one run: e.g. the committed tree,
//       `git archive HEAD | tar -x -C /tmp/head && ln -s $PWD/node_modules /tmp/head/`, then
//       `head=/tmp/head/bench/servers/appServer.ts`. With PROFILE_ROUTE=quote, the keyed quote instead of the swap.
//   `tsx bench/profileKeyedSwap.ts threads [windows] [sec] [name=appServer.ts ...]`
//       the keyed swap on a data directory of its own per server, as `serve` runs it: CPU per swap of the event loop's
//       thread, of the store's thread and of every thread, from /proc/<pid>/task, over consecutive windows of the
//       same servers (the first includes V8's warm-up), alternating between servers for an A/B in one run. With
//       BENCH_SWAP_RECORD=skip in the environment, unrecorded.
//   `tsx bench/profileKeyedSwap.ts profile [sec] [skip]`
//       the app under keyed-swap load with `--cpu-prof`, summarised by self time per function and per area
//       (`skip`: without the record; `quote`: the keyed quote instead of the swap).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { signApiKey } from '../src/auth/apiKey.ts'
import {
  APP_SERVER,
  BASELINE_SERVER,
  type LoadTarget,
  load,
  preflight,
  QUOTE_BODY,
  type Server,
  startServer,
  stopServer,
} from './endpointThroughput.ts'
import { benchSchema } from './keyedThroughput.ts'
import { type Profile, processCpuUs, summarise, TICK_US } from './profileEndpoint.ts'

const KEY_SECRET = 'bench-key-secret-bench-key-secret-0123456789'
const APP_ENV = { SWAPEAZI_KEY_SECRET: KEY_SECRET, SWAPEAZI_RATE_LIMIT_PRO: '1000000000' }
const KEY = signApiKey(new TextEncoder().encode(KEY_SECRET), {
  v: 1,
  id: 'key_000000000000000000bec4ed',
  tier: 'pro',
  iat: Math.floor(Date.now() / 1000),
})
const HEADERS = { 'x-swapeazi-key': KEY }
/** What `cpu` loads: the keyed swap, or with PROFILE_ROUTE=quote the keyed quote (which records nothing either way). */
const ROUTE = process.env['PROFILE_ROUTE'] === 'quote' ? 'quote' : 'swap'

async function swapTarget(name: string, server: Server): Promise<LoadTarget> {
  if (ROUTE === 'quote') return { name, server, path: '/api/v1/quote', headers: HEADERS, body: QUOTE_BODY }
  const response = await fetch(`${server.origin}/api/v1/quote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...HEADERS },
    body: QUOTE_BODY,
  })
  const quoteId = ((await response.json()) as { routes: { quoteId: string }[] }).routes[0]?.quoteId
  if (quoteId === undefined) throw new Error(`${name}: the keyed quote answered ${response.status} without a quoteId`)
  const target = { name, server, path: '/api/v1/swap', headers: HEADERS, body: JSON.stringify({ quoteId }) }
  await preflight(target)
  return target
}

async function cpu(rounds: number, durationSec: number, onPostgres: boolean, extra: readonly string[]): Promise<void> {
  const servers: Server[] = []
  const database = onPostgres ? await benchSchema() : undefined
  if (onPostgres && database === undefined) throw new Error('PostgreSQL cannot be reached')
  const storeEnv = database === undefined ? {} : { DATABASE_URL: database.url }
  try {
    const baseline = await startServer('baseline', BASELINE_SERVER)
    servers.push(baseline)
    const app = await startServer('swap', APP_SERVER, { ...APP_ENV, ...storeEnv })
    servers.push(app)
    const skip = await startServer('swap unrecorded', APP_SERVER, { ...APP_ENV, ...storeEnv, BENCH_SWAP_RECORD: 'skip' })
    servers.push(skip)
    const targets: LoadTarget[] = [
      { name: 'baseline', server: baseline, path: '/', headers: {}, body: QUOTE_BODY },
      await swapTarget(ROUTE, app),
      await swapTarget(`${ROUTE} unrecorded`, skip),
    ]
    for (const arg of extra) {
      const name = arg.slice(0, arg.indexOf('='))
      const server = await startServer(name, arg.slice(arg.indexOf('=') + 1), { ...APP_ENV, ...storeEnv })
      servers.push(server)
      targets.push(await swapTarget(name, server))
    }
    for (let round = 0; round < rounds; round++) {
      const lines: string[] = []
      let baselineRate = 0
      for (const listed of targets) {
        // A quote lives 60 s: each round swaps a fresh one.
        const target = listed.name === 'baseline' ? listed : await swapTarget(listed.name, listed.server)
        const pid = target.server.child.pid ?? 0
        await load(target, 10, 1)
        const before = processCpuUs(pid)
        const result = await load(target, 10, durationSec)
        const after = processCpuUs(pid)
        const requests = result['2xx']
        if (result.non2xx > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx`)
        const rate = result.requests.average
        if (target.name === 'baseline') baselineRate = rate
        const us = (after.user - before.user + after.system - before.system) / requests
        lines.push(
          `${target.name.padEnd(16)} ${Math.round(rate).toString().padStart(6)} req/s (ratio ${(rate / baselineRate).toFixed(3)}), server ${us.toFixed(0)} µs/req, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
        )
      }
      console.log(`round ${round + 1}:\n  ${lines.join('\n  ')}`)
    }
  } finally {
    for (const server of servers.reverse()) await stopServer(server)
    await database?.drop()
  }
}

/** CPU so far (µs) of a process's threads: its event loop's (the thread whose id is the pid), and every one's. */
function threadCpuUs(pid: number): { main: number; store: Map<string, number>; all: number } {
  const store = new Map<string, number>()
  let main = 0
  let all = 0
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const us = (Number(fields[11]) + Number(fields[12])) * TICK_US
    all += us
    if (Number(tid) === pid) main = us
    else store.set(tid, us)
  }
  return { main, store, all }
}

async function threads(windows: number, durationSec: number, files: readonly string[]): Promise<void> {
  const servers: Server[] = []
  const dirs: string[] = []
  try {
    for (const arg of files.length > 0 ? files : [`app=${APP_SERVER}`]) {
      const dir = mkdtempSync(join(tmpdir(), 'swapeazi-threads-'))
      dirs.push(dir)
      const name = arg.slice(0, arg.indexOf('='))
      servers.push(await startServer(name, arg.slice(arg.indexOf('=') + 1), { ...APP_ENV, SWAPEAZI_DATA_DIR: dir }))
    }
    for (let window = 0; window < windows; window++) {
      const lines: string[] = []
      for (const server of servers) {
        // A quote lives 60 s: each window swaps a fresh one.
        const target = await swapTarget(server.name, server)
        const pid = server.child.pid ?? 0
        const before = threadCpuUs(pid)
        const result = await load(target, 10, durationSec)
        const after = threadCpuUs(pid)
        if (result.non2xx > 0) throw new Error(`${server.name}: ${result.non2xx} non-2xx`)
        const swaps = result['2xx']
        // The store's thread: the other thread that worked most in the window (V8's helpers each do far less).
        const store = Math.max(0, ...[...after.store].map(([tid, us]) => us - (before.store.get(tid) ?? 0)))
        const per = (us: number) => (us / swaps).toFixed(0).padStart(5)
        lines.push(
          `${server.name.padEnd(10)} ${Math.round(result.requests.average).toString().padStart(6)} swaps/s, µs a swap: event loop ${per(after.main - before.main)}, store thread ${per(store)}, all threads ${per(after.all - before.all)}`,
        )
      }
      console.log(`window ${window + 1}:\n  ${lines.join('\n  ')}`)
    }
  } finally {
    for (const server of servers.reverse()) await stopServer(server)
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

async function profile(durationSec: number, skip: boolean, quote = false): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'swapeazi-prof-'))
  const server = await startServer('app', APP_SERVER, { ...APP_ENV, ...(skip ? { BENCH_SWAP_RECORD: 'skip' } : {}) }, [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
    '--cpu-prof-interval=100',
  ])
  let requests = 0
  let fromUs = 0
  let toUs = 0
  try {
    const target = quote
      ? { name: 'quote', server, path: '/api/v1/quote', headers: HEADERS, body: QUOTE_BODY }
      : await swapTarget('swap', server)
    await load(target, 10, 1)
    fromUs = Number(process.hrtime.bigint() / 1000n)
    const result = await load(target, 10, durationSec)
    toUs = Number(process.hrtime.bigint() / 1000n)
    requests = result['2xx']
    console.log(`${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`)
  } finally {
    await stopServer(server)
  }
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'))
  if (!file) throw new Error(`no profile written in ${dir}`)
  console.log(`profile: ${join(dir, file)}`)
  summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile, requests, fromUs, toUs)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const mode = process.argv[2] ?? 'cpu'
  if (mode === 'cpu')
    await cpu(Number(process.argv[3] ?? 2), Number(process.argv[4] ?? 5), process.argv[5] === 'postgres', process.argv.slice(6))
  else if (mode === 'threads') await threads(Number(process.argv[3] ?? 3), Number(process.argv[4] ?? 5), process.argv.slice(5))
  else if (mode === 'profile') await profile(Number(process.argv[3] ?? 8), process.argv[4] === 'skip', process.argv[4] === 'quote')
  else
    throw new Error(
      'usage: tsx bench/profileKeyedSwap.ts cpu [rounds] [sec] [postgres|pglite] [name=server.ts ...] | threads [windows] [sec] [name=server.ts ...] | profile [sec] [skip|quote]',
    )
}
