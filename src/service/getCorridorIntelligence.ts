import type { ApiKeyClaims } from '../auth/apiKey.ts'
import { hashClientIp } from '../auth/clientIpHash.ts'
import { E18, formatAtomic, maxWholeTokens, parseUnitsExact } from '../engine/index.ts'
import { corridorAnswer } from '../intel/corridorAnswer.ts'
import { type CorridorPair, PAIR_CODES, parsePairCode } from '../intel/parsePairCode.ts'
import { publishedPriors } from '../intel/publishedPriors.ts'
import { type SizeBand, sizeBand } from '../intel/sizeBand.ts'
import { usagePeriod } from '../intel/usagePeriod.ts'
import { intelIpSubject, intelKeySubject } from '../intel/usageSubjects.ts'
import type { CorridorIntelligence, CorridorIntelligenceFree, CorridorIntelligencePro } from '../schemas/intelligence.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/** Spec 8: free corridor-intelligence calls per IP per calendar month (UTC). */
export const FREE_CALLS_PER_MONTH = 100
/** The free tier's monthly quota as an IETF RateLimit policy: its answers and its 429 name it. */
export const FREE_QUOTA_POLICY = 'intel-free'
/** Observations older than this are not aggregated: bridges change, and so do their queues. */
const OBSERVATION_WINDOW_DAYS = 90

const DAY_MS = 24 * 60 * 60 * 1000
/** A query amount: a plain decimal, no more fraction digits than 18-decimal fixed point holds. */
/** A size as a decimal: digits, and a fraction of digits if any. Bounds are checked one by one, to say which. */
const DECIMAL_SHAPE = /^[0-9]+(\.[0-9]+)?$/
/** The most fraction digits any token has. */
const MAX_FRACTION_DIGITS = 18
/** Whole digits past this are far above any transfer's size (maxWholeTokens), so only this many are parsed. */
const MAX_WHOLE_DIGITS = 30
const PRO_NEEDED =
  'Per-bridge p50/p95 settlement time and slippage, the optimal route for the amount and failure patterns need a pro key sent as Authorization: Bearer se_…; an operator issues pro keys.'

export type GetCorridorIntelligenceParameters = {
  pair: string
  amount: string | undefined
  /** The caller's IP: the free tier counts against it (as a keyed hash). */
  ip: string
  /** The verified key sent as `Authorization: Bearer`, if any: the only place intelligence reads a key from. */
  claims: ApiKeyClaims | undefined
  /** Whether a key came in x-swapeazi-key instead: it is not read here, and the free answer says so. */
  hasKeyHeader: boolean
}

export type GetCorridorIntelligenceReturnType = {
  body: CorridorIntelligence
  /** The free tier's monthly quota after this call; absent on the pro tier. */
  quota?: { limit: number; remaining: number; resetSec: number; windowSec: number }
}

function parseRequest(
  deps: Pick<ServiceDeps, 'catalogue'>,
  pairText: string,
  amountText: string | undefined,
): { pair: CorridorPair; amount: { text: string; band: SizeBand } | null } {
  const pair = parsePairCode(pairText)
  const accepted = { chains: [...PAIR_CODES.chains], currencies: [...PAIR_CODES.currencies] }
  if (!pair.ok)
    throw new ServiceError(
      'invalid_request',
      `${pair.message}. A pair is <A>-<B>, source first; each side a chain code (${accepted.chains.join(', ')}) or a currency code (${accepted.currencies.join(', ')}).`,
      { errors: [{ field: 'pair', message: pair.message }], acceptedCodes: accepted },
    )
  if (amountText === undefined) return { pair: pair.pair, amount: null }
  const invalidAmount = (message: string, detail: string): ServiceError =>
    new ServiceError('invalid_request', `amount ${detail}; got "${amountText.slice(0, 40)}". Leave it out for figures over all sizes.`, {
      errors: [{ field: 'amount', message }],
    })
  if (!DECIMAL_SHAPE.test(amountText))
    throw invalidAmount(
      'must be a positive decimal string',
      'must be a positive decimal such as 1000 or 250.50 (no sign, exponent or thousands separator)',
    )
  const [whole = '', fraction = ''] = amountText.split('.')
  if (fraction.length > MAX_FRACTION_DIGITS)
    throw invalidAmount(
      `has more than ${MAX_FRACTION_DIGITS} fraction digits`,
      `has ${fraction.length} fraction digits, and no token has more than ${MAX_FRACTION_DIGITS}: send the transfer's size with at most ${MAX_FRACTION_DIGITS} ("2500" or "2500.75")`,
    )
  const units = parseUnitsExact(`${whole.replace(/^0+(?=.)/, '').slice(0, MAX_WHOLE_DIGITS + 1)}.${fraction || '0'}`, MAX_FRACTION_DIGITS, {
    strict: false,
  })
  if (!units.ok || units.value === 0n) throw invalidAmount('must be greater than 0', 'must be greater than 0')
  const { from } = pair.pair
  // No transfer is larger than what one amount may carry (docs/money.md): a larger size is a mistyped amount.
  const currency = from.kind === 'currency' ? from.code : 'USD'
  const maxWhole = maxWholeTokens(deps.catalogue, { currency })
  if (units.value > maxWhole * E18)
    throw new ServiceError(
      'amount_out_of_range',
      `amount ${amountText.slice(0, 40)} ${currency} is larger than any transfer can be: one amount carries at most ${maxWhole} ${currency} worth of a token. Send the transfer's size in whole ${currency} ("2500"), or leave it out for figures over all sizes.`,
      { field: 'amount', limit: 'token_supply', maxAmount: maxWhole.toString() },
    )
  const usdE18 = from.kind === 'currency' ? (units.value * deps.catalogue.fxUsdE18[from.code]) / E18 : units.value
  // Echoed as a number is written, as the pair is canonical: `00001` and `2500.50` answer `1` and `2500.5`.
  return { pair: pair.pair, amount: { text: formatAtomic(units.value, MAX_FRACTION_DIGITS), band: sizeBand(usdE18) } }
}

/** The free answer: the coarse signal of the pro one (spec 4 rule 8). */
function freeAnswer(pro: CorridorIntelligencePro, notes: readonly string[]): CorridorIntelligenceFree {
  return {
    pair: pro.pair,
    from: pro.from,
    to: pro.to,
    tier: 'free',
    amount: pro.amount,
    basis: pro.basis,
    sampleSize: pro.sampleSize,
    minSampleSize: pro.minSampleSize,
    recommendedBridge: pro.recommendedBridge,
    reliabilityBand: pro.reliabilityBand,
    asOf: pro.asOf,
    notes: [...pro.notes, ...notes],
  }
}

/**
 * GET /api/v1/intelligence/corridor/{pair} (DESIGN 7.17): the free tier (no key, or a free key) is counted against
 * the caller's IP, 100 calls a calendar month, then 429 until the month ends; a pro key gets per-bridge figures and
 * each call is metered against the key for the month. Figures come from the store's observations, or the published
 * priors when the corridor has too few.
 */
export async function getCorridorIntelligence(
  deps: Pick<ServiceDeps, 'catalogue' | 'store' | 'clock' | 'keySecret'>,
  parameters: GetCorridorIntelligenceParameters,
): Promise<GetCorridorIntelligenceReturnType> {
  const { claims } = parameters
  const { pair, amount } = parseRequest(deps, parameters.pair, parameters.amount)
  const nowMs = deps.clock()
  const month = usagePeriod(nowMs)
  const isPro = claims?.tier === 'pro'

  let quota: GetCorridorIntelligenceReturnType['quota']
  if (!isPro) {
    const calls = await deps.store.intel.countCall(
      intelIpSubject(hashClientIp(deps.keySecret, parameters.ip)),
      month.period,
      FREE_CALLS_PER_MONTH,
    )
    if (calls === undefined)
      throw new ServiceError(
        'rate_limited',
        `The free tier answers ${FREE_CALLS_PER_MONTH} corridor-intelligence calls per IP per calendar month (UTC), and this IP has used them. Retry after ${new Date(month.resetsAtMs).toISOString()} (${month.secondsToReset} s), or send a pro key as Authorization: Bearer se_….`,
        {
          retryAfterSec: month.secondsToReset,
          limit: FREE_CALLS_PER_MONTH,
          policy: FREE_QUOTA_POLICY,
          windowSec: month.lengthSec,
          resetsAt: new Date(month.resetsAtMs).toISOString(),
        },
      )
    quota = {
      limit: FREE_CALLS_PER_MONTH,
      remaining: FREE_CALLS_PER_MONTH - calls,
      resetSec: month.secondsToReset,
      windowSec: month.lengthSec,
    }
  }

  const window = { since: new Date(nowMs - OBSERVATION_WINDOW_DAYS * DAY_MS), until: new Date(nowMs) }
  const query = { from: pair.from, to: pair.to, since: window.since, until: window.until, band: amount?.band ?? null }
  const [figures, failures] = await Promise.all([
    deps.store.intel.corridorBridges(query),
    isPro ? deps.store.intel.corridorFailures(query) : Promise.resolve([]),
  ])
  const pro = corridorAnswer({
    pair,
    amount,
    figures,
    failures,
    priors: publishedPriors(deps.catalogue, pair),
    window,
    now: new Date(nowMs),
  })

  if (isPro) {
    // Metered once answered: a call that failed on our side is not billed.
    await deps.store.intel.countCall(intelKeySubject(claims.id), month.period)
    return { body: pro }
  }
  const notes =
    claims !== undefined
      ? [
          `This key (${claims.id}) is free tier: this is the free answer, counted against this IP's ${FREE_CALLS_PER_MONTH} monthly calls. ${PRO_NEEDED}`,
        ]
      : parameters.hasKeyHeader
        ? [
            `Corridor intelligence reads keys from Authorization: Bearer, not x-swapeazi-key: this is the free answer, counted against this IP. ${PRO_NEEDED}`,
          ]
        : [PRO_NEEDED]
  return { body: freeAnswer(pro, notes), ...(quota === undefined ? {} : { quota }) }
}
