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

export type RunFigures = { requestsPerSec: number; latencyP50Ms: number; latencyP99Ms: number; total2xx: number; non2xx: number; errors: number; timeouts: number }

export type ThroughputResult = {
  connections: number
  durationSec: number
  warmupSec: number
  baseline: RunFigures[]
  app: RunFigures[]
  /** Best (highest requests/s) round of each. */
  baselineBest: number
  appBest: number
  ratio: number
}

type Server = { name: string; child: ChildProcess; url: string }

/** Starts one server file in its own Node process (tsx loader) and waits for it to report its port over IPC. */
async function startServer(name: string, file: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SWAPEAZI_LOG_LEVEL: 'silent' },
  })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} server did not start within 20 s`)), 20_000)
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
  return { name, child, url: `http://127.0.0.1:${port}${QUOTE_PATH}` }
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()))
  server.child.kill('SIGTERM')
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 3_000)
  await exited
  clearTimeout(timer)
}

/** One request before loading: the app must answer 200 with a real quote, or the benchmark measures errors. */
async function preflight(server: Server, expectQuote: boolean): Promise<void> {
  const response = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: QUOTE_BODY })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`${server.name} answered ${response.status} to the quote body: ${text.slice(0, 300)}`)
  if (expectQuote) {
    const body = JSON.parse(text) as { toAmount?: unknown; quoteId?: unknown }
    if (typeof body.toAmount !== 'string' || typeof body.quoteId !== 'string')
      throw new Error(`${server.name} answered 200 but not with a quote: ${text.slice(0, 300)}`)
  }
}

function load(url: string, connections: number, durationSec: number): Promise<Result> {
  return autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: QUOTE_BODY,
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

export async function runEndpointThroughput(options: ThroughputOptions = {}): Promise<ThroughputResult> {
  const connections = options.connections ?? 10
  const durationSec = options.durationSec ?? 5
  const warmupSec = options.warmupSec ?? 1
  const rounds = options.rounds ?? 2
  const servers: Server[] = []
  try {
    const baseline = await startServer('baseline', fileURLToPath(new URL('./servers/baselineServer.ts', import.meta.url)))
    servers.push(baseline)
    const app = await startServer('app', fileURLToPath(new URL('./servers/appServer.ts', import.meta.url)))
    servers.push(app)
    await preflight(baseline, false)
    await preflight(app, true)

    const runs: Record<'baseline' | 'app', RunFigures[]> = { baseline: [], app: [] }
    for (let round = 0; round < rounds; round++) {
      for (const [key, server] of [['baseline', baseline], ['app', app]] as const) {
        await load(server.url, connections, warmupSec)
        const measured = figures(await load(server.url, connections, durationSec))
        if (measured.non2xx > 0 || measured.errors > 0 || measured.timeouts > 0)
          throw new Error(
            `${server.name} returned ${measured.non2xx} non-2xx responses, ${measured.errors} errors and ${measured.timeouts} timeouts under load: a benchmark of error responses is worthless`,
          )
        if (measured.total2xx === 0) throw new Error(`${server.name} answered no requests under load`)
        runs[key].push(measured)
      }
    }
    const best = (list: RunFigures[]): number => Math.max(...list.map((run) => run.requestsPerSec))
    const baselineBest = best(runs.baseline)
    const appBest = best(runs.app)
    return { connections, durationSec, warmupSec, baseline: runs.baseline, app: runs.app, baselineBest, appBest, ratio: appBest / baselineBest }
  } finally {
    for (const server of servers.reverse()) await stopServer(server)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await runEndpointThroughput(), null, 2))
}
