// `npm run bench`: engine quote latency, quote endpoint throughput and paid swap throughput, the last two against a
// same-run baseline (DESIGN 10). `npm run bench -- --only=paid` (or engine, endpoint; comma-separated) runs a subset.
import { cpus } from 'node:os'
import { runEndpointThroughput } from './endpointThroughput.ts'
import { runEngineLatency } from './engineLatency.ts'
import { runPaidSwap } from './paidSwap.ts'

const ENGINE_P99_TARGET_US = 250
const ENDPOINT_RATIO_TARGET = 0.5
const PAID_RATIO_TARGET = 0.6
const SECTIONS = ['engine', 'endpoint', 'paid'] as const
type Section = (typeof SECTIONS)[number]

const verdict = (pass: boolean): string => (pass ? 'PASS' : 'MISS  <<<<<<')
const us = (value: number): string => `${value.toFixed(1)} µs`
const rps = (value: number): string => `${Math.round(value).toLocaleString('en-US')} req/s`
const perSec = (value: number, unit: string): string => `${value.toFixed(1)} ${unit}/s`
const usInt = (value: number): string => `${Math.round(value).toLocaleString('en-US')} µs`
const target = (label: string, value: string, pass: boolean): string => `  ${label.padEnd(44)} ${value.padStart(10)}   ${verdict(pass)}`

/** The sections `--only=a,b` names, or all of them. */
function selectedSections(argv: readonly string[]): Set<Section> {
  const flag = argv.find((arg) => arg.startsWith('--only='))
  if (flag === undefined) return new Set(SECTIONS)
  const names = flag.slice('--only='.length).split(',').filter((name) => name.length > 0)
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name))
  if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes a comma-separated list of ${SECTIONS.join(', ')}; got "${flag}"`)
  return new Set(names as Section[])
}

async function main(): Promise<void> {
  const sections = selectedSections(process.argv.slice(2))
  const started = Date.now()
  console.log(`SwapEazi bench  (node ${process.version}, ${cpus().length} CPUs; shared machine: compare ratios, not absolutes)`)
  const targets: string[] = []

  if (sections.has('engine')) {
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
    targets.push(target(`engine p99 < ${ENGINE_P99_TARGET_US} µs`, us(engine.p99Us), enginePass))
  }

  if (sections.has('endpoint')) {
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
    targets.push(target(`endpoint app/baseline >= ${ENDPOINT_RATIO_TARGET}`, http.ratio.toFixed(3), endpointPass))
  }

  if (sections.has('paid')) {
    console.log('\n== Paid swap throughput: payForSwap (verify, reserve, build, settle on ledger, record) vs bare recoverTypedDataAddress ==')
    const paid = await runPaidSwap()
    console.log(
      `  in process, no socket, one call at a time; real catalogue, screener, ledger settler and ${paid.store}; ` +
        `${paid.signedPayments.toLocaleString('en-US')} distinct payments pre-signed untimed (${perSec(paid.signPerSec, 'signatures')}, the client's cost)`,
    )
    console.log(
      `  ${paid.warmupSec} s warm-up each, then ${paid.rounds.length} rounds of ${paid.roundSec} s per side, alternating baseline/paid ` +
        `in ${paid.sliceSec * 1_000} ms slices; every paid call answered paid and every recovery matched its signer; best round of each counts`,
    )
    paid.rounds.forEach((round, i) => {
      console.log(
        `  round ${i + 1}: recover ${perSec(round.baselinePerSec, 'calls').padStart(14)} (${round.baselineCalls} calls)   ` +
          `paid ${perSec(round.paidPerSec, 'swaps').padStart(14)} (${round.paidCalls} swaps in ${round.paidSec.toFixed(1)} s)   ` +
          `ratio ${(round.paidPerSec / round.baselinePerSec).toFixed(3)}`,
      )
    })
    console.log(`  best: recover ${perSec(paid.baselineBest, 'calls')}, paid ${perSec(paid.paidBest, 'swaps')}: ratio ${paid.ratio.toFixed(3)}`)
    const b = paid.breakdown
    const share = (value: number): string => `${((100 * value) / b.totalUs).toFixed(0).padStart(3)}%`
    const row = (label: string, value: number, note = ''): void => console.log(`    ${label.padEnd(34)} ${usInt(value).padStart(10)}  ${share(value)}${note}`)
    console.log(`  where a paid swap's time goes: mean of ${b.calls} more swaps on timer-wrapped deps (build, decode, verify, recovery replayed beside each)`)
    row('payForSwap, end to end', b.totalUs)
    row('verifyPayment', b.verifyUs, `   of which bare recoverTypedDataAddress ${usInt(b.recoverUs)}`)
    row('store: reservePayment', b.reserveUs, '   onchain/facilitator only: one insert')
    row('store: record', b.recordUs, '   ledger: one statement claims, settles and records')
    row('buildSwapTransaction', b.buildUs, '   route, encode, format quote')
    row('decodePaymentHeader', b.decodeUs, '   base64, JSON, zod')
    row('screen + ledger check/settle', b.screenUs + b.settleUs)
    row('other (total minus the above)', b.otherUs, '   swap ref, requirements, result, logging; negative = noise')
    const paidPass = paid.ratio >= PAID_RATIO_TARGET
    targets.push(target(`paid swap / recoverTypedDataAddress >= ${PAID_RATIO_TARGET}`, paid.ratio.toFixed(3), paidPass))
  }

  console.log('\n== Targets ==')
  for (const line of targets) console.log(line)
  console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error))
  process.exit(1)
})
