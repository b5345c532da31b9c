// Engine quote latency: findRoutes over every agent-callable corridor pair, timed call by call.
import { fileURLToPath } from 'node:url'
import { loadCatalogue } from '../src/catalogue/loadCatalogue.ts'
import { type Catalogue, corridorPairs, findRoutes, type FindRoutesParameters } from '../src/engine/index.ts'

const MANIFEST_DIR = fileURLToPath(new URL('../manifest', import.meta.url))
/** Whole units of the source token per quote (the corridor listing's reference amount). */
const UNITS = 1000n
/** 0.5%, the service default. */
const SLIPPAGE_E18 = 5n * 10n ** 15n

export type EngineLatencyOptions = { warmupCalls?: number; measuredCalls?: number }

export type PairLatency = { pair: string; calls: number; p50Us: number; p99Us: number; maxUs: number; outcome: string }

export type EngineLatencyResult = {
  /** Corridor row × chain × pair entries (a token pair can come from more than one row). */
  cases: number
  /** Distinct token pairs among them. */
  pairs: number
  /** Pairs listed by a corridor row for which findRoutes finds no route shape at all. */
  noRoutePairs: string[]
  outcomes: Record<string, number>
  warmupCalls: number
  measuredCalls: number
  p50Us: number
  p99Us: number
  maxUs: number
  meanUs: number
  slowestPairs: PairLatency[]
}

/** Nearest-rank percentile of an ascending array (q in 0..1). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank] as number
}

export type QuoteCase = { label: string; parameters: FindRoutesParameters }

/** Every (agent-callable corridor row × listed chain × corridorPairs pair), in catalogue order; a pair may repeat. */
export function corridorQuoteCases(catalogue: Catalogue): QuoteCase[] {
  const cases: QuoteCase[] = []
  for (const row of catalogue.corridors) {
    if (!row.agentCallable) continue
    for (const chain of row.chains) {
      for (const { from, to } of corridorPairs(catalogue, row, chain)) {
        const amountIn = UNITS * 10n ** BigInt(from.decimals)
        cases.push({ label: `${from.key}>${to.key}`, parameters: { from, to, amountIn, slippageE18: SLIPPAGE_E18 } })
      }
    }
  }
  return cases
}

export function runEngineLatency(options: EngineLatencyOptions = {}): EngineLatencyResult {
  const warmupCalls = options.warmupCalls ?? 2_000
  const measuredCalls = options.measuredCalls ?? 20_000
  const { catalogue } = loadCatalogue(MANIFEST_DIR)
  const cases = corridorQuoteCases(catalogue)
  if (cases.length === 0) throw new Error('no agent-callable corridor pairs in the catalogue')
  const labels = [...new Set(cases.map((c) => c.label))]
  const pairIndex = cases.map((c) => labels.indexOf(c.label))

  // Warm-up: the first call per pair also builds and memoizes its candidate route structure, and the JIT settles.
  const outcomeByPair: string[] = []
  for (let i = 0; i < Math.max(warmupCalls, cases.length); i++) {
    const k = i % cases.length
    outcomeByPair[pairIndex[k]!] = findRoutes(catalogue, cases[k]!.parameters).kind
  }

  const samples = new Float64Array(measuredCalls)
  const perPair: number[][] = labels.map(() => [])
  let sink = 0
  for (let i = 0; i < measuredCalls; i++) {
    const k = i % cases.length
    const parameters = cases[k]!.parameters
    const start = process.hrtime.bigint()
    const found = findRoutes(catalogue, parameters)
    const end = process.hrtime.bigint()
    sink += found.kind.length // keeps the result observably used
    const us = Number(end - start) / 1_000
    samples[i] = us
    perPair[pairIndex[k]!]!.push(us)
  }
  if (sink === 0) throw new Error('unreachable')

  const sorted = samples.slice().sort()
  let total = 0
  for (const value of samples) total += value
  const outcomes: Record<string, number> = {}
  for (const kind of outcomeByPair) outcomes[kind] = (outcomes[kind] ?? 0) + 1

  const pairStats: PairLatency[] = perPair.map((values, k) => {
    const s = Float64Array.from(values).sort()
    return {
      pair: labels[k]!,
      calls: s.length,
      p50Us: percentile(s, 0.5),
      p99Us: percentile(s, 0.99),
      maxUs: s[s.length - 1] ?? Number.NaN,
      outcome: outcomeByPair[k] ?? '?',
    }
  })
  pairStats.sort((a, b) => b.p99Us - a.p99Us)

  const noRoutePairs = labels.filter((_, k) => outcomeByPair[k] === 'no_route')
  return {
    cases: cases.length,
    pairs: labels.length,
    noRoutePairs,
    outcomes,
    warmupCalls,
    measuredCalls,
    p50Us: percentile(sorted, 0.5),
    p99Us: percentile(sorted, 0.99),
    maxUs: sorted[sorted.length - 1] ?? Number.NaN,
    meanUs: total / measuredCalls,
    slowestPairs: pairStats.slice(0, 3),
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(runEngineLatency(), null, 2))
}
