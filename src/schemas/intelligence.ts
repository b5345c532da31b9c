import * as z from 'zod'
import { ChainCode, type Currency, DECIMAL_PATTERN } from './catalogue.ts'

/**
 * Transfer outcomes in LI.FI's `/v1/status` taxonomy (`@lifi/types`, routing.md 1.5), so observations from LI.FI or
 * any tracker speaking it import as they are. LI.FI's INVALID (the hash is not a transfer) is no observation.
 */
const OBSERVATION_STATUSES = ['DONE', 'FAILED', 'PENDING', 'NOT_FOUND'] as const
export const ObservationStatus = z.enum(OBSERVATION_STATUSES)
export type ObservationStatus = z.infer<typeof ObservationStatus>

/** The substatuses each status allows; NOT_FOUND has none. */
const SUBSTATUSES = {
  DONE: ['COMPLETED', 'PARTIAL', 'REFUNDED'],
  FAILED: ['INSUFFICIENT_ALLOWANCE', 'INSUFFICIENT_BALANCE', 'OUT_OF_GAS', 'EXPIRED', 'SLIPPAGE_EXCEEDED', 'UNKNOWN_FAILED_ERROR'],
  PENDING: [
    'WAIT_SOURCE_CONFIRMATIONS',
    'WAIT_DESTINATION_TRANSACTION',
    'BRIDGE_NOT_AVAILABLE',
    'CHAIN_NOT_AVAILABLE',
    'NOT_PROCESSABLE_REFUND_NEEDED',
    'REFUND_IN_PROGRESS',
    'UNKNOWN_ERROR',
  ],
  NOT_FOUND: [],
} as const satisfies Record<ObservationStatus, readonly string[]>

/** Whole seconds; a week bounds any transfer worth recording (CCTP Standard from Linea is hours, not days). */
const Seconds = z
  .number()
  .int()
  .min(0)
  .max(7 * 24 * 3600)

const OUTCOME_FIELDS = {
  status: ObservationStatus,
  substatus: z.string().nullish().describe('LI.FI substatus for the status; none for NOT_FOUND'),
  settledDurationSec: Seconds.nullish().describe(
    'Seconds from the source transaction to funds on the destination; required when delivered',
  ),
  realisedSlippageBps: z
    .number()
    .int()
    .min(-10_000)
    .max(10_000)
    .nullish()
    .describe('(quoted output − received) / quoted, in basis points: positive is worse than quoted'),
  failureReason: z.string().max(500).nullish().describe('Free text from the bridge or tracker, at most 500 characters'),
}

type OutcomeFields = { status: ObservationStatus; substatus?: string | null | undefined; settledDurationSec?: number | null | undefined }

/** The substatus must belong to the status, and a delivered transfer must say how long it took. */
function checkOutcome(outcome: OutcomeFields, ctx: z.RefinementCtx): void {
  const allowed: readonly string[] = SUBSTATUSES[outcome.status]
  const substatus = outcome.substatus ?? null
  if (allowed.length === 0 && substatus !== null)
    ctx.addIssue({ code: 'custom', path: ['substatus'], message: `must be absent when status is ${outcome.status}` })
  if (allowed.length > 0 && (substatus === null || !allowed.includes(substatus)))
    ctx.addIssue({ code: 'custom', path: ['substatus'], message: `must be one of ${allowed.join(', ')} when status is ${outcome.status}` })
  if (outcome.status === 'DONE' && substatus !== 'REFUNDED' && outcome.settledDurationSec == null)
    ctx.addIssue({
      code: 'custom',
      path: ['settledDurationSec'],
      message: 'is required when the transfer was delivered (DONE, not REFUNDED)',
    })
}

/** How one transfer ended: what a tracker reports when it completes a swap, and the tail of every imported line. */
export const SwapOutcome = z.strictObject(OUTCOME_FIELDS).superRefine(checkOutcome)
export type SwapOutcome = z.infer<typeof SwapOutcome>

/** One line of `swapeazi intel import FILE.jsonl`: a transfer someone observed, and how it ended. */
export const ObservationLine = z
  .strictObject({
    id: z.string().min(1).max(128).describe('Unique per transfer (source tx hash, LI.FI transactionId); a known id is skipped'),
    observedAt: z.iso.datetime({ offset: true }).describe('When the transfer started (ISO 8601)'),
    fromChain: ChainCode,
    toChain: ChainCode,
    fromToken: z.string().min(1).max(32).describe('Symbol listed on fromChain, case-insensitive'),
    toToken: z.string().min(1).max(32).describe('Symbol listed on toChain, case-insensitive'),
    bridge: z.string().min(1).max(64).describe('Bridge as quotes name it (across, cctp-v2-fast, ...), or none for a same-chain swap'),
    amount: z
      .string()
      .max(80)
      .regex(DECIMAL_PATTERN, 'must be a decimal string such as "1500.25"')
      .describe('Amount of fromToken sent, in whole tokens'),
    quotedDurationSec: Seconds.nullish(),
    ...OUTCOME_FIELDS,
  })
  .superRefine(checkOutcome)
export type ObservationLine = z.infer<typeof ObservationLine>

const PairSide = z.object({ code: z.string(), kind: z.enum(['chain', 'currency']) })

const Basis = z
  .enum(['observed', 'published_priors'])
  .describe("observed: computed over recorded transfers; published_priors: too few of them, so the bridges' published settlement times")

const IntelligenceBase = z.object({
  pair: z.string().describe('Canonical pair code, source side first (USD-BAS)'),
  from: PairSide,
  to: PairSide,
  amount: z.string().nullable().describe('The amount asked about: in the source currency for a currency code, else USD'),
  basis: Basis,
  sampleSize: z.number().int().describe('Settled (DONE or FAILED) transfers in the corridor over the window'),
  minSampleSize: z.number().int().describe('Settled transfers needed before figures are observed rather than published priors'),
  recommendedBridge: z
    .string()
    .nullable()
    .describe('Bridge as quotes name it; "none" for a same-chain swap; null when nothing joins the pair'),
  reliabilityBand: z
    .enum(['high', 'medium', 'low', 'unknown'])
    .describe('Delivered share of settled transfers: high ≥ 98%, medium ≥ 90%, low below'),
  asOf: z.string(),
  notes: z.array(z.string()).describe('What the figures rest on, and what to do for more'),
})

/** GET /api/v1/intelligence/corridor/{pair} without a pro key: the coarse signal (spec 4 rule 8). */
export const CorridorIntelligenceFree = IntelligenceBase.extend({ tier: z.literal('free') }).meta({ id: 'CorridorIntelligenceFree' })
export type CorridorIntelligenceFree = z.infer<typeof CorridorIntelligenceFree>

const Percentiles = z.object({ p50: z.number().int(), p95: z.number().int() })

export const BridgeIntelligence = z
  .object({
    bridge: z.string(),
    basis: Basis,
    sampleSize: z.number().int().describe('Settled transfers over this bridge in the corridor'),
    successRateBps: z.number().int().nullable().describe('Delivered / settled, in basis points, rounded down; null without observations'),
    settlementSec: Percentiles.nullable().describe('Seconds from source transaction to delivery'),
    quotedSecP50: z.number().int().nullable().describe('Median duration the quotes promised, for comparison'),
    slippageBps: Percentiles.nullable().describe('Realised slippage against the quote; positive is worse'),
  })
  .meta({ id: 'BridgeIntelligence' })
export type BridgeIntelligence = z.infer<typeof BridgeIntelligence>

export const FailurePattern = z
  .object({
    status: ObservationStatus,
    substatus: z.string().nullable(),
    count: z.number().int(),
    shareBps: z.number().int().describe('Share of all observations in the window, basis points'),
    bridges: z.array(z.object({ bridge: z.string(), count: z.number().int() })),
    lastSeenAt: z.string(),
    exampleReason: z.string().nullable(),
  })
  .meta({ id: 'FailurePattern' })
export type FailurePattern = z.infer<typeof FailurePattern>

/** The same endpoint with `Authorization: Bearer` and a pro key: per-bridge figures, the best route, failures. */
export const CorridorIntelligencePro = IntelligenceBase.extend({
  tier: z.literal('pro'),
  window: z.object({ since: z.string(), until: z.string() }),
  outcomes: z.object({
    delivered: z.number().int(),
    refunded: z.number().int(),
    failed: z.number().int(),
    pending: z.number().int(),
    notFound: z.number().int(),
  }),
  bridges: z.array(BridgeIntelligence),
  optimalRoute: z.object({
    bridge: z.string().nullable(),
    basis: Basis,
    scope: z.enum(['amount_band', 'corridor']).describe('amount_band: ranked over transfers of about the asked size'),
    amountBandUsd: z.object({ min: z.string(), max: z.string().nullable() }).nullable(),
    sampleSize: z.number().int(),
    reason: z.string(),
  }),
  failurePatterns: z.array(FailurePattern).describe('Transfers that were not delivered, by status and substatus, most frequent first'),
}).meta({ id: 'CorridorIntelligencePro' })
export type CorridorIntelligencePro = z.infer<typeof CorridorIntelligencePro>

export const CorridorIntelligence = z
  .discriminatedUnion('tier', [CorridorIntelligenceFree, CorridorIntelligencePro])
  .meta({ id: 'CorridorIntelligence' })
export type CorridorIntelligence = z.infer<typeof CorridorIntelligence>

/** One side of a corridor: a chain (transfers leaving or reaching it) or a currency (tokens that track it). */
export type PairSide = { kind: 'chain'; code: ChainCode } | { kind: 'currency'; code: Currency }
