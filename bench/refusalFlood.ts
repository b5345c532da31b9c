// Refusal floods against the real app (issue 15 item 5): while one source floods refusals at whatever rate its load
// client reaches with 50 connections, another client's keyed quote latency is measured one request at a time and
// compared with its quiet latency in the same run. Three floods, each from its own source IP (the app trusts one
// proxy, so X-Forwarded-For names the source): a free key over its limit, forged keys, and paid swaps whose payment
// signature fails. The flood runs in its own process (autocannon's CLI) so it does not share the timing loop's thread.
import { type ChildProcess, spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { signApiKey } from '../src/auth/apiKey.ts'
import { APP_SERVER, QUOTE_BODY, type Server, startServer, stopServer } from './endpointThroughput.ts'
import type { LatencyFigures } from './intelLatency.ts'

const KEY_SECRET = 'bench-key-secret-bench-key-secret-0123456789'
const AUTOCANNON = fileURLToPath(new URL('../node_modules/autocannon/autocannon.js', import.meta.url))
const FLOOD_CONNECTIONS = 50
const VICTIM_IP = '198.51.100.2'

export type FloodCase = {
  name: string
  /** The flood's own figures: requests per second it reached and what it was answered. */
  flood: { requestsPerSec: number; statuses: Record<string, number> }
  quiet: LatencyFigures
  flooded: LatencyFigures
  /** flooded p50 / quiet p50. */
  p50Ratio: number
}

export type RefusalFloodResult = { connections: number; floodSec: number; holdRefusalsMs: number | 'default'; cases: FloodCase[] }

const keyOf = (id: string, tier: 'free' | 'pro'): string =>
  signApiKey(new TextEncoder().encode(KEY_SECRET), { v: 1, id, tier, iat: Math.floor(Date.now() / 1000) })

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

function send(server: Server, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.origin}${path}`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** The victim's keyed quotes one at a time for `seconds`; every answer must be 200. */
async function victimLatency(server: Server, seconds: number): Promise<LatencyFigures> {
  const headers = { 'x-swapeazi-key': keyOf('key_0000000000000000000a0001', 'pro'), 'x-forwarded-for': VICTIM_IP }
  const samples: number[] = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const started = process.hrtime.bigint()
    const status = await send(server, '/api/v1/quote', headers, QUOTE_BODY)
    samples.push(Number(process.hrtime.bigint() - started) / 1000)
    if (status !== 200) throw new Error(`the victim's keyed quote answered ${status}`)
  }
  samples.sort((a, b) => a - b)
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0
  return { requests: samples.length, p50Us: at(0.5), p99Us: at(0.99), meanUs: samples.reduce((a, b) => a + b, 0) / samples.length }
}

type Flood = { name: string; path: string; headers: Record<string, string>; body: string }

/** autocannon's CLI in its own process: 50 connections for `seconds`, its JSON result on stdout. */
function startFlood(server: Server, flood: Flood, seconds: number): { child: ChildProcess; result: Promise<FloodCase['flood']> } {
  const args = [AUTOCANNON, '--json', '-c', String(FLOOD_CONNECTIONS), '-d', String(seconds), '-m', 'POST', '-b', flood.body]
  for (const [name, value] of Object.entries({ 'content-type': 'application/json', ...flood.headers })) args.push('-H', `${name}=${value}`)
  args.push(`${server.origin}${flood.path}`)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] })
  let out = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  const result = new Promise<FloodCase['flood']>((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the ${flood.name} flood exited with ${code}`))
      const parsed = JSON.parse(out) as { requests: { average: number }; statusCodeStats?: Record<string, { count: number }> }
      const statuses = Object.fromEntries(Object.entries(parsed.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count]))
      resolve({ requestsPerSec: parsed.requests.average, statuses })
    })
  })
  return { child, result }
}

/** A payment in one wallet's name signed by another: its signature never recovers to `from`. */
async function forgedPaymentHeader(payTo: string): Promise<string> {
  const impostor = privateKeyToAccount(generatePrivateKey())
  const owner = privateKeyToAccount(generatePrivateKey())
  const nowSec = Math.floor(Date.now() / 1000)
  const authorization = {
    from: owner.address,
    to: payTo,
    value: '20000',
    validAfter: String(nowSec - 600),
    validBefore: String(nowSec + 3600),
    nonce: `0x${'ab'.repeat(32)}`,
  }
  const signature = await impostor.signMessage({ message: 'not an EIP-3009 authorization' })
  return Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload: { signature, authorization } })).toString(
    'base64',
  )
}

export async function runRefusalFlood(
  options: { floodSec?: number; quietSec?: number; holdRefusalsMs?: number } = {},
): Promise<RefusalFloodResult> {
  const floodSec = options.floodSec ?? 6
  const quietSec = options.quietSec ?? 3
  const servers: Server[] = []
  try {
    // The victim's pro key is never limited here; the flooding free key has the default 60 a minute.
    const app = await startServer('app', APP_SERVER, {
      SWAPEAZI_KEY_SECRET: KEY_SECRET,
      SWAPEAZI_TRUST_PROXY: '1',
      SWAPEAZI_RATE_LIMIT_PRO: '1000000000',
      ...(options.holdRefusalsMs === undefined ? {} : { SWAPEAZI_REFUSAL_HOLD_MS: String(options.holdRefusalsMs) }),
    })
    servers.push(app)
    const manifest = (await (await fetch(`${app.origin}/.well-known/x402.json`)).json()) as {
      resources: { accepts: { payTo: string }[] }[]
    }
    const payTo = manifest.resources[0]?.accepts[0]?.payTo ?? '0x000000000000000000000000000000000000dEaD'
    const floods: Flood[] = [
      {
        name: 'free key over its limit',
        path: '/api/v1/quote',
        headers: { 'x-swapeazi-key': keyOf('key_00000000000000000f100d01', 'free'), 'x-forwarded-for': '203.0.113.101' },
        body: QUOTE_BODY,
      },
      {
        name: 'forged keys',
        path: '/api/v1/quote',
        headers: {
          'x-swapeazi-key': `${keyOf('key_00000000000000000f100d02', 'pro').slice(0, -4)}AAAA`,
          'x-forwarded-for': '203.0.113.102',
        },
        body: QUOTE_BODY,
      },
      {
        name: 'bad payment signatures',
        path: '/api/x402/swap',
        headers: { 'x-payment': await forgedPaymentHeader(payTo), 'x-forwarded-for': '203.0.113.103' },
        body: QUOTE_BODY,
      },
    ]
    await victimLatency(app, 1) // warm-up
    const cases: FloodCase[] = []
    for (const flood of floods) {
      const quiet = await victimLatency(app, quietSec)
      const running = startFlood(app, flood, floodSec)
      // The first second lets the flood pass its limit; the victim is measured while the flood is refused.
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      const flooded = await victimLatency(app, floodSec - 2.5)
      const floodFigures = await running.result
      cases.push({ name: flood.name, flood: floodFigures, quiet, flooded, p50Ratio: flooded.p50Us / quiet.p50Us })
    }
    return { connections: FLOOD_CONNECTIONS, floodSec, holdRefusalsMs: options.holdRefusalsMs ?? 'default', cases }
  } finally {
    agent.destroy()
    for (const server of servers.reverse()) await stopServer(server)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const hold = process.argv.find((arg) => arg.startsWith('--hold='))
  console.log(
    JSON.stringify(await runRefusalFlood(hold === undefined ? {} : { holdRefusalsMs: Number(hold.slice('--hold='.length)) }), null, 2),
  )
}
