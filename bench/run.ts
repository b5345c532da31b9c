// `npm run bench`: engine quote latency and quote endpoint throughput against a same-run baseline (DESIGN 10).
import { cpus } from 'node:os'
import { runEndpointThroughput } from './endpointThroughput.ts'
import { runEngineLatency } from './engineLatency.ts'

const ENGINE_P99_TARGET_US = 250
const ENDPOINT_RATIO_TARGET = 0.5

const verdict = (pass: boolean): string => (pass ? 'PASS' : 'MISS  <<<<<<')
const us = (value: number): string => `${value.toFixed(1)} µs`
const rps = (value: number): string => `${Math.round(value).toLocaleString('en-US')} req/s`

async function main(): Promise<void> {
  const started = Date.now()
  console.log(`SwapEazi bench  (node ${process.version}, ${cpus().length} CPUs; shared machine: compare ratios, not absolutes)`)

  console.log('\n== Engine quote latency: findRoutes, 1,000 source units, every agent-callable corridor pair ==')
  const engine = runEngineLatency()
  console.log(
    `  ${engine.cases} corridor row × chain × pair entries, ${engine.pairs} distinct pairs ` +
      `(${engine.outcomes['routes'] ?? 0} route, ${engine.outcomes['not_viable'] ?? 0} not viable, ${engine.outcomes['no_route'] ?? 0} no route)`,
  )
  console.log(
    `  warm-up ${engine.warmupCalls.toLocaleString('en-US')} calls (also fills findRoutes' per-pair memo of route structure, ` +
      `so cold first calls are excluded), then ${engine.measuredCalls.toLocaleString('en-US')} timed calls round-robin`,
  )
  if (engine.noRoutePairs.length > 0) console.log(`  no route at all: ${engine.noRoutePairs.join(', ')}`)
  console.log(`  p50 ${us(engine.p50Us)}   p99 ${us(engine.p99Us)}   max ${us(engine.maxUs)}   mean ${us(engine.meanUs)}`)
  console.log('  slowest pairs by p99:')
  for (const pair of engine.slowestPairs)
    console.log(`    ${pair.pair.padEnd(24)} p50 ${us(pair.p50Us).padStart(10)}  p99 ${us(pair.p99Us).padStart(10)}  max ${us(pair.maxUs).padStart(10)}  (${pair.calls} calls, ${pair.outcome})`)
  const enginePass = engine.p99Us < ENGINE_P99_TARGET_US

  console.log('\n== Quote endpoint throughput: POST /api/x402/quote vs bare node:http JSON handler ==')
  const http = await runEndpointThroughput()
  console.log(
    `  each server in its own child process; autocannon here, ${http.connections} connections, ` +
      `${http.warmupSec} s warm-up + ${http.durationSec} s measured per run, alternating baseline/app; best run of each counts`,
  )
  http.baseline.forEach((run, i) => {
    const app = http.app[i]
    console.log(
      `  round ${i + 1}: baseline ${rps(run.requestsPerSec).padStart(14)} (p99 ${run.latencyP99Ms} ms)   ` +
        `app ${app ? `${rps(app.requestsPerSec).padStart(14)} (p99 ${app.latencyP99Ms} ms, non-2xx ${app.non2xx})` : '-'}`,
    )
  })
  console.log(`  best: baseline ${rps(http.baselineBest)}, app ${rps(http.appBest)}`)
  const endpointPass = http.ratio >= ENDPOINT_RATIO_TARGET

  console.log('\n== Targets ==')
  console.log(`  engine p99 < ${ENGINE_P99_TARGET_US} µs          ${us(engine.p99Us).padStart(12)}   ${verdict(enginePass)}`)
  console.log(`  endpoint app/baseline >= ${ENDPOINT_RATIO_TARGET}   ${http.ratio.toFixed(3).padStart(12)}   ${verdict(endpointPass)}`)
  console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error))
  process.exit(1)
})
