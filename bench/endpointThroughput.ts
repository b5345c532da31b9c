// Quote endpoint throughput against a bare node:http JSON handler, each server in its own child process, driven
// alternately by autocannon from this process.
import autocannon, { type Result } from 'autocannon'
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const QUOTE_PATH = '/api/x402/quote'
export const QUOTE_BODY = JSON.stringify({
  fromChain: 'ETH',
  toChain: 'ETH',
  fromToken: 'USDC',
  toToken: 'USDT',
  fromAmount: '1000',
  fromAddress: '0x1111111111111111111111111111111111111111',
})

export type ThroughputOptions = { connections?: number; durationSec?: number; warmupSec?: number; rounds?: number }

export type RunFigures = {
  requestsPerSec: number
  latencyP50Ms: number
  latencyP99Ms: number
  total2xx: number
  non2xx: number
  errors: number
  timeouts: number
}

/** Rounds of the baseline and the app on one kind of request, the best (highest requests/s) of each and their ratio. */
export type Comparison = { baseline: RunFigures[]; app: RunFigures[]; baselineBest: number; appBest: number; ratio: number }

export type ThroughputResult = {
  connections: number
  durationSec: number
  warmupSec: number
  /** The same quote request, again and again. */
  repeated: Comparison
  /** Every request a different amount, so each is routed, signed and serialised afresh. */
  distinct: Comparison
}

/**
 * Quote bodies that never repeat: the bench request with 1000.000001, 1000.000002, ... (USDC has six decimals, so
 * each is a different amount), shared by every connection.
 */
export function distinctQuoteBodies(): () => string {
  const base = JSON.parse(QUOTE_BODY) as Record<string, string>
  let n = 0
  return () => {
    n += 1
    return JSON.stringify({ ...base, fromAmount: `${1000 + Math.floor(n / 1_000_000)}.${String(n % 1_000_000).padStart(6, '0')}` })
  }
}

export type Server = { name: string; child: ChildProcess; origin: string }

/**
 * A request the load generator sends: path, headers and body on one server. With `nextBody`, every request sent
 * carries the body it returns instead (`body` is still the preflight's).
 */
export type LoadTarget = {
  name: string
  server: Server
  path: string
  headers: Record<string, string>
  body: string
  nextBody?: () => string
}

/**
 * Starts one server file in its own Node process (tsx loader) and waits for it to report its port over IPC.
 * `nodeArgs` go before the loader (the profiler passes `--cpu-prof`).
 */
export async function startServer(
  name: string,
  file: string,
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): Promise<Server> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', file], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SWAPEAZI_LOG_LEVEL: 'silent', ...env },
  })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server that missed its start must not outlive the bench.
      child.kill('SIGKILL')
      reject(new Error(`${name} server did not start within 20 s`))
    }, 20_000)
    child.once('message', (message: unknown) => {
      clearTimeout(timer)
      const port = (message as { port?: unknown }).port
      if (typeof port === 'number') resolve(port)
      else reject(new Error(`${name} server sent ${JSON.stringify(message)}`))
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${name} server exited before listening (code ${code}, signal ${signal})`))
    })
  })
  return { name, child, origin: `http://127.0.0.1:${port}` }
}

export async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
  server.child.kill('SIGTERM')
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 3_000)
  await exited
  clearTimeout(timer)
}

export const BASELINE_SERVER = fileURLToPath(new URL('./servers/baselineServer.ts', import.meta.url))
export const APP_SERVER = fileURLToPath(new URL('./servers/appServer.ts', import.meta.url))

/** One request before loading: it must answer 200 (and pass `check`), or the benchmark measures errors. */
export async function preflight(target: LoadTarget, check: (body: unknown) => boolean = () => true): Promise<void> {
  const response = await fetch(`${target.server.origin}${target.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${target.name} answered ${response.status}: ${text.slice(0, 300)}`)
  if (!check(JSON.parse(text))) throw new Error(`${target.name} answered 200 but not what it should: ${text.slice(0, 300)}`)
}

export function load(target: LoadTarget, connections: number, durationSec: number): Promise<Result> {
  const nextBody = target.nextBody
  return autocannon({
    url: `${target.server.origin}${target.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body,
    ...(nextBody ? { requests: [{ setupRequest: (request) => ({ ...request, body: nextBody() }) }] } : {}),
    connections,
    pipelining: 1,
    duration: durationSec,
    timeout: 10,
  })
}

function figures(result: Result): RunFigures {
  return {
    requestsPerSec: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    total2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }
}

/**
 * Loads each target in turn, `rounds` times, a warm-up before each measured run; any non-2xx, error or timeout
 * under load aborts the benchmark. Returns every measured run per target name, in round order.
 */
export async function measureRounds(
  targets: readonly LoadTarget[],
  options: Required<ThroughputOptions>,
): Promise<Record<string, RunFigures[]>> {
  const runs: Record<string, RunFigures[]> = {}
  for (let round = 0; round < options.rounds; round++) {
    for (const target of targets) {
      await load(target, options.connections, options.warmupSec)
      const measured = figures(await load(target, options.connections, options.durationSec))
      if (measured.non2xx > 0 || measured.errors > 0 || measured.timeouts > 0)
        throw new Error(
          `${target.name} returned ${measured.non2xx} non-2xx responses, ${measured.errors} errors and ${measured.timeouts} timeouts under load: a benchmark of error responses is worthless`,
        )
      if (measured.total2xx === 0) throw new Error(`${target.name} answered no requests under load`)
      ;(runs[target.name] ??= []).push(measured)
    }
  }
  return runs
}

/** The highest requests per second among runs. */
export const bestOf = (list: readonly RunFigures[] | undefined): number => Math.max(...(list ?? []).map((run) => run.requestsPerSec))

export const withDefaults = (options: ThroughputOptions): Required<ThroughputOptions> => ({
  connections: options.connections ?? 10,
  durationSec: options.durationSec ?? 5,
  warmupSec: options.warmupSec ?? 1,
  rounds: options.rounds ?? 2,
})

export async function runEndpointThroughput(options: ThroughputOptions = {}): Promise<ThroughputResult> {
  const settings = withDefaults(options)
  const servers: Server[] = []
  try {
    const baselineServer = await startServer('baseline', BASELINE_SERVER)
    servers.push(baselineServer)
    const appServer = await startServer('app', APP_SERVER)
    servers.push(appServer)
    const common = { path: QUOTE_PATH, headers: {}, body: QUOTE_BODY }
    const baseline: LoadTarget = { name: 'baseline', server: baselineServer, ...common }
    const app: LoadTarget = { name: 'app', server: appServer, ...common }
    const baselineDistinct: LoadTarget = { name: 'baseline distinct', server: baselineServer, ...common, nextBody: distinctQuoteBodies() }
    const appDistinct: LoadTarget = { name: 'app distinct', server: appServer, ...common, nextBody: distinctQuoteBodies() }
    await preflight(baseline)
    await preflight(
      app,
      (body) =>
        typeof (body as { toAmount?: unknown }).toAmount === 'string' && typeof (body as { quoteId?: unknown }).quoteId === 'string',
    )
    const runs = await measureRounds([baseline, app, baselineDistinct, appDistinct], settings)
    const compare = (baselineRuns: RunFigures[] = [], appRuns: RunFigures[] = []): Comparison => {
      const baselineBest = bestOf(baselineRuns)
      const appBest = bestOf(appRuns)
      return { baseline: baselineRuns, app: appRuns, baselineBest, appBest, ratio: appBest / baselineBest }
    }
    return {
      ...settings,
      repeated: compare(runs['baseline'], runs['app']),
      distinct: compare(runs['baseline distinct'], runs['app distinct']),
    }
  } finally {
    for (const server of servers.reverse()) await stopServer(server)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await runEndpointThroughput(), null, 2))
}
