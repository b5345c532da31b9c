import type { Logger } from 'pino'
import { type Catalogue, ceilDiv, E18, formatAtomic, pow10, type Token } from '../engine/index.ts'
import type { ChainCode, LaneFees } from '../schemas/catalogue.ts'
import {
  AcrossApiError,
  type AcrossFeesClient,
  type LaneFeeModel,
  laneFeeModel,
  type SizedFees,
  type SuggestedFeesQuery,
} from './acrossFees.ts'

/** Each lane is read at this size (USD, at the snapshot's price), and at the most it may carry. */
export const ACROSS_REFERENCE_USD = 1_000n
/** How long after one refresh of every lane ends the next begins. */
export const ACROSS_REFRESH_MS = 60_000
/** A lane's fees are used for at most this long after they were read (Across asks not to cache them longer). */
export const ACROSS_MAX_AGE_MS = 300_000
/** Lanes read at once; the client spaces the requests themselves. */
const CONCURRENT_LANES = 4

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
      })
    }
  return lanes
}

/** What the last read of a lane gave: its model and when it was read, or why it failed and when. */
type LaneState = {
  model?: LaneFeeModel
  readAtMs?: number
  error?: string
  /** The last read failed only in reaching Across: the model read before it stands until its maximum age. */
  isTransient?: boolean
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
  /** Reads every lane once (or joins the refresh under way); resolves when all have settled. */
  refresh(): Promise<void>
  /**
   * Refreshes every ACROSS_REFRESH_MS after the last refresh ended, calling `onRead` after each, until stop(), which
   * also leaves the lanes a refresh under way has not begun.
   */
  start(onRead: () => void): void
  stop(): void
  /**
   * Writes each fresh lane's fees and limits into `target.bridgeFees`; a lane never read, whose last read failed, or
   * whose read is older than its maximum age is a gap instead (never the snapshot's figures).
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
  refreshMs?: number
  maxAgeMs?: number
}

export function createAcrossLaneFees(parameters: CreateAcrossLaneFeesParameters): AcrossLaneFees {
  const { client, lanes, apiUrl, clock, log } = parameters
  const refreshMs = parameters.refreshMs ?? ACROSS_REFRESH_MS
  const maxAgeMs = parameters.maxAgeMs ?? ACROSS_MAX_AGE_MS
  const states = new Map<string, LaneState>(lanes.map((lane) => [lane.id, {}]))
  let running: Promise<void> | undefined
  /** The lanes the refresh under way has still to read: stop() empties it, so a stopped source sends nothing more. */
  let queue: AcrossLane[] = []
  let timer: NodeJS.Timeout | undefined
  let isStopped = true

  /** The lane at its reference size, then at the most it may carry (Across's maxDeposit, within the bridge's cap). */
  async function readLane(lane: AcrossLane): Promise<LaneFeeModel | { error: string }> {
    const reads: SizedFees[] = []
    const first = await client.suggestedFees({ ...lane.query, amount: lane.referenceAmount })
    reads.push({ amount: lane.referenceAmount, fees: first })
    const top = first.limits.maxDeposit < lane.capAmount ? first.limits.maxDeposit : lane.capAmount
    if (top > lane.referenceAmount) reads.push({ amount: top, fees: await client.suggestedFees({ ...lane.query, amount: top }) })
    return laneFeeModel(reads)
  }

  async function refreshOnce(): Promise<void> {
    queue = [...lanes]
    const failed: string[] = []
    const worker = async (): Promise<void> => {
      for (let lane = queue.shift(); lane !== undefined; lane = queue.shift()) {
        const state = states.get(lane.id) ?? {}
        let outcome: LaneFeeModel | { error: string; isTransient?: boolean }
        try {
          outcome = await readLane(lane)
        } catch (error) {
          outcome = {
            error: error instanceof Error ? error.message : String(error),
            isTransient: error instanceof AcrossApiError && error.isTransient,
          }
        }
        if ('error' in outcome) {
          state.error = outcome.error
          state.isTransient = outcome.isTransient === true
          failed.push(`${lane.id}: ${outcome.error}`)
        } else {
          state.model = outcome
          state.readAtMs = clock()
          delete state.error
          delete state.isTransient
        }
        states.set(lane.id, state)
      }
    }
    await Promise.all(Array.from({ length: Math.min(CONCURRENT_LANES, lanes.length) }, worker))
    if (failed.length > 0)
      log.warn({ event: 'market_across_failed', lanes: failed.length, of: lanes.length, first: failed[0] }, 'market_across_failed')
  }

  function refresh(): Promise<void> {
    running ??= refreshOnce().finally(() => {
      running = undefined
    })
    return running
  }

  function schedule(onRead: () => void): void {
    if (isStopped) return
    timer = setTimeout(() => {
      refresh()
        .then(onRead)
        .catch((error: unknown) => {
          log.error({ event: 'market_across_failed', err: error instanceof Error ? error.message : String(error) }, 'market_across_failed')
        })
        .finally(() => schedule(onRead))
    }, refreshMs)
    timer.unref()
  }

  return {
    lanes,
    refresh,
    start(onRead) {
      if (!isStopped) return
      isStopped = false
      schedule(onRead)
    },
    stop() {
      isStopped = true
      queue.length = 0
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
    },
    apply(target) {
      for (const lane of lanes) {
        const state = states.get(lane.id) ?? {}
        const { model, readAtMs } = state
        let why: string | undefined
        // Across out of reach for a refresh leaves the last figures standing until their maximum age; an answer that
        // refuses the lane (a 4xx, fees too low everywhere, a malformed answer) takes it out at once.
        const isFresh = model !== undefined && readAtMs !== undefined && target.nowMs - readAtMs <= maxAgeMs
        if (state.error !== undefined && (state.isTransient !== true || !isFresh)) why = `its Across fees could not be read: ${state.error}`
        else if (model === undefined || readAtMs === undefined) why = 'its Across fees have not been read yet'
        else if (target.nowMs - readAtMs > maxAgeMs)
          why = `its Across fees were read ${Math.floor((target.nowMs - readAtMs) / 1000)} s ago (max age ${maxAgeMs / 1000} s)`
        if (why !== undefined || model === undefined || readAtMs === undefined) {
          target.laneGaps.set(lane.id, why ?? 'its Across fees have not been read yet')
          target.chainStatuses.find((status) => status.chain === lane.from)?.stale.push(`bridge:${lane.id}`)
          continue
        }
        target.changesAt((readAtMs + maxAgeMs) / 1000)
        // The flat fee in USD at the token's catalogue price, rounded up; the engine turns it back, rounding up again.
        const fixedFeeUsdE18 = ceilDiv(model.fixedFee * lane.token.priceUsdE18, pow10(lane.token.decimals))
        const key = `${lane.from}>${lane.to}`
        const byLane = target.bridgeFees[lane.bridgeId] ?? {}
        byLane[key] = {
          ...byLane[key],
          feePpm: Number(model.feePpm),
          fixedFeeUsd: formatAtomic(fixedFeeUsdE18, 18),
          // The relayer's fill gas is in Across's gas fee (the flat fee): not charged again.
          destinationGasUnits: 0,
          minAmount: model.minAmount.toString(),
          maxAmount: model.maxAmount.toString(),
          quotedBy: 'across',
          source: `${apiUrl}/suggested-fees at ${new Date(readAtMs).toISOString()}: ${model.feePpm} ppm + ${model.fixedFee} atomic (relayer gas), deposits ${model.minAmount} to ${model.maxAmount}`,
        }
        target.bridgeFees[lane.bridgeId] = byLane
      }
    },
  }
}
