// When the Across lanes are read again: refreshes begin start to start, so a lane is read within its 5 minutes
// whatever a refresh takes, as long as the configured rate and interval allow it (checked at start); and a refresh
// cut by stop() stays cut when the source is started again before it has ended.
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { acrossRefreshError } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import type { AcrossFeesClient, SuggestedFees } from '../../src/market/acrossFees.ts'
import {
  ACROSS_MAX_AGE_MS,
  type AcrossFeesKeeper,
  acrossLanesOf,
  acrossLongestReadIntervalMs,
  createAcrossLaneFees,
  type KeptLaneRead,
} from '../../src/market/acrossLaneFees.ts'
import type { ChainCode, LaneFees } from '../../src/schemas/catalogue.ts'

const { files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const lanes = acrossLanesOf(compileCatalogue(files))
const ethToOpt = lanes.filter((lane) => lane.id === 'across-usdc:ETH>OPT')
const log = pino({ level: 'silent' })
const USDC = 10n ** 6n

/** One size is read (maxDeposit is the reference size): one request a lane. */
const answer: SuggestedFees = {
  totalRelayFee: { pct: 10n ** 15n, total: 1_000_000n },
  relayerCapitalFee: { pct: 5n * 10n ** 14n, total: 500_000n },
  relayerGasFee: { pct: 2n * 10n ** 14n, total: 250_000n },
  lpFee: { pct: 3n * 10n ** 14n, total: 250_000n },
  isAmountTooLow: false,
  limits: { minDeposit: USDC, maxDeposit: 1000n * USDC, maxDepositInstant: 1000n * USDC },
  estimatedFillTimeSec: 2,
}

const target = (nowMs: number) => ({
  nowMs,
  bridgeFees: {} as Record<string, Record<string, LaneFees>>,
  laneGaps: new Map<string, string>(),
  chainStatuses: (['ETH', 'OPT'] as ChainCode[]).map((chain) => ({ chain, stale: [] as string[] })),
  changesAt: () => {},
})

describe('the Across refresh schedule', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('begins each refresh refreshMs after the last began, or at once when the last took longer', async () => {
    const askedAtMs: number[] = []
    let answerMs = 10_000
    const client: AcrossFeesClient = {
      suggestedFees: async () => {
        askedAtMs.push(Date.now() - 1_000_000)
        await new Promise((resolve) => setTimeout(resolve, answerMs))
        return answer
      },
      requestsPerSecond: { steady: 5, warming: 10 },
      close: async () => {},
    }
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: 'x', clock: Date.now, log, refreshMs: 60_000 })
    // As at start-up: the first refresh, then start() while it runs.
    const first = source.refresh()
    source.start(() => {})
    await vi.advanceTimersByTimeAsync(130_000)
    await first
    // 10 s refreshes begin 60 s apart, not 70 s (their own 10 s plus the interval).
    expect(askedAtMs).toEqual([0, 60_000, 120_000])
    // A refresh longer than the interval is followed at once by the next.
    answerMs = 90_000
    await vi.advanceTimersByTimeAsync(50_000 + 90_000 + 1_000)
    // (A timer of 0 ms fires after 1 ms: seconds.)
    expect(askedAtMs.map((ms) => Math.floor(ms / 1000))).toEqual([0, 60, 120, 180, 270])
    // stop() waits for the read under way, which this client does not cut.
    const stopped = source.stop()
    await vi.advanceTimersByTimeAsync(90_000)
    await stopped
  })

  it('a refresh cut by stop() is neither served nor kept when the source is started again before it ends', async () => {
    let release = (): void => {}
    const client: AcrossFeesClient = {
      // Answers once released, whatever the signal says (as a request already answered when stop() aborts).
      suggestedFees: () =>
        new Promise((resolve) => {
          release = () => resolve(answer)
        }),
      requestsPerSecond: { steady: 5, warming: 10 },
      close: async () => {},
    }
    const saved: KeptLaneRead[] = []
    const keeper: AcrossFeesKeeper = {
      save: async (read) => {
        saved.push(read)
      },
      forget: async () => {},
      load: async () => [],
    }
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: 'x', clock: Date.now, log, keeper })
    const refreshing = source.refresh()
    await vi.advanceTimersByTimeAsync(0)
    const stopped = source.stop()
    source.start(() => {})
    release()
    await refreshing
    await stopped
    await vi.advanceTimersByTimeAsync(0)
    expect(saved).toEqual([])
    const state = target(Date.now())
    source.apply(state)
    expect(state.laneGaps.get('across-usdc:ETH>OPT')).toBe('its Across fees have not been read yet')
    await source.stop()
  })
})

describe('the Across rate and refresh interval', () => {
  it('keep every one of the 50 lanes read within its 5 minutes, or start-up is refused with one line saying what to change', () => {
    expect(lanes).toHaveLength(50)
    // The defaults, and the largest interval at 5 a second.
    expect(acrossLongestReadIntervalMs(50, 5, 60_000)).toBeLessThanOrEqual(ACROSS_MAX_AGE_MS)
    expect(acrossRefreshError(50, 5, 60_000)).toBeUndefined()
    expect(acrossRefreshError(50, 5, 240_000)).toBeUndefined()
    // 1 a second: 100 requests and a quarter more for retries take 125 s; 175 s apart is the most that fits.
    expect(acrossLongestReadIntervalMs(50, 1, 175_000)).toBe(300_000)
    expect(acrossRefreshError(50, 1, 175_000)).toBeUndefined()
    expect(acrossRefreshError(50, 1, 240_000)).toBe(
      'invalid configuration: SWAPEAZI_ACROSS_REFRESH_MS, SWAPEAZI_ACROSS_REQUESTS_PER_SEC: a refresh of the 50 Across lanes at 1 request a second takes up to 125 s (two requests a lane, a quarter more for retries), so with refreshes 240 s apart a lane could go 365 s between reads, past its 300 s maximum age; set SWAPEAZI_ACROSS_REFRESH_MS to at most 175000, or raise SWAPEAZI_ACROSS_REQUESTS_PER_SEC',
    )
    // Refreshes back to back cannot help when two refreshes take longer than the maximum age.
    expect(acrossRefreshError(130, 1, 10_000)).toMatch(/a lane could go 650 s between reads, .*; raise SWAPEAZI_ACROSS_REQUESTS_PER_SEC$/)
    // Answers taken to come within a second, four lanes in flight: at 50 a second a request still takes 250 ms.
    expect(acrossLongestReadIntervalMs(50, 50, 10_000)).toBe(31_250 * 2)
  })
})
