// `npm run bench`: engine quote latency, quote endpoint throughput and paid swap throughput, the last two against a
// same-run baseline (DESIGN 10), corridor-intelligence latency over 1,000,000 observations and keyed business routes
// with rate limiting on, against the same baseline (both on the embedded store and on PostgreSQL), a victim's latency under
// refusal floods, MCP get_quote over stdio against a direct HTTP quote with build_swap end to end, and `npm start`
// to the first 200 beside a bare node:http server's start, and one live-market refresh of a chain against anvil (RPC
// requests and milliseconds a refresh).
// `npm run bench -- --only=paid` (or engine, endpoint, intel, keyed, refusals, mcp, start, market; comma-separated) runs a subset.
import { cpus } from 'node:os'
import { type Comparison, runEndpointThroughput } from './endpointThroughput.ts'
import { runEngineLatency } from './engineLatency.ts'
import { BENCH_OBSERVATIONS, runIntelLatency } from './intelLatency.ts'
import { BENCH_DATABASE_URL, runKeyedThroughput } from './keyedThroughput.ts'
import { runMarketRefresh } from './marketRefresh.ts'
import { runLiveQuoteLatency } from './liveQuoteLatency.ts'
import { runMcpRoundTrip } from './mcpRoundTrip.ts'
import { runPaidSwap } from './paidSwap.ts'
import { runRefusalFlood } from './refusalFlood.ts'
import { runStartup } from './startup.ts'

const ENGINE_P99_TARGET_US = 250
const ENDPOINT_RATIO_TARGET = 0.5
const PAID_RATIO_TARGET = 0.6
const KEYED_QUOTE_RATIO_TARGET = 0.3
const KEYED_SWAP_RATIO_TARGET = 0.15
const FLOOD_P50_TARGET = 3
const START_MEDIAN_TARGET_MS = 1_500
const INTEL_P99_TARGET_MS = 20
const SECTIONS = ['engine', 'endpoint', 'paid', 'intel', 'keyed', 'refusals', 'mcp', 'start', 'market'] as const
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
  const names = flag
    .slice('--only='.length)
    .split(',')
    .filter((name) => name.length > 0)
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name))
  if (names.length === 0 || unknown.length > 0)
    throw new Error(`--only takes a comma-separated list of ${SECTIONS.join(', ')}; got "${flag}"`)
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
      console.log(
        `    ${pair.pair.padEnd(24)} p50 ${us(pair.p50Us).padStart(10)}  p99 ${us(pair.p99Us).padStart(10)}  max ${us(pair.maxUs).padStart(10)}  (${pair.calls} calls, ${pair.outcome})`,
      )
    const enginePass = engine.p99Us < ENGINE_P99_TARGET_US
    targets.push(target(`engine p99 < ${ENGINE_P99_TARGET_US} µs`, us(engine.p99Us), enginePass))
  }

  if (sections.has('endpoint')) {
    console.log('\n== Quote endpoint throughput: POST /api/x402/quote vs bare node:http JSON handler ==')
    const http = await runEndpointThroughput()
    console.log(
      `  each server in its own child process; autocannon here, ${http.connections} connections, ` +
        `${http.warmupSec} s warm-up + ${http.durationSec} s measured per run, alternating; best run of each counts`,
    )
    const comparison = (label: string, c: Comparison): void => {
      console.log(`  ${label}`)
      c.baseline.forEach((run, i) => {
        const app = c.app[i]
        console.log(
          `    round ${i + 1}: baseline ${rps(run.requestsPerSec).padStart(14)} (p99 ${run.latencyP99Ms} ms)   ` +
            `app ${app ? `${rps(app.requestsPerSec).padStart(14)} (p99 ${app.latencyP99Ms} ms)` : '-'}`,
        )
      })
      console.log(`    best: baseline ${rps(c.baselineBest)}, app ${rps(c.appBest)}: ratio ${c.ratio.toFixed(3)}`)
    }
    comparison('the same request repeated (identical requests within a second are answered from the quote memo):', http.repeated)
    comparison(
      'every request a different amount (each routed, signed and serialised afresh; the baseline gets the same bodies):',
      http.distinct,
    )
    targets.push(
      target(
        `endpoint app/baseline >= ${ENDPOINT_RATIO_TARGET} (repeated)`,
        http.repeated.ratio.toFixed(3),
        http.repeated.ratio >= ENDPOINT_RATIO_TARGET,
      ),
    )
    targets.push(
      `  ${'endpoint app/baseline, distinct requests'.padEnd(44)} ${http.distinct.ratio.toFixed(3).padStart(10)}   (reported; the memo cannot help)`,
    )
  }

  if (sections.has('paid')) {
    console.log(
      '\n== Paid swap throughput: payForSwap (verify, reserve, build, settle on ledger, record) vs bare recoverTypedDataAddress ==',
    )
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
    console.log(
      `  best: recover ${perSec(paid.baselineBest, 'calls')}, paid ${perSec(paid.paidBest, 'swaps')}: ratio ${paid.ratio.toFixed(3)}`,
    )
    const b = paid.breakdown
    const share = (value: number): string => `${((100 * value) / b.totalUs).toFixed(0).padStart(3)}%`
    const row = (label: string, value: number, note = ''): void =>
      console.log(`    ${label.padEnd(34)} ${usInt(value).padStart(10)}  ${share(value)}${note}`)
    console.log(
      `  where a paid swap's time goes: mean of ${b.calls} more swaps on timer-wrapped deps (build, decode, verify, recovery replayed beside each)`,
    )
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

  if (sections.has('intel')) {
    console.log(
      `\n== Corridor intelligence latency: GET /api/v1/intelligence/corridor/{pair} over ${BENCH_OBSERVATIONS.toLocaleString('en-US')} observations vs bare node:http JSON handler ==`,
    )
    for (const store of ['pglite', 'postgres'] as const) {
      const intel = await runIntelLatency({ store }).catch((error: unknown) => error as Error)
      if (intel instanceof Error) {
        console.log(`  ${store}: not run (${intel.message})`)
        targets.push(
          `  ${`intel p99 < ${INTEL_P99_TARGET_MS} ms on ${store}`.padEnd(44)} ${'-'.padStart(10)}   (not run: ${intel.message})`,
        )
        continue
      }
      console.log(
        `  ${store === 'pglite' ? 'PGlite on a data directory of its own, its database on its own thread (as serve runs it)' : `PostgreSQL (a schema of its own on ${BENCH_DATABASE_URL.replace(/\/\/[^@]*@/, '//')})`}: ` +
          `${intel.observations.toLocaleString('en-US')} observations over 90 days seeded by one generate_series insert, the window aggregate kept by its trigger ` +
          `(seeded in ${(intel.startMs / 1000).toFixed(1)} s); the clock 59 min 59 s into the hour, so each answer also reads almost an hour of raw rows at each end; ` +
          `one request at a time over keep-alive, ${intel.warmupRequests} warm-up each, then ${intel.rounds} rounds of ${intel.roundSec} s per target, alternating`,
      )
      const row = (name: string, f: { requests: number; p50Us: number; p99Us: number }, extra = ''): void =>
        console.log(
          `    ${name.padEnd(30)} p50 ${usInt(f.p50Us).padStart(10)}  p99 ${usInt(f.p99Us).padStart(10)}  (${f.requests} requests)${extra}`,
        )
      row('baseline', intel.baseline.best)
      for (const c of intel.cases)
        row(
          c.name,
          c.best,
          `  ${c.basis} over ${c.sampleSize.toLocaleString('en-US')} settled;  p99 per round ${c.rounds.map((r) => (r.p99Us / 1000).toFixed(1)).join(', ')} ms`,
        )
      // The least p99 over the rounds of each case, the worst case counting: the slowest pair must meet it.
      const worst = [...intel.cases].sort((a, b) => b.p99BestUs - a.p99BestUs)[0]
      const worstMs = (worst?.p99BestUs ?? Number.POSITIVE_INFINITY) / 1000
      targets.push(
        target(
          `intel p99 < ${INTEL_P99_TARGET_MS} ms on ${store} (slowest pair)`,
          `${worstMs.toFixed(1)} ms`,
          worstMs < INTEL_P99_TARGET_MS,
        ),
      )
    }
  }

  if (sections.has('keyed')) {
    console.log(
      '\n== Keyed business routes, rate limiting on: POST /api/v1/quote and /api/v1/swap with a pro key vs bare node:http JSON handler ==',
    )
    for (const store of ['pglite', 'pglite-memory', 'postgres'] as const) {
      const keyed = await runKeyedThroughput({ store }).catch((error: unknown) => error as Error)
      if (keyed instanceof Error) {
        console.log(`  ${store}: not run (${keyed.message})`)
        targets.push(`  ${`keyed on ${store}`.padEnd(44)} ${'-'.padStart(10)}   (not run: ${keyed.message})`)
        continue
      }
      console.log(
        store === 'pglite'
          ? `  embedded store as serve runs it (a PGlite data directory, its database on a thread of its own, one owning process): every request's key verified and counted in the process's memory; `
          : store === 'pglite-memory'
            ? `  PGlite in memory on the event loop's thread (what the embedded store was before it had a thread of its own), counted as above; `
            : `  PostgreSQL (a schema of its own on ${BENCH_DATABASE_URL.replace(/\/\/[^@]*@/, '//')}): every request counted by one store statement that also reads the denylist; `,
      )
      console.log(
        `    limit raised so none is refused (the app answered RateLimit ${keyed.rateLimitHeader}); ${keyed.connections} connections, ` +
          `${keyed.warmupSec} s warm-up + ${keyed.durationSec} s per run, ${keyed.rounds} rounds; the quote repeats one body (answered from the per-second memo after ` +
          `the first), the swap reuses one quoteId and routes, builds and records a swap per request`,
      )
      for (const [name, runs] of Object.entries(keyed.runs))
        console.log(`    ${name.padEnd(14)} ${runs.map((run) => `${rps(run.requestsPerSec)} (p99 ${run.latencyP99Ms} ms)`).join('   ')}`)
      if (store === 'pglite') {
        targets.push(
          target(
            `keyed quote / baseline >= ${KEYED_QUOTE_RATIO_TARGET}`,
            keyed.quoteRatio.toFixed(3),
            keyed.quoteRatio >= KEYED_QUOTE_RATIO_TARGET,
          ),
        )
        targets.push(
          target(
            `keyed swap / baseline >= ${KEYED_SWAP_RATIO_TARGET}`,
            keyed.swapRatio.toFixed(3),
            keyed.swapRatio >= KEYED_SWAP_RATIO_TARGET,
          ),
        )
      } else {
        const where = store === 'postgres' ? 'PostgreSQL' : 'PGlite in memory'
        targets.push(`  ${`keyed quote / baseline on ${where}`.padEnd(44)} ${keyed.quoteRatio.toFixed(3).padStart(10)}   (reported beside)`)
        targets.push(`  ${`keyed swap / baseline on ${where}`.padEnd(44)} ${keyed.swapRatio.toFixed(3).padStart(10)}   (reported beside)`)
      }
    }
  }

  if (sections.has('refusals')) {
    console.log(
      '\n== Refusal floods: one source floods refusals with 50 connections while another client sends keyed quotes one at a time ==',
    )
    for (const holdRefusalsMs of [undefined, 0]) {
      const flood = await runRefusalFlood(holdRefusalsMs === undefined ? {} : { holdRefusalsMs })
      console.log(
        holdRefusalsMs === undefined
          ? `  as configured by default (refusals past twice the limit held SWAPEAZI_REFUSAL_HOLD_MS, 1 s); flood ${flood.floodSec} s from autocannon in its own process:`
          : '  with SWAPEAZI_REFUSAL_HOLD_MS=0 (every refusal answered at once, from memory): what a flood at full speed costs the shared event loop:',
      )
      for (const c of flood.cases) {
        const statuses = Object.entries(c.flood.statuses)
          .map(([code, count]) => `${count.toLocaleString('en-US')}×${code}`)
          .join(' ')
        console.log(
          `    ${c.name.padEnd(24)} flood ${rps(c.flood.requestsPerSec).padStart(12)} (${statuses});  victim p50 ${usInt(c.quiet.p50Us)} quiet, ` +
            `${usInt(c.flooded.p50Us)} flooded (×${c.p50Ratio.toFixed(2)}), p99 ${usInt(c.flooded.p99Us)}`,
        )
        if (holdRefusalsMs === undefined)
          targets.push(
            target(
              `flood of ${c.name}: victim p50 <= ${FLOOD_P50_TARGET}× quiet`,
              `×${c.p50Ratio.toFixed(2)}`,
              c.p50Ratio <= FLOOD_P50_TARGET,
            ),
          )
        else targets.push(`  ${`flood of ${c.name}, no hold`.padEnd(44)} ${`×${c.p50Ratio.toFixed(2)}`.padStart(10)}   (reported)`)
      }
    }
  }

  if (sections.has('mcp')) {
    console.log(
      '\n== MCP over stdio: get_quote through bin/swapeazi-mcp.js vs a direct POST /api/x402/quote to the same app; build_swap end to end ==',
    )
    const mcp = await runMcpRoundTrip()
    console.log(
      `  the app in its own child process; the MCP server spawned as a host spawns it, SWAPEAZI_BASE_URL at the app (up and initialized in ${(mcp.mcpStartMs / 1000).toFixed(1)} s), ` +
        `driven by the SDK Client over StdioClientTransport; keep-alive fetch on both paths, one call at a time`,
    )
    console.log(
      `  ${mcp.warmupCalls} warm-up calls each, then ${mcp.rounds} rounds of ${mcp.roundSec} s per side alternating in ${mcp.sliceSec * 1_000} ms slices; ` +
        `every call answered a quote; the least p50 and the least p99 over the rounds count`,
    )
    const row = (f: { calls: number; p50Us: number; p99Us: number }): string =>
      `p50 ${usInt(f.p50Us).padStart(9)}  p99 ${usInt(f.p99Us).padStart(9)} (${String(f.calls).padStart(5)} calls)`
    for (const [i, round] of mcp.quoteRounds.entries())
      console.log(
        `  round ${i + 1}: direct ${row(round.direct)}   mcp ${row(round.mcp)}   p50 ×${(round.mcp.p50Us / round.direct.p50Us).toFixed(2)}`,
      )
    console.log(`  best:    direct ${row(mcp.direct)}   mcp ${row(mcp.mcp)}`)
    console.log(`  MCP / direct: p50 ×${mcp.p50Ratio.toFixed(2)}, p99 ×${mcp.p99Ratio.toFixed(2)}`)
    const b = mcp.build
    console.log(
      `  build_swap: a second MCP server with a throwaway wallet (budget ${b.spentTodayUsdc} of 1000 USDC spent by the end); each call pays 0.02 USDC over x402 ` +
        `(402, sign, paid retry), ${b.settlement} settlement; ${mcp.buildWarmupCalls} warm-up, then ${b.calls} calls one at a time, a direct quote after each for scale`,
    )
    console.log(
      `    build_swap median ${b.p50Ms.toFixed(1)} ms  p90 ${b.p90Ms.toFixed(1)} ms  max ${b.maxMs.toFixed(1)} ms;  direct quote median ${b.directQuoteP50Ms.toFixed(2)} ms (build ×${(b.p50Ms / b.directQuoteP50Ms).toFixed(1)})`,
    )
    targets.push(
      `  ${'mcp get_quote / direct quote: p50, p99'.padEnd(44)} ${`×${mcp.p50Ratio.toFixed(2)}, ×${mcp.p99Ratio.toFixed(2)}`.padStart(10)}   (reported; no target set)`,
    )
    targets.push(
      `  ${'mcp build_swap end to end: median, p90'.padEnd(44)} ${`${b.p50Ms.toFixed(1)} ms, ${b.p90Ms.toFixed(1)} ms`.padStart(10)}   (reported; no target set)`,
    )
  }

  if (sections.has('start')) {
    console.log(
      '\n== Start-up: npm start to the first 200 of GET /api/v1/health on a warm data directory, beside a bare node:http server ==',
    )
    const start = await runStartup()
    console.log(
      `  each start a process of its own, ${start.rounds} rounds alternating the ways; median (and the CPU the process had used by then), then every start in ms`,
    )
    for (const [name, starts] of Object.entries(start.startsMs)) {
      const cpu = start.cpuMedianMs[name]
      const cpuText = cpu === undefined ? ''.padEnd(16) : `  (CPU ${`${Math.round(cpu)} ms`.padStart(7)})`
      console.log(
        `    ${name.padEnd(28)} median ${`${Math.round(start.medianMs[name] ?? 0)} ms`.padStart(8)}${cpuText}   ${starts.map((ms) => Math.round(ms)).join(', ')}`,
      )
    }
    console.log(
      `  building the compiled CLI (esbuild; the first start after a source change pays it once): ${Math.round(start.buildMs)} ms`,
    )
    const npmStart = start.medianMs['npm start'] ?? Number.POSITIVE_INFINITY
    targets.push(
      target(`npm start to first 200 < ${START_MEDIAN_TARGET_MS} ms`, `${Math.round(npmStart)} ms`, npmStart < START_MEDIAN_TARGET_MS),
    )
  }

  if (sections.has('market')) {
    console.log('\n== Live market: one refresh of one chain (createChainReader) against anvil ==')
    const market = await runMarketRefresh()
    console.log(
      `  ${market.feeds} stand-in feeds, a sequencer-uptime feed and ${market.quotes} depth-venue quotes and ${market.messagingFeeLanes} quoteSend lanes (Ethereum's) over viem's http transport; a block mined before each refresh (untimed); ` +
        `${market.refreshes} refreshes timed after a warm-up`,
    )
    console.log(
      `  RPC requests a refresh: ${market.rpcCallsReported.join(', ')} reported, ${market.requestsSent.join(', ')} sent (counted by the transport)`,
    )
    console.log(`  median ${market.p50Ms.toFixed(2)} ms   p90 ${market.p90Ms.toFixed(2)} ms   max ${market.maxMs.toFixed(2)} ms`)
    targets.push(
      `  ${'market refresh (anvil): requests, median'.padEnd(44)} ${`${market.requestsSent.join('/')}, ${market.p50Ms.toFixed(1)} ms`.padStart(10)}   (reported; no target set)`,
    )
    const quotes = await runLiveQuoteLatency()
    console.log(
      `\n  Engine quote latency on the live market's catalogue (${quotes.liveChains.join(', ')} read from anvil) beside the snapshot's, interleaved, ${quotes.calls} calls each:`,
    )
    console.log(`  snapshot p50 ${quotes.snapshot.p50Us.toFixed(1)} µs   p99 ${quotes.snapshot.p99Us.toFixed(1)} µs`)
    console.log(`  live     p50 ${quotes.live.p50Us.toFixed(1)} µs   p99 ${quotes.live.p99Us.toFixed(1)} µs   (target p99 < 250 µs)`)
    if (quotes.differingOutcomes > 0) console.log(`  ${quotes.differingOutcomes} cases route differently on the live rates`)
  }

  console.log('\n== Targets ==')
  for (const line of targets) console.log(line)
  console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error))
  process.exit(1)
})
