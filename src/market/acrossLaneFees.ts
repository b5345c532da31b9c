import type { Logger } from 'pino'
import * as z from 'zod'
import { type Catalogue, ceilDiv, type DurationPrior, E18, formatAtomic, pow10, type Token } from '../engine/index.ts'
import type { ChainCode, LaneFees } from '../schemas/catalogue.ts'
import {
  ACROSS_MAX_FILL_SEC,
  AcrossApiError,
  type AcrossFeesClient,
  type LaneFeeModel,
  laneFeeModel,
  type SizedFees,
  type SuggestedFees,
  type SuggestedFeesQuery,
} from './acrossFees.ts'

/** Each lane is read at this size (USD, at the snapshot's price), and at the most it may carry. */
export const ACROSS_REFERENCE_USD = 1_000n
/**
 * How long after one refresh of every lane began the next begins (at once when one takes longer): start to start, so
 * how long a refresh takes does not lengthen the time between two reads of a lane.
 */
export const ACROSS_REFRESH_MS = 60_000
/** A lane's fees are used for at most this long after they were read (Across asks not to cache them longer). */
export const ACROSS_MAX_AGE_MS = 300_000
/** Lanes read at once; the client spaces the requests themselves. */
const CONCURRENT_LANES = 4
/**
 * A lane's p95 is at least this multiple of Across's fill estimate (itself a 75th percentile): our choice, not
 * Across's figure. routing.md 3.5 cites stress tails of about twice the median for CCTP; three times a p75 leaves room.
 */
export const ACROSS_P95_FILL_MULTIPLE = 3

/** Retries take request slots too: a refresh is taken to send a quarter more requests than its two a lane. */
const RETRY_MARGIN = 1.25
/** The longest an answer is taken to take: with CONCURRENT_LANES in flight, a request then takes a quarter of it. */
const ANSWER_MS = 1_000

/**
 * How long one refresh of `laneCount` lanes takes at most while Across answers (within ANSWER_MS, a quarter of the
 * requests retried), at `requestsPerSecond`: two requests a lane, spaced at that rate or by the answers of the lanes in
 * flight, whichever is slower. Ms, rounded up.
 */
export function acrossRefreshDurationMs(laneCount: number, requestsPerSecond: number): number {
  const requestMs = Math.max(1_000 / requestsPerSecond, ANSWER_MS / CONCURRENT_LANES)
  return Math.ceil(2 * laneCount * RETRY_MARGIN * requestMs)
}

/**
 * The longest a lane goes between two reads while Across answers: refreshes begin `refreshMs` apart (back to back when
 * one takes longer) and read the lanes oldest first, so a lane read at the start of one refresh is read again by the
 * end of the next at the latest. What must stay within ACROSS_MAX_AGE_MS for no lane to age out between reads.
 */
export function acrossLongestReadIntervalMs(laneCount: number, requestsPerSecond: number, refreshMs: number): number {
  const durationMs = acrossRefreshDurationMs(laneCount, requestsPerSecond)
  return Math.max(refreshMs, durationMs) + durationMs
}

const BEING_READ = 'its Across fees are being read, the first read since start'
const EXPECTED_BY = 'expected by'

/**
 * When a lane gap's reason (the market's `gaps.lanes`) says the lane is being read for the first time and is
 * expected by a time still to come, that time (ms); else undefined. What a 503 tells the client to wait for.
 */
export function acrossLaneExpectedByMs(reason: string): number | undefined {
  const prefix = `${BEING_READ}: ${EXPECTED_BY} `
  if (!reason.startsWith(prefix)) return undefined
  const ms = Date.parse(reason.slice(prefix.length))
  return Number.isFinite(ms) ? ms : undefined
}

/** One lane of an Across bridge of the catalogue, and what its reads ask. */
export type AcrossLane = {
  /** `<bridge id>:<SRC>><DST>`, as market gaps and health name lanes. */
  id: string
  bridgeId: string
  from: ChainCode
  to: ChainCode
  token: Token
  query: Omit<SuggestedFeesQuery, 'amount'>
  /** ACROSS_REFERENCE_USD of the input token, in atomic units. */
  referenceAmount: bigint
  /** The bridge's `maxUsd` in atomic units of the input token: no larger size is read. */
  capAmount: bigint
  /** The catalogue's duration prior for the lane's source chain: its p95 is the floor of the lane's. */
  durationPrior: DurationPrior
}

/** Atomic units of `token` worth `usdE18` at its catalogue price, rounded down. */
const atomicForUsd = (token: Token, usdE18: bigint): bigint =>
  token.priceUsdE18 === 0n ? 0n : (usdE18 * pow10(token.decimals)) / token.priceUsdE18

/**
 * Every lane of the catalogue's Across bridges that a deposit can be built on (a lane with an encoding gap is never
 * routed, so it is not read), with its tokens' addresses and chain ids.
 */
export function acrossLanesOf(snapshot: Catalogue): AcrossLane[] {
  const lanes: AcrossLane[] = []
  for (const list of snapshot.lanes.values())
    for (const lane of list) {
      if (lane.bridge.protocol !== 'across' || lane.gap !== undefined) continue
      const origin = snapshot.chains.get(lane.from.chain)
      const destination = snapshot.chains.get(lane.to.chain)
      if (origin === undefined || destination === undefined) continue
      lanes.push({
        id: `${lane.bridge.id}:${lane.from.chain}>${lane.to.chain}`,
        bridgeId: lane.bridge.id,
        from: lane.from.chain,
        to: lane.to.chain,
        token: lane.from,
        query: {
          inputToken: lane.from.address,
          outputToken: lane.to.address,
          originChainId: origin.chainId,
          destinationChainId: destination.chainId,
          ...(lane.from.decimals === lane.to.decimals ? {} : { isUnmatchedDecimals: true }),
        },
        referenceAmount: atomicForUsd(lane.from, ACROSS_REFERENCE_USD * E18),
        capAmount: atomicForUsd(lane.from, lane.bridge.maxUsdE18),
        durationPrior: lane.bridge.durationBySource[lane.from.chain] ?? lane.bridge.durationDefault,
      })
    }
  return lanes
}

/** What the last read of a lane gave: its model and when it was read, or why it failed and when. */
type LaneState = {
  model?: LaneFeeModel
  readAtMs?: number
  /** The model was kept in the store by a process before this one (`restore`), and is not read again yet. */
  isRestored?: boolean
  error?: string
  /** The last read failed only in reaching Across: the model read before it stands until its maximum age. */
  isTransient?: boolean
}

/** One lane's last read as the store keeps it (src/store/createAcrossFeesStore.ts): `figures` is KeptFigures. */
export type KeptLaneRead = { lane: string; apiUrl: string; figures: unknown; readAtMs: number }

/**
 * Where each lane's reads are kept across a restart (the store): written as each lane is read, one upsert per lane
 * read; a lane Across refuses is forgotten; at start, what was read within the maximum age is loaded.
 */
export type AcrossFeesKeeper = {
  save(read: KeptLaneRead): Promise<void>
  forget(lane: string, apiUrl: string, upToMs: number): Promise<void>
  load(apiUrl: string, readSinceMs: number): Promise<KeptLaneRead[]>
}

const KeptInteger = z.string().regex(/^[0-9]+$/)
const KeptPart = z.strictObject({ pct: KeptInteger, total: KeptInteger })
/** What is kept of a lane's read: the query it asked (a lane whose tokens changed is read afresh) and each size's answer. */
const KeptFigures = z.strictObject({
  query: z.strictObject({
    inputToken: z.string(),
    outputToken: z.string(),
    originChainId: z.number().int(),
    destinationChainId: z.number().int(),
    isUnmatchedDecimals: z.boolean().optional(),
  }),
  reads: z.array(
    z.strictObject({
      amount: KeptInteger,
      fees: z.strictObject({
        totalRelayFee: KeptPart,
        relayerCapitalFee: KeptPart,
        relayerGasFee: KeptPart,
        lpFee: KeptPart,
        isAmountTooLow: z.boolean(),
        // Optional: reads kept before these were kept lack them, and such a lane is read afresh (modelOfKept).
        limits: z.strictObject({ minDeposit: KeptInteger, maxDeposit: KeptInteger, maxDepositInstant: KeptInteger.optional() }),
        estimatedFillTimeSec: z.number().int().positive().max(ACROSS_MAX_FILL_SEC).optional(),
      }),
    }),
  ),
})
type KeptFigures = z.infer<typeof KeptFigures>

function keptFiguresOf(lane: AcrossLane, reads: readonly SizedFees[]): KeptFigures {
  const part = ({ pct, total }: { pct: bigint; total: bigint }) => ({ pct: pct.toString(), total: total.toString() })
  return {
    query: { ...lane.query },
    reads: reads.map(({ amount, fees }) => ({
      amount: amount.toString(),
      fees: {
        totalRelayFee: part(fees.totalRelayFee),
        relayerCapitalFee: part(fees.relayerCapitalFee),
        relayerGasFee: part(fees.relayerGasFee),
        lpFee: part(fees.lpFee),
        isAmountTooLow: fees.isAmountTooLow,
        limits: {
          minDeposit: fees.limits.minDeposit.toString(),
          maxDeposit: fees.limits.maxDeposit.toString(),
          maxDepositInstant: fees.limits.maxDepositInstant.toString(),
        },
        estimatedFillTimeSec: fees.estimatedFillTimeSec,
      },
    })),
  }
}

/**
 * The model of a kept read, or undefined when it cannot serve the lane as it is now: another query (the catalogue's
 * tokens changed), a read kept without Across's instant limit or fill estimate (by a version that did not keep them),
 * or no model. Derived again, so a deploy that changes laneFeeModel prices kept reads its own way;
 * the lane never carries more than the bridge's cap of now.
 */
function modelOfKept(lane: AcrossLane, figures: unknown): LaneFeeModel | undefined {
  const parsed = KeptFigures.safeParse(figures)
  if (!parsed.success) return undefined
  const { query, reads } = parsed.data
  const now = lane.query
  if (
    query.inputToken !== now.inputToken ||
    query.outputToken !== now.outputToken ||
    query.originChainId !== now.originChainId ||
    query.destinationChainId !== now.destinationChainId ||
    (query.isUnmatchedDecimals === true) !== (now.isUnmatchedDecimals === true)
  )
    return undefined
  const part = ({ pct, total }: { pct: string; total: string }) => ({ pct: BigInt(pct), total: BigInt(total) })
  const sized: SizedFees[] = []
  for (const { amount, fees } of reads) {
    const { maxDepositInstant } = fees.limits
    if (maxDepositInstant === undefined || fees.estimatedFillTimeSec === undefined) return undefined
    sized.push({
      amount: BigInt(amount),
      fees: {
        totalRelayFee: part(fees.totalRelayFee),
        relayerCapitalFee: part(fees.relayerCapitalFee),
        relayerGasFee: part(fees.relayerGasFee),
        lpFee: part(fees.lpFee),
        isAmountTooLow: fees.isAmountTooLow,
        limits: {
          minDeposit: BigInt(fees.limits.minDeposit),
          maxDeposit: BigInt(fees.limits.maxDeposit),
          maxDepositInstant: BigInt(maxDepositInstant),
        },
        estimatedFillTimeSec: fees.estimatedFillTimeSec,
      } satisfies SuggestedFees,
    })
  }
  const model = laneFeeModel(sized)
  if ('error' in model) return undefined
  const maxAmount = model.maxAmount < lane.capAmount ? model.maxAmount : lane.capAmount
  return model.minAmount > maxAmount ? undefined : { ...model, maxAmount }
}

/** Where a composition of the market takes the Across lanes' figures (see `apply`). */
export type AcrossFeesTarget = {
  nowMs: number
  /** market.json `bridgeFees` being composed: each fresh lane's figures are written here. */
  bridgeFees: Record<string, Record<string, LaneFees>>
  /** The market's lane gaps (`<bridge id>:<SRC>><DST>` → why). */
  laneGaps: Map<string, string>
  /** Health's chains: a lane gap is named `bridge:<id>:<SRC>><DST>` on its source chain. */
  chainStatuses: readonly { chain: ChainCode; stale: string[] }[]
  /** Told the second a figure used now passes its maximum age. */
  changesAt: (sec: number) => void
}

/** The Across lanes' fees, read from Across's API in the background and applied to each composition of the market. */
export type AcrossLaneFees = {
  lanes: readonly AcrossLane[]
  /**
   * Takes back from the keeper each lane's figures read within their maximum age (by this process before a restart,
   * or by a replica), with their real read time, so they age out as if the process had never stopped; resolves to
   * how many lanes it priced. A keeper that cannot be read is logged and nothing is restored: the lanes are read.
   */
  restore(): Promise<number>
  /**
   * Reads every lane once (or joins the refresh under way); resolves when all have settled. Lanes with no usable
   * figures are read first, then the others oldest first; in the first refresh, the lanes with no usable figures are
   * read at the client's warming rate.
   */
  refresh(): Promise<void>
  /**
   * Refreshes `refreshMs` after the last refresh began (at once when it took longer; see acrossLongestReadIntervalMs),
   * calling `onRead` after each lane read (so a lane is served as soon as it is read) and after each refresh, until
   * stop(), which also leaves the lanes a refresh under way has not begun and cuts its requests. stop() resolves once
   * the keeper's reads and writes under way (restore, lane reads) have ended, and writes nothing more, so the store can
   * be closed after it, and closes the client's connections (a refresh or start() after it opens new ones); what a cut
   * refresh still receives is neither served nor kept, even once started again.
   */
  start(onRead: () => void): void
  stop(): Promise<void>
  /**
   * Writes each fresh lane's fees, limits and durations into `target.bridgeFees`; a lane never read, whose last read
   * failed, or whose read is older than its maximum age is a gap instead (never the snapshot's figures).
   */
  apply(target: AcrossFeesTarget): void
}

export type CreateAcrossLaneFeesParameters = {
  client: AcrossFeesClient
  lanes: readonly AcrossLane[]
  /** Named in each figure's source. */
  apiUrl: string
  clock: () => number
  log: Logger
  /** Where the reads are kept across a restart (the store); absent: each start reads every lane afresh. */
  keeper?: AcrossFeesKeeper
  refreshMs?: number
  maxAgeMs?: number
}

export function createAcrossLaneFees(parameters: CreateAcrossLaneFeesParameters): AcrossLaneFees {
  const { client, lanes, apiUrl, clock, log, keeper } = parameters
  const refreshMs = parameters.refreshMs ?? ACROSS_REFRESH_MS
  const maxAgeMs = parameters.maxAgeMs ?? ACROSS_MAX_AGE_MS
  const states = new Map<string, LaneState>(lanes.map((lane) => [lane.id, {}]))
  const byId = new Map(lanes.map((lane) => [lane.id, lane]))
  let running: Promise<void> | undefined
  /** The lanes the refresh under way has still to read: stop() empties it, so a stopped source sends nothing more. */
  let queue: AcrossLane[] = []
  /** Lanes never read that the refresh under way will read, and by when they should be (what a gap says meanwhile). */
  const expectedByMs = new Map<string, number>()
  let isFirstRefresh = true
  /** When the last refresh began (clock ms): the next begins refreshMs after it. */
  let lastBeganMs: number | undefined
  let timer: NodeJS.Timeout | undefined
  let isStopped = true
  let onLaneRead: (() => void) | undefined
  let isKeeperFailing = false
  /** Set by stop() until start(): the keeper (the store, about to close) is written no more. */
  let isKeeperClosed = false
  /** Aborted by stop(): no further request to Across leaves, and those under way are cut. */
  let stopping = new AbortController()
  /** The keeper's writes under way, which stop() waits for, as it does for a restore under way. */
  const keeps = new Set<Promise<void>>()
  let restoring: Promise<number> | undefined

  /** Why the lane is not served from its figures at `nowMs`, or undefined when they are usable. */
  function gapOf(lane: AcrossLane, nowMs: number): string | undefined {
    const state = states.get(lane.id) ?? {}
    const { model, readAtMs } = state
    // Across out of reach for a refresh leaves the last figures standing until their maximum age; an answer that
    // refuses the lane (a 4xx, fees too low everywhere, a malformed answer) takes it out at once.
    const isFresh = model !== undefined && readAtMs !== undefined && nowMs - readAtMs <= maxAgeMs
    if (state.error !== undefined && (state.isTransient !== true || !isFresh)) return `its Across fees could not be read: ${state.error}`
    if (model === undefined || readAtMs === undefined) {
      const by = expectedByMs.get(lane.id)
      if (by === undefined) return 'its Across fees have not been read yet'
      const when = new Date(by).toISOString()
      return nowMs <= by
        ? `${BEING_READ}: ${EXPECTED_BY} ${when}`
        : `${BEING_READ}: later than the ${when} expected, as Across is slow to answer or busy`
    }
    if (!isFresh) return `its Across fees were read ${Math.floor((nowMs - readAtMs) / 1000)} s ago (max age ${maxAgeMs / 1000} s)`
    return undefined
  }

  /** Writes a keeper's outcome to the log once when it starts failing and once when it works again, not per lane. */
  function keeping(write: () => Promise<void>): void {
    if (isKeeperClosed) return
    const work = write().then(
      () => {
        if (!isKeeperFailing) return
        isKeeperFailing = false
        log.info({ event: 'market_across_keep_recovered' }, 'market_across_keep_recovered')
      },
      (error: unknown) => {
        if (isKeeperFailing) return
        isKeeperFailing = true
        log.warn(
          { event: 'market_across_keep_failed', err: error instanceof Error ? error.message : String(error) },
          'market_across_keep_failed: the Across lanes are priced as read, but a restart will read them afresh',
        )
      },
    )
    keeps.add(work)
    void work.finally(() => keeps.delete(work))
  }

  /**
   * The lane at its reference size, then at the most it may carry: what relayers fill at once (Across's
   * maxDepositInstant, never above its maxDeposit), within the bridge's cap.
   */
  async function readLane(
    lane: AcrossLane,
    isWarming: boolean,
    signal: AbortSignal,
  ): Promise<{ reads: SizedFees[]; model: LaneFeeModel | { error: string } }> {
    const reads: SizedFees[] = []
    const options = { isWarming, signal }
    const first = await client.suggestedFees({ ...lane.query, amount: lane.referenceAmount }, options)
    reads.push({ amount: lane.referenceAmount, fees: first })
    const top = [first.limits.maxDeposit, first.limits.maxDepositInstant, lane.capAmount].reduce((a, b) => (a < b ? a : b))
    if (top > lane.referenceAmount) reads.push({ amount: top, fees: await client.suggestedFees({ ...lane.query, amount: top }, options) })
    return { reads, model: laneFeeModel(reads) }
  }

  /** `signal`: the one of the refresh reading the lane, so a refresh cut by stop() knows it even after a start(). */
  async function readInto(lane: AcrossLane, isWarming: boolean, signal: AbortSignal, failed: string[]): Promise<void> {
    const state = states.get(lane.id) ?? {}
    let outcome: { reads: SizedFees[]; model: LaneFeeModel } | { error: string; isTransient?: boolean }
    try {
      const { reads, model } = await readLane(lane, isWarming, signal)
      outcome = 'error' in model ? model : { reads, model }
    } catch (error) {
      outcome = {
        error: error instanceof Error ? error.message : String(error),
        isTransient: error instanceof AcrossApiError && error.isTransient,
      }
    }
    // Cut by stop(): the lane keeps what it had; nothing is recorded or kept.
    if (signal.aborted) return
    const nowMs = clock()
    if ('error' in outcome) {
      state.error = outcome.error
      state.isTransient = outcome.isTransient === true
      failed.push(`${lane.id}: ${outcome.error}`)
      // Across refused the lane: a restart must not bring back what it said before.
      if (keeper !== undefined && !state.isTransient) keeping(() => keeper.forget(lane.id, apiUrl, nowMs))
    } else {
      state.model = outcome.model
      state.readAtMs = nowMs
      delete state.isRestored
      delete state.error
      delete state.isTransient
      if (keeper !== undefined)
        keeping(() => keeper.save({ lane: lane.id, apiUrl, figures: keptFiguresOf(lane, outcome.reads), readAtMs: nowMs }))
    }
    states.set(lane.id, state)
    expectedByMs.delete(lane.id)
  }

  async function refreshOnce(): Promise<void> {
    const startMs = clock()
    lastBeganMs = startMs
    const { signal } = stopping
    // Lanes with nothing usable first (their routes are gaps until read), then the others, the oldest read first.
    const unusable = lanes.filter((lane) => gapOf(lane, startMs) !== undefined)
    const usable = lanes
      .filter((lane) => gapOf(lane, startMs) === undefined)
      .sort((a, b) => (states.get(a.id)?.readAtMs ?? 0) - (states.get(b.id)?.readAtMs ?? 0))
    queue = [...unusable, ...usable]
    const warming = new Set(isFirstRefresh ? unusable.map((lane) => lane.id) : [])
    isFirstRefresh = false
    // By when each lane never read should be: its two requests after those of the lanes before it, at the rate they
    // are sent, plus a second for Across to answer.
    let slotsMs = startMs
    for (const lane of queue) {
      const rate = warming.has(lane.id) ? client.requestsPerSecond.warming : client.requestsPerSecond.steady
      slotsMs += 2_000 / rate
      if (states.get(lane.id)?.model === undefined) expectedByMs.set(lane.id, Math.ceil(slotsMs) + 1_000)
    }
    const failed: string[] = []
    const worker = async (): Promise<void> => {
      for (let lane = queue.shift(); lane !== undefined; lane = queue.shift()) {
        await readInto(lane, warming.has(lane.id), signal, failed)
        onLaneRead?.()
      }
    }
    try {
      await Promise.all(Array.from({ length: Math.min(CONCURRENT_LANES, lanes.length) }, worker))
    } finally {
      expectedByMs.clear()
    }
    if (failed.length > 0)
      log.warn({ event: 'market_across_failed', lanes: failed.length, of: lanes.length, first: failed[0] }, 'market_across_failed')
  }

  function refresh(): Promise<void> {
    running ??= refreshOnce().finally(() => {
      running = undefined
    })
    return running
  }

  function restore(): Promise<number> {
    restoring = restoreOnce()
    return restoring
  }

  async function restoreOnce(): Promise<number> {
    if (keeper === undefined) return 0
    const nowMs = clock()
    let kept: KeptLaneRead[]
    try {
      kept = await keeper.load(apiUrl, nowMs - maxAgeMs)
    } catch (error) {
      log.warn(
        { event: 'market_across_restore_failed', err: error instanceof Error ? error.message : String(error) },
        'market_across_restore_failed: the Across lanes kept in the store could not be read; they are read from Across',
      )
      return 0
    }
    let restored = 0
    let oldestMs: number | undefined
    for (const read of kept) {
      const lane = byId.get(read.lane)
      const state = states.get(read.lane)
      // A read in the future (another replica's clock ahead) cannot be aged truly: it is not taken.
      if (lane === undefined || state === undefined || read.readAtMs > nowMs || nowMs - read.readAtMs > maxAgeMs) continue
      // This process has read the lane since (restore came late): its own outcome stands.
      if (state.readAtMs !== undefined || state.error !== undefined) continue
      const model = modelOfKept(lane, read.figures)
      if (model === undefined) continue
      states.set(lane.id, { model, readAtMs: read.readAtMs, isRestored: true })
      restored++
      if (oldestMs === undefined || read.readAtMs < oldestMs) oldestMs = read.readAtMs
    }
    log.info(
      {
        event: 'market_across_restored',
        lanes: restored,
        of: lanes.length,
        ...(oldestMs === undefined ? {} : { oldest_read_at: new Date(oldestMs).toISOString() }),
      },
      restored === 0
        ? 'market_across_restored: no Across lane read within the last 5 minutes is kept; every lane is read from Across'
        : `market_across_restored: ${restored} of ${lanes.length} Across lanes priced from reads kept in the store (the oldest at ${new Date(oldestMs ?? nowMs).toISOString()}), until they are ${maxAgeMs / 1000} s old or read again`,
    )
    return restored
  }

  function schedule(onRead: () => void): void {
    if (isStopped) return
    const delayMs = lastBeganMs === undefined ? refreshMs : Math.max(0, lastBeganMs + refreshMs - clock())
    timer = setTimeout(() => {
      refresh()
        .then(onRead)
        .catch((error: unknown) => {
          log.error({ event: 'market_across_failed', err: error instanceof Error ? error.message : String(error) }, 'market_across_failed')
        })
        .finally(() => schedule(onRead))
    }, delayMs)
    timer.unref()
  }

  return {
    lanes,
    restore,
    refresh,
    start(onRead) {
      if (!isStopped) return
      isStopped = false
      isKeeperClosed = false
      if (stopping.signal.aborted) stopping = new AbortController()
      onLaneRead = onRead
      schedule(onRead)
      // Started during a refresh (the first, at start-up): the market composed before it says the lanes it is
      // reading are being read, and by when.
      if (running !== undefined) onRead()
    },
    async stop() {
      isStopped = true
      isKeeperClosed = true
      onLaneRead = undefined
      queue.length = 0
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      stopping.abort()
      await Promise.all([running?.catch(() => {}), restoring])
      await Promise.all(keeps)
      // Its keep-alive connections would otherwise stay open (30 s) after the service has stopped.
      await client.close()
    },
    apply(target) {
      for (const lane of lanes) {
        const why = gapOf(lane, target.nowMs)
        const { model, readAtMs, isRestored } = states.get(lane.id) ?? {}
        if (why !== undefined || model === undefined || readAtMs === undefined) {
          target.laneGaps.set(lane.id, why ?? 'its Across fees have not been read yet')
          target.chainStatuses.find((status) => status.chain === lane.from)?.stale.push(`bridge:${lane.id}`)
          continue
        }
        target.changesAt((readAtMs + maxAgeMs) / 1000)
        // The flat fee in USD at the token's catalogue price, rounded up; the engine turns it back, rounding up again.
        const fixedFeeUsdE18 = ceilDiv(model.fixedFee * lane.token.priceUsdE18, pow10(lane.token.decimals))
        const key = `${lane.from}>${lane.to}`
        // Across's estimate (a 75th percentile, whole seconds rounded up) is the p50: never faster than Across says.
        // The p95 is the larger of the catalogue's prior and a multiple of it.
        const durationP50Sec = model.fillSec
        const durationP95Sec = Math.max(lane.durationPrior.p95Sec, ACROSS_P95_FILL_MULTIPLE * model.fillSec)
        const byLane = target.bridgeFees[lane.bridgeId] ?? {}
        byLane[key] = {
          ...byLane[key],
          feePpm: Number(model.feePpm),
          fixedFeeUsd: formatAtomic(fixedFeeUsdE18, 18),
          // The relayer's fill gas is in Across's gas fee (the flat fee): not charged again.
          destinationGasUnits: 0,
          minAmount: model.minAmount.toString(),
          maxAmount: model.maxAmount.toString(),
          instantAmount: model.instantMax.toString(),
          quotedBy: 'across',
          durationP50Sec,
          durationP95Sec,
          source: `${apiUrl}/suggested-fees at ${new Date(readAtMs).toISOString()}${isRestored === true ? ' (kept in the store from before this start)' : ''}: ${model.feePpm} ppm + ${model.fixedFee} atomic (relayer gas), deposits ${model.minAmount} to ${model.maxAmount} (filled at once up to ${model.instantMax}), fill ~${model.fillSec} s`,
        }
        target.bridgeFees[lane.bridgeId] = byLane
      }
    },
  }
}
