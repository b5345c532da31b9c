import type { BridgeIntelligence, CorridorIntelligencePro, FailurePattern } from '../schemas/intelligence.ts'
import type { BridgeFigures, FailureFigures } from '../store/createIntelStore.ts'
import { NO_BRIDGE } from '../engine/index.ts'
import type { CorridorPair } from './parsePairCode.ts'
import type { PublishedPriorsReturnType } from './publishedPriors.ts'
import type { SizeBand } from './sizeBand.ts'

/** Settled transfers a corridor (or a size band of it) needs before its figures are observed, not priors. */
export const MIN_SAMPLE_SIZE = 20
/** Settled transfers a bridge needs to be ranked for the optimal route, when any bridge has that many. */
const MIN_BRIDGE_SAMPLE_SIZE = 5
/** Reliability bands: the delivered share of settled transfers, in percent. */
const HIGH_RELIABILITY_PERCENT = 98
const MEDIUM_RELIABILITY_PERCENT = 90

export type ReliabilityBand = CorridorIntelligencePro['reliabilityBand']

/** The band of `delivered` out of `settled` transfers, in integers: high ≥ 98%, medium ≥ 90%, low below. */
export function reliabilityBand(delivered: number, settled: number): ReliabilityBand {
  if (settled === 0) return 'unknown'
  if (delivered * 100 >= HIGH_RELIABILITY_PERCENT * settled) return 'high'
  if (delivered * 100 >= MEDIUM_RELIABILITY_PERCENT * settled) return 'medium'
  return 'low'
}

const BAND_ORDER: Readonly<Record<ReliabilityBand, number>> = { high: 0, medium: 1, low: 2, unknown: 3 }

type Candidate = { bridge: string; settled: number; delivered: number; settledSecP50: number | null; slippageBpsP50: number | null }

/** The best candidate: most reliable band, then least median settlement time, then least median slippage, then name. */
function best(candidates: readonly Candidate[]): Candidate | undefined {
  const eligible = candidates.filter((c) => c.settled >= MIN_BRIDGE_SAMPLE_SIZE)
  const pool = eligible.length > 0 ? eligible : candidates.filter((c) => c.settled > 0)
  const orNever = (value: number | null): number => value ?? Number.POSITIVE_INFINITY
  return [...pool].sort(
    (a, b) =>
      BAND_ORDER[reliabilityBand(a.delivered, a.settled)] - BAND_ORDER[reliabilityBand(b.delivered, b.settled)] ||
      orNever(a.settledSecP50) - orNever(b.settledSecP50) ||
      orNever(a.slippageBpsP50) - orNever(b.slippageBpsP50) ||
      a.bridge.localeCompare(b.bridge),
  )[0]
}

export type CorridorAnswerParameters = {
  pair: CorridorPair
  /** The amount as asked, and its USD size band; null when none was asked. */
  amount: { text: string; band: SizeBand } | null
  figures: readonly BridgeFigures[]
  failures: readonly FailureFigures[]
  priors: PublishedPriorsReturnType
  window: { since: Date; until: Date }
  now: Date
}

const sum = (figures: readonly BridgeFigures[], pick: (f: BridgeFigures) => number): number =>
  figures.reduce((total, f) => total + pick(f), 0)
const bandText = (band: SizeBand): string => (band.maxUsd === null ? `${band.minUsd} USD and over` : `${band.minUsd} to ${band.maxUsd} USD`)

function failurePatterns(failures: readonly FailureFigures[], observations: number): FailurePattern[] {
  const groups = new Map<string, FailureFigures[]>()
  for (const row of failures) {
    const key = `${row.status}/${row.substatus ?? ''}`
    groups.set(key, [...(groups.get(key) ?? []), row])
  }
  const latestFirst = (a: FailureFigures, b: FailureFigures): number => b.lastSeenAt.localeCompare(a.lastSeenAt)
  return [...groups.values()]
    .map((rows): FailurePattern => {
      const [first] = rows
      const count = rows.reduce((total, row) => total + row.count, 0)
      return {
        status: first?.status ?? 'FAILED',
        substatus: first?.substatus ?? null,
        count,
        shareBps: observations === 0 ? 0 : Math.floor((count * 10_000) / observations),
        bridges: rows
          .map((row) => ({ bridge: row.bridge, count: row.count }))
          .sort((a, b) => b.count - a.count || a.bridge.localeCompare(b.bridge)),
        lastSeenAt: [...rows].sort(latestFirst)[0]?.lastSeenAt ?? '',
        exampleReason: rows.filter((row) => row.exampleReason !== null).sort(latestFirst)[0]?.exampleReason ?? null,
      }
    })
    .sort((a, b) => b.count - a.count || a.status.localeCompare(b.status) || (a.substatus ?? '').localeCompare(b.substatus ?? ''))
}

/**
 * The pro answer for one corridor, from the database's per-bridge figures and the catalogue's priors: observed
 * when the corridor has MIN_SAMPLE_SIZE settled transfers over the window, else the published priors, and it says
 * which. The free answer is a subset of it.
 */
export function corridorAnswer(parameters: CorridorAnswerParameters): CorridorIntelligencePro {
  const { pair, amount, figures, priors } = parameters
  const settled = sum(figures, (f) => f.settled)
  const delivered = sum(figures, (f) => f.delivered)
  const observations = sum(figures, (f) => f.settled + f.pending + f.notFound)
  const isObserved = settled >= MIN_SAMPLE_SIZE
  const basis = isObserved ? 'observed' : 'published_priors'
  const notes: string[] = []

  const observedBridges: BridgeIntelligence[] = figures.map((f) => ({
    bridge: f.bridge,
    basis: 'observed',
    sampleSize: f.settled,
    successRateBps: f.settled === 0 ? null : Math.floor((f.delivered * 10_000) / f.settled),
    settlementSec: f.settledSec,
    quotedSecP50: f.quotedSecP50,
    slippageBps: f.slippageBps,
  }))
  const priorBridges = (sampleSize: (bridge: string) => number): BridgeIntelligence[] =>
    priors.bridges.map((prior) => ({
      bridge: prior.bridge,
      basis: 'published_priors',
      sampleSize: sampleSize(prior.bridge),
      successRateBps: null,
      settlementSec: prior.settlementSec,
      quotedSecP50: null,
      slippageBps: null,
    }))
  const settledOver = (bridge: string): number => figures.find((f) => f.bridge === bridge)?.settled ?? 0
  const bridges = isObserved
    ? [...observedBridges, ...priorBridges(() => 0).filter((prior) => !figures.some((f) => f.bridge === prior.bridge))]
    : priorBridges(settledOver)

  let optimalRoute: CorridorIntelligencePro['optimalRoute']
  if (isObserved) {
    const bandSettled = sum(figures, (f) => f.band?.settled ?? 0)
    const useBand = amount !== null && bandSettled >= MIN_SAMPLE_SIZE
    const candidates: Candidate[] = figures.map((f) =>
      useBand && f.band !== null
        ? {
            bridge: f.bridge,
            settled: f.band.settled,
            delivered: f.band.delivered,
            settledSecP50: f.band.settledSecP50,
            slippageBpsP50: f.band.slippageBpsP50,
          }
        : {
            bridge: f.bridge,
            settled: f.settled,
            delivered: f.delivered,
            settledSecP50: f.settledSec?.p50 ?? null,
            slippageBpsP50: f.slippageBps?.p50 ?? null,
          },
    )
    const ranking = `most reliable, then fastest median settlement, then least median slippage, among bridges with at least ${MIN_BRIDGE_SAMPLE_SIZE} settled transfers`
    optimalRoute = {
      bridge: best(candidates)?.bridge ?? null,
      basis: 'observed',
      scope: useBand ? 'amount_band' : 'corridor',
      amountBandUsd: amount === null ? null : { min: amount.band.minUsd, max: amount.band.maxUsd },
      sampleSize: useBand ? bandSettled : settled,
      reason: useBand
        ? `Transfers of ${bandText(amount.band)}: ${ranking}.`
        : amount !== null
          ? `Only ${bandSettled} settled transfers of ${bandText(amount.band)} (${MIN_SAMPLE_SIZE} needed), so ranked over the whole corridor: ${ranking}.`
          : `Over the whole corridor: ${ranking}.`,
    }
  } else {
    const fastest = priors.bridges[0]
    optimalRoute = {
      bridge: fastest?.bridge ?? (priors.hasSameChainRoute ? NO_BRIDGE : null),
      basis: 'published_priors',
      scope: 'corridor',
      amountBandUsd: amount === null ? null : { min: amount.band.minUsd, max: amount.band.maxUsd },
      sampleSize: settled,
      reason:
        fastest !== undefined
          ? 'Fastest published median settlement time; there are too few observations to rank by what happened.'
          : priors.hasSameChainRoute
            ? 'A same-chain swap: no bridge joins the two sides.'
            : `No catalogued bridge joins ${pair.from.code} and ${pair.to.code}.`,
    }
  }

  if (isObserved)
    notes.push(
      `Figures from ${settled} settled transfers between ${parameters.window.since.toISOString()} and ${parameters.window.until.toISOString()}.`,
    )
  else
    notes.push(
      `Only ${settled} settled transfers in this corridor over the window (${MIN_SAMPLE_SIZE} needed): figures are the bridges' published settlement-time priors, as each bridge states them, not measurements, and reliability is unknown.`,
    )
  if (amount !== null && pair.from.kind === 'chain')
    notes.push(
      `amount was read as USD because ${pair.from.code} is a chain; use a currency code as the source side (for example EUR-${pair.to.code}) to give it in that currency.`,
    )

  return {
    pair: pair.code,
    from: pair.from,
    to: pair.to,
    tier: 'pro',
    amount: amount?.text ?? null,
    basis,
    sampleSize: settled,
    minSampleSize: MIN_SAMPLE_SIZE,
    recommendedBridge: optimalRoute.bridge,
    reliabilityBand: isObserved ? reliabilityBand(delivered, settled) : 'unknown',
    asOf: parameters.now.toISOString(),
    notes,
    window: { since: parameters.window.since.toISOString(), until: parameters.window.until.toISOString() },
    outcomes: {
      delivered,
      refunded: sum(figures, (f) => f.refunded),
      failed: sum(figures, (f) => f.failed),
      pending: sum(figures, (f) => f.pending),
      notFound: sum(figures, (f) => f.notFound),
    },
    bridges,
    optimalRoute,
    failurePatterns: failurePatterns(parameters.failures, observations),
  }
}
