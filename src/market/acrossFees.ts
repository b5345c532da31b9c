import { Agent, type Dispatcher } from 'undici'
import * as z from 'zod'
import { ACROSS_FILL_WINDOW_SEC, ceilDiv, E18 } from '../engine/index.ts'

/** Across's public API (docs.across.to); `/suggested-fees` is appended. */
export const ACROSS_API_URL = 'https://app.across.to/api'

/** What one `/suggested-fees` request asks: a deposit of `amount` atomic units of `inputToken`. */
export type SuggestedFeesQuery = {
  inputToken: string
  outputToken: string
  originChainId: number
  destinationChainId: number
  amount: bigint
  /** The two tokens have different decimals (USDC on BNB Chain has 18): Across must be told it expects that. */
  isUnmatchedDecimals?: boolean
}

/** A fee part of the answer: `pct` of the amount, 1e18-scaled, and `total` in the input token's atomic units. */
export type FeePart = { pct: bigint; total: bigint }

/** As much of Across's `/suggested-fees` answer as the market reads, as exact integers. */
export type SuggestedFees = {
  totalRelayFee: FeePart
  relayerCapitalFee: FeePart
  relayerGasFee: FeePart
  lpFee: FeePart
  isAmountTooLow: boolean
  /**
   * The least and most one deposit may carry, and the most its relayers can fill at once (`maxDepositInstant`: their
   * balances on the destination; a larger deposit waits for a relayer to rebalance or for a slow fill), in the input
   * token's atomic units.
   */
  limits: { minDeposit: bigint; maxDeposit: bigint; maxDepositInstant: bigint }
  /**
   * Across's estimate of the fill for this amount (`estimatedFillTimeSec`: its 75th percentile of past fills on the
   * route at that size, or its rebalance time above `maxDepositInstant`), rounded up to a whole second, at least 1.
   */
  estimatedFillTimeSec: number
}

/** The API could not be asked (transport error, timeout, 429, 5xx) within the bounded retries, or answered nonsense. */
export class AcrossApiError extends Error {
  override name = 'AcrossApiError'
  /** True when Across could not be reached or was busy (transport, timeout, 429, 5xx through every attempt): the lane's answer is unknown, not changed. */
  readonly isTransient: boolean
  constructor(message: string, options: { isTransient?: boolean } = {}) {
    super(message)
    this.isTransient = options.isTransient ?? false
  }
}

export type AcrossFeesClientParameters = {
  /** Default ACROSS_API_URL. */
  url?: string
  /** Default: an undici Agent of its own, keep-alive, with the timeouts below, closed by close(). */
  dispatcher?: Dispatcher
  /**
   * Per attempt, from when it is sent to the answer's last byte: a deadline over the whole answer, not only each gap
   * between its parts (undici's own timeouts, also set to it, would let a body that trickles in run for minutes).
   * Default 10 000.
   */
  timeoutMs?: number
  /** Attempts of one request before it fails, on a transport error, a timeout, 429 or 5xx. Default 3. */
  attempts?: number
  /** The wait after a failed attempt, times the attempt's number (backoff). Default 1 000. */
  retryDelayMs?: number
  /**
   * The most requests a second this client sends steadily, however many lanes a refresh reads: they leave evenly
   * spaced, so a refresh never bursts the public API. Default 5.
   */
  maxRequestsPerSecond?: number
  /**
   * The most requests a second for a request marked `isWarming`: the first read after start of a lane that has no
   * usable figures, so its routes are served sooner. Across does not publish its rate limit; this stays a short,
   * bounded burst (one pass of the lanes without figures, at most two requests each plus retries). Default 10; never
   * below the steady rate.
   */
  warmingRequestsPerSecond?: number
  /** Tests: the waits between requests and attempts, and the clock the spacing is kept by. */
  sleep?: (ms: number) => Promise<void>
  now?: () => number
}

export type AcrossFeesClient = {
  /**
   * One `/suggested-fees` answer (retried within `attempts`); throws AcrossApiError when it cannot be had. With
   * `isWarming`, its requests are spaced at the warming rate instead of the steady one.
   */
  /** `signal`: aborted, no further request leaves and the one under way is cut (AcrossApiError, transient). */
  suggestedFees(query: SuggestedFeesQuery, options?: { isWarming?: boolean; signal?: AbortSignal }): Promise<SuggestedFees>
  /** The rates the requests are spaced at, a second: what an estimate of when a lane is read goes by. */
  requestsPerSecond: { steady: number; warming: number }
  /**
   * Closes its keep-alive connections once the requests under way have ended (a `dispatcher` given is the caller's to
   * close); a request after it opens new ones.
   */
  close(): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 10_000
const DEFAULT_ATTEMPTS = 3
const DEFAULT_RETRY_DELAY_MS = 1_000
const DEFAULT_MAX_REQUESTS_PER_SECOND = 5
const DEFAULT_WARMING_REQUESTS_PER_SECOND = 10
/**
 * The slowest fill estimate that is taken as one, in seconds: two hours. Across estimates seconds, or its rebalance
 * time (900 s; 1,800 s to Polygon). A lane's p95 is three times its estimate (ACROSS_P95_FILL_MULTIPLE), and our
 * deposits are refunded after their 6 h fill window (ACROSS_FILL_WINDOW_SEC), so a slower estimate would price a route
 * whose promised p95 runs past its refund: it is not a lane to sell (an 8 h estimate was taken). Bounded, the p95 and
 * the deadlines built on it also stay whole seconds (1e308 made the p95 Infinity, and the destination deadline threw).
 */
export const ACROSS_MAX_FILL_SEC = ACROSS_FILL_WINDOW_SEC / 3
/** A body larger than this is not one lane's fees. */
const MAX_BODY_BYTES = 200_000

/** An exact non-negative integer: a string of digits, or a JSON number that is a safe integer. */
const ExactInteger = z.union([
  z.string().regex(/^[0-9]+$/, 'must be a non-negative integer string'),
  z.number().int().nonnegative().refine(Number.isSafeInteger, 'must be an exact integer'),
])
const FeePartAnswer = z.object({ pct: ExactInteger, total: ExactInteger })
const SuggestedFeesAnswer = z.object({
  totalRelayFee: FeePartAnswer,
  relayerCapitalFee: FeePartAnswer,
  relayerGasFee: FeePartAnswer,
  lpFee: FeePartAnswer,
  isAmountTooLow: z.boolean(),
  limits: z.object({ minDeposit: ExactInteger, maxDeposit: ExactInteger, maxDepositInstant: ExactInteger }),
  // A number in Across's API and SDK types; some integrations pass it on as a string. Across's timings may have a
  // fraction of a second (rounded up below).
  estimatedFillTimeSec: z
    .union([z.number(), z.string().regex(/^[0-9]+(\.[0-9]+)?$/, 'must be a non-negative number of seconds')])
    .transform(Number)
    .pipe(
      z
        .number()
        .nonnegative('must not be negative')
        .max(
          ACROSS_MAX_FILL_SEC,
          `must be at most ${ACROSS_MAX_FILL_SEC} s (a p95 of three times it must end within the ${ACROSS_FILL_WINDOW_SEC} s fill window)`,
        ),
    ),
})

/** A client of Across's `/suggested-fees` (or a service answering in its shape, such as a local stand-in). */
export function createAcrossFeesClient(parameters: AcrossFeesClientParameters = {}): AcrossFeesClient {
  const baseUrl = new URL((parameters.url ?? ACROSS_API_URL).replace(/\/+$/, ''))
  const timeoutMs = parameters.timeoutMs ?? DEFAULT_TIMEOUT_MS
  /** Its own pool, opened at the first request after start or close(), so a source stopped and started again reads on. */
  let ownAgent: Agent | undefined
  const dispatcherOf = (): Dispatcher =>
    parameters.dispatcher ??
    (ownAgent ??= new Agent({
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 30_000,
    }))
  const attempts = parameters.attempts ?? DEFAULT_ATTEMPTS
  const retryDelayMs = parameters.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS
  const sleep = parameters.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const now = parameters.now ?? Date.now
  const steady = parameters.maxRequestsPerSecond ?? DEFAULT_MAX_REQUESTS_PER_SECOND
  const requestsPerSecond = {
    steady,
    warming: Math.max(steady, parameters.warmingRequestsPerSecond ?? DEFAULT_WARMING_REQUESTS_PER_SECOND),
  }
  /** When the next request may leave: each request (a retry too) takes the next slot, so they go out evenly spaced. */
  let nextSlotMs = 0

  /** Takes the next slot; a warming request's slot is followed by a shorter gap than a steady one's. */
  async function waitForSlot(isWarming: boolean): Promise<void> {
    const at = Math.max(now(), nextSlotMs)
    nextSlotMs = at + 1000 / (isWarming ? requestsPerSecond.warming : requestsPerSecond.steady)
    const waitMs = at - now()
    if (waitMs > 0) await sleep(waitMs)
  }

  function pathOf(query: SuggestedFeesQuery): string {
    const search = new URLSearchParams({
      inputToken: query.inputToken,
      outputToken: query.outputToken,
      originChainId: String(query.originChainId),
      destinationChainId: String(query.destinationChainId),
      amount: query.amount.toString(),
    })
    if (query.isUnmatchedDecimals === true) search.set('allowUnmatchedDecimals', 'true')
    return `${baseUrl.pathname.replace(/\/$/, '')}/suggested-fees?${search}`
  }

  /** One attempt: the answer, 'retry' for what may pass (transport, timeout, 429, 5xx), or an error that will not. */
  async function once(query: SuggestedFeesQuery, isWarming: boolean, signal?: AbortSignal): Promise<SuggestedFees | { retry: string }> {
    await waitForSlot(isWarming)
    if (signal?.aborted === true) throw new AcrossApiError('stopped before the request was sent', { isTransient: true })
    // The attempt is cut at its deadline or by the caller's signal, whichever comes first; undici rejects the request,
    // or fails the body being read, with the reason.
    const cut = new AbortController()
    const onStop = (): void => cut.abort(signal?.reason)
    signal?.addEventListener('abort', onStop, { once: true })
    const deadline = setTimeout(() => {
      const timeout = new Error(`no whole answer within ${timeoutMs} ms`)
      timeout.name = 'TimeoutError'
      cut.abort(timeout)
    }, timeoutMs)
    let statusCode: number
    let text: string | undefined
    try {
      const response = await dispatcherOf().request({
        origin: baseUrl.origin,
        path: pathOf(query),
        method: 'GET',
        headers: { accept: 'application/json' },
        signal: cut.signal,
      })
      statusCode = response.statusCode
      text = await readBounded(response.body)
    } catch (error) {
      return { retry: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }
    } finally {
      clearTimeout(deadline)
      signal?.removeEventListener('abort', onStop)
    }
    if (statusCode === 429 || statusCode >= 500) return { retry: `HTTP ${statusCode}` }
    // Too large to be one lane's fees: what Across (or what answers in its place) sends, not a failure to reach it, so
    // asking again would get the same.
    if (text === undefined) throw new AcrossApiError(`Across's answer exceeds ${MAX_BODY_BYTES} bytes`)
    if (statusCode !== 200) throw new AcrossApiError(`Across answered HTTP ${statusCode}: ${text.slice(0, 300)}`)
    return suggestedFeesOf(text)
  }

  return {
    async suggestedFees(query, options = {}) {
      for (let attempt = 1; ; attempt++) {
        const answer = await once(query, options.isWarming === true, options.signal)
        if (!('retry' in answer)) return answer
        if (attempt >= attempts)
          throw new AcrossApiError(`Across at ${baseUrl.origin} could not be asked (${attempts} attempts; last: ${answer.retry})`, {
            isTransient: true,
          })
        await sleep(retryDelayMs * attempt)
        if (options.signal?.aborted === true) throw new AcrossApiError('stopped before a retry', { isTransient: true })
      }
    },
    requestsPerSecond,
    async close() {
      const agent = ownAgent
      ownAgent = undefined
      await agent?.close()
    },
  }
}

function suggestedFeesOf(text: string): SuggestedFees {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new AcrossApiError("Across's answer is not JSON")
  }
  const parsed = SuggestedFeesAnswer.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new AcrossApiError(`Across's answer is not suggested fees: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`)
  }
  const part = (value: { pct: string | number; total: string | number }): FeePart => ({
    pct: BigInt(value.pct),
    total: BigInt(value.total),
  })
  const { data } = parsed
  return {
    totalRelayFee: part(data.totalRelayFee),
    relayerCapitalFee: part(data.relayerCapitalFee),
    relayerGasFee: part(data.relayerGasFee),
    lpFee: part(data.lpFee),
    isAmountTooLow: data.isAmountTooLow,
    limits: {
      minDeposit: BigInt(data.limits.minDeposit),
      maxDeposit: BigInt(data.limits.maxDeposit),
      maxDepositInstant: BigInt(data.limits.maxDepositInstant),
    },
    estimatedFillTimeSec: wholeFillSec(data.estimatedFillTimeSec),
  }
}

/** Seconds rounded up, at least 1: a duration never promises a fill sooner than Across says. */
const wholeFillSec = (seconds: number): number => Math.max(1, Math.ceil(seconds))

/** The body as text, or undefined once it passes MAX_BODY_BYTES (the rest is not read: the stream is destroyed). */
async function readBounded(body: AsyncIterable<Buffer | Uint8Array | string>): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buffer = Buffer.from(chunk)
    size += buffer.length
    if (size > MAX_BODY_BYTES) return undefined
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** One size a lane was read at, and what Across said. */
export type SizedFees = { amount: bigint; fees: SuggestedFees }

/**
 * The lane's fee model, from its reads: `amount × feePpm / 10^6` (rounded up) plus `fixedFee`, both in the input
 * token's atomic units, never less than what Across asked at any size read; the amounts it may carry (never above
 * what relayers fill at once, `instantMax`); and `fillSec`, the slowest fill Across estimated for a size it fills at
 * once, in whole seconds.
 */
export type LaneFeeModel = {
  feePpm: bigint
  fixedFee: bigint
  minAmount: bigint
  maxAmount: bigint
  /** The least `maxDepositInstant` read. */
  instantMax: bigint
  fillSec: number
}

const PPM = 1_000_000n

/**
 * Derives a lane's fee model from Across's answers at several sizes, or says why there is none.
 *
 * Across's relayer capital fee and LP fee are shares of the amount that do not fall as the amount grows (the capital
 * fee rises linearly from its lower bound to its upper bound up to a cutoff, then more slowly; the LP fee follows the
 * pool's utilisation after the deposit), and its relayer gas fee is what one fill costs, whatever the amount. So:
 * the flat fee is the largest gas fee read; the proportional fee is, over every size read, the largest share of the
 * rest, rounded up to a whole ppm. Whether `totalRelayFee` includes the LP fee (it does in Across's later API
 * versions, not in the first), the fee the model needs at a size is the larger of it and the sum of the parts.
 * Within the sizes read the model is then never below Across's fee; beyond the largest it is not known, so the lane
 * carries at most that size. Sizes Across says are too low are not taken, nor anything below its `minDeposit`.
 *
 * Nor anything above `maxDepositInstant`: a larger deposit is filled only once a relayer has rebalanced (Across
 * estimates 15 to 30 minutes) or by a slow fill after Across's bundle challenge window (hours, and only if requested),
 * else refunded at the fill deadline, so no duration can be promised for it. The fill time is the largest
 * `estimatedFillTimeSec` of the sizes read within their `maxDepositInstant` (all of them when none is). Across looks
 * its estimate up by size band; it is taken not to fall as the size grows, so the larger of the smallest and the
 * largest size read stands for the sizes between.
 */
export function laneFeeModel(reads: readonly SizedFees[]): LaneFeeModel | { error: string } {
  const usable = reads.filter((read) => !read.fees.isAmountTooLow && read.amount > 0n)
  if (usable.length === 0) return { error: 'Across says every amount read is too low for its fees' }
  let feePpm = 0n
  let fixedFee = 0n
  for (const { amount, fees } of usable) {
    const gas = fees.relayerGasFee.total
    const parts = fees.relayerCapitalFee.total + gas + fees.lpFee.total
    const needed = fees.totalRelayFee.total > parts ? fees.totalRelayFee.total : parts
    const proportional = needed > gas ? needed - gas : 0n
    // The same from the shares Across states, in case its totals were rounded down.
    const sharePct = fees.relayerCapitalFee.pct + fees.lpFee.pct
    const totalSharePct = fees.totalRelayFee.pct > fees.relayerGasFee.pct ? fees.totalRelayFee.pct - fees.relayerGasFee.pct : 0n
    const pct = sharePct > totalSharePct ? sharePct : totalSharePct
    const ppm = [ceilDiv(proportional * PPM, amount), ceilDiv(pct * PPM, E18)].reduce((a, b) => (a > b ? a : b))
    if (ppm > feePpm) feePpm = ppm
    if (gas > fixedFee) fixedFee = gas
  }
  let minAmount = 0n
  let maxAmount: bigint | undefined
  let instantMax: bigint | undefined
  for (const { amount, fees } of reads) {
    if (fees.limits.minDeposit > minAmount) minAmount = fees.limits.minDeposit
    if (maxAmount === undefined || fees.limits.maxDeposit < maxAmount) maxAmount = fees.limits.maxDeposit
    if (instantMax === undefined || fees.limits.maxDepositInstant < instantMax) instantMax = fees.limits.maxDepositInstant
    if (fees.isAmountTooLow && amount + 1n > minAmount) minAmount = amount + 1n
  }
  const largest = usable.map((read) => read.amount).reduce((a, b) => (a > b ? a : b))
  if (maxAmount === undefined || largest < maxAmount) maxAmount = largest
  instantMax ??= 0n
  const isInstantBound = instantMax < maxAmount
  if (isInstantBound) maxAmount = instantMax
  const instant = usable.filter(({ amount, fees }) => amount <= fees.limits.maxDepositInstant)
  const fillSec = Math.max(...(instant.length > 0 ? instant : usable).map(({ fees }) => fees.estimatedFillTimeSec))
  if (feePpm >= PPM) return { error: `Across asks ${feePpm} ppm of the amount` }
  if (minAmount > maxAmount)
    return {
      error: isInstantBound
        ? `no amount fits: Across takes at least ${minAmount}, and its relayers can fill at most ${maxAmount} at once (maxDepositInstant)`
        : `no amount fits: Across takes at least ${minAmount} and at most ${maxAmount}`,
    }
  return { feePpm, fixedFee, minAmount, maxAmount, instantMax, fillSec }
}
