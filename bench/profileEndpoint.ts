// Profiling aid for the quote endpoint (not part of `npm run bench`). Two measures:
//   `tsx bench/profileEndpoint.ts cpu [rounds] [sec] [name=server.ts[|--node-flag,...] ...]`
//       CPU time per request of each server process (user + system, all threads, from /proc/<pid>/stat) and of the
//       load generator, under the bench's autocannon load. Requests per second depend on what else the shared
//       machine runs; CPU per request much less. Further servers make an A/B in one run, e.g. the committed tree:
//       `git archive HEAD | tar -x -C /tmp/head && ln -s $PWD/node_modules /tmp/head/`, then
//       `head=/tmp/head/bench/servers/appServer.ts`.
//   `tsx bench/profileEndpoint.ts profile [sec] [distinct]`
//       the app server under load (`distinct`: every request a different amount, none answered from the memo) with `--cpu-prof`, summarised by self time per function and per area. V8 samples
//       on wall time, so time the process spends preempted lands on whatever it was doing (mostly the socket write);
//       `perf record -g` with `--perf-basic-prof` attributes CPU time more faithfully where perf is available.
import { readFileSync, readdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  APP_SERVER,
  BASELINE_SERVER,
  distinctQuoteBodies,
  type LoadTarget,
  load,
  preflight,
  QUOTE_BODY,
  type Server,
  startServer,
  stopServer,
} from './endpointThroughput.ts'

const QUOTE_PATH = '/api/x402/quote'
export const TICK_US = 10_000 // USER_HZ = 100 on Linux

/** User and system CPU time of a process (all its threads), µs. */
export function processCpuUs(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { user: Number(fields[11]) * TICK_US, system: Number(fields[12]) * TICK_US }
}

type CpuFigures = {
  name: string
  requests: number
  requestsPerSec: number
  serverUsPerRequest: number
  serverSystemUsPerRequest: number
  loaderUsPerRequest: number
}

async function cpuPerRequest(target: LoadTarget, durationSec: number): Promise<CpuFigures> {
  const pid = target.server.child.pid
  if (pid === undefined) throw new Error(`${target.name} has no pid`)
  await load(target, 10, 1)
  const serverBefore = processCpuUs(pid)
  const loaderBefore = process.cpuUsage()
  const result = await load(target, 10, durationSec)
  const loader = process.cpuUsage(loaderBefore)
  const serverAfter = processCpuUs(pid)
  const requests = result['2xx']
  const system = serverAfter.system - serverBefore.system
  return {
    name: target.name,
    requests,
    requestsPerSec: result.requests.average,
    serverUsPerRequest: (serverAfter.user - serverBefore.user + system) / requests,
    serverSystemUsPerRequest: system / requests,
    loaderUsPerRequest: (loader.user + loader.system) / requests,
  }
}

/**
 * `extra` are further server files (name=path) that answer POST /api/x402/quote, loaded after the app; a path may
 * end in `|--flag,--flag` to start that server with Node flags.
 */
async function cpu(rounds: number, durationSec: number, extra: readonly string[]): Promise<void> {
  const servers: Server[] = []
  try {
    const files: [string, string][] = [
      ['baseline', BASELINE_SERVER],
      ['app', APP_SERVER],
      ...extra.map((arg): [string, string] => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]),
    ]
    const targets: LoadTarget[] = []
    for (const [name, spec] of files) {
      const [file = spec, flags = ''] = spec.split('|')
      const server = await startServer(
        name,
        file,
        {},
        flags.split(',').filter((flag) => flag.length > 0),
      )
      servers.push(server)
      targets.push({ name, server, path: QUOTE_PATH, headers: {}, body: QUOTE_BODY })
    }
    for (const target of targets) await preflight(target)
    for (let round = 0; round < rounds; round++) {
      const line: string[] = []
      const byName: Record<string, CpuFigures> = {}
      for (const target of targets) {
        const f = await cpuPerRequest(target, durationSec)
        byName[f.name] = f
        line.push(
          `${f.name} ${Math.round(f.requestsPerSec)} req/s, server ${f.serverUsPerRequest.toFixed(1)} µs/req (sys ${f.serverSystemUsPerRequest.toFixed(1)}), autocannon ${f.loaderUsPerRequest.toFixed(1)} µs/req`,
        )
      }
      const baseline = byName['baseline']
      const ratios = Object.values(byName)
        .filter((f) => f.name !== 'baseline' && baseline)
        .map(
          (f) =>
            `${f.name} ${(f.requestsPerSec / (baseline?.requestsPerSec ?? 1)).toFixed(3)} (CPU ${((baseline?.serverUsPerRequest ?? 0) / f.serverUsPerRequest).toFixed(3)})`,
        )
      console.log(
        `round ${round + 1}:\n  ${line.join('\n  ')}\n  req/s over baseline (baseline CPU per request over theirs): ${ratios.join(', ')}`,
      )
    }
  } finally {
    for (const server of servers.reverse()) await stopServer(server)
  }
}

type ProfileNode = {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}
export type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

function area(url: string, fn: string): string {
  if (fn === '(garbage collector)') return 'gc'
  if (fn === '(idle)') return 'idle'
  if (fn === '(program)') return 'program (native, unattributed)'
  if (url === '') return `native ${fn.slice(0, 40)}`
  if (url.startsWith('node:'))
    return url
      .replace(/^node:(internal\/)?/, 'node:')
      .split('/')
      .slice(0, 2)
      .join('/')
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:dist\/)?(?:[^/]+\/)?([^/]+)/.exec(url)
  if (m) return m[1] === 'hono' || m[1] === '@hono/node-server' ? `${m[1]} ${m[2]}` : (m[1] ?? url)
  const src = /\/(src|bench)\/(.*)$/.exec(url)
  if (src) return `${src[1]}/${src[2]}`
  return url
}

/** Self time per profile node over samples taken in [fromUs, toUs] (monotonic clock, as the profile's timestamps). */
export function summarise(profile: Profile, requests: number, fromUs: number, toUs: number): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map<number, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (at >= fromUs && at <= toUs) selfUs.set(id, (selfUs.get(id) ?? 0) + delta)
  })
  const byFunction = new Map<string, number>()
  const byArea = new Map<string, number>()
  let busy = 0
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (!node) continue
    const { functionName, url, lineNumber } = node.callFrame
    const a = area(url, functionName)
    byArea.set(a, (byArea.get(a) ?? 0) + us)
    const key = `${functionName || '(anonymous)'}  ${url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
    if (a !== 'idle') busy += us
  }
  const per = (us: number): string => `${(us / requests).toFixed(2).padStart(7)} µs/req ${((100 * us) / busy).toFixed(1).padStart(5)}%`
  console.log(`\n${requests} requests, busy ${(busy / 1e3).toFixed(0)} ms: ${(busy / requests).toFixed(1)} µs/req sampled`)
  console.log('\nby area (self time):')
  for (const [name, us] of [...byArea].sort((x, y) => y[1] - x[1]).slice(0, 40)) if (name !== 'idle') console.log(`  ${per(us)}  ${name}`)
  console.log('\nby function (self time):')
  for (const [name, us] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, 60)) console.log(`  ${per(us)}  ${name}`)

  // Inclusive time of our own frames and a few library entry points, to see what each stage costs.
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const inclusive = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at)
      if (!node) break
      const { functionName, url } = node.callFrame
      if (!/\/src\/|hono|zod|node-server/.test(url) || !functionName) continue
      const key = `${functionName}  ${url.replace(/^.*\/(node_modules|src)\//, '$1/')}`
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + us)
    }
  }
  console.log('\ninclusive (src, hono, zod, node-server frames):')
  for (const [name, us] of [...inclusive].sort((x, y) => y[1] - x[1]).slice(0, 60)) console.log(`  ${per(us)}  ${name}`)
}

/** `distinct`: every request a different amount (as the bench's second measure), so none is answered from the memo. */
async function profile(durationSec: number, distinct: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'swapeazi-prof-'))
  const server = await startServer('app', APP_SERVER, {}, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100'])
  let requests = 0
  let fromUs = 0
  let toUs = 0
  try {
    const target: LoadTarget = {
      name: 'app',
      server,
      path: QUOTE_PATH,
      headers: {},
      body: QUOTE_BODY,
      ...(distinct ? { nextBody: distinctQuoteBodies() } : {}),
    }
    await preflight(target)
    await load(target, 10, 1)
    // The profile's timestamps are the same monotonic clock as hrtime: only the measured load window counts.
    fromUs = Number(process.hrtime.bigint() / 1000n)
    const result = await load(target, 10, durationSec)
    toUs = Number(process.hrtime.bigint() / 1000n)
    requests = result['2xx']
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
  if (mode === 'cpu') await cpu(Number(process.argv[3] ?? 3), Number(process.argv[4] ?? 5), process.argv.slice(5))
  else if (mode === 'profile') await profile(Number(process.argv[3] ?? 8), process.argv[4] === 'distinct')
  else throw new Error('usage: tsx bench/profileEndpoint.ts cpu [rounds] [sec] [name=server.ts ...] | profile [sec] [distinct]')
}
