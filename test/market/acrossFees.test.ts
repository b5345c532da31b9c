// Across's suggested fees read through the real client (undici, keep-alive, retries, spacing) from a local stand-in
// in the API's shape, the fee model derived from them, and the lane source that turns them into market figures.
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { ACROSS_FILL_WINDOW_SEC, ceilDiv, compileCatalogue } from '../../src/engine/index.ts'
import {
  ACROSS_MAX_FILL_SEC,
  AcrossApiError,
  type AcrossFeesClient,
  createAcrossFeesClient,
  laneFeeModel,
  type SizedFees,
  type SuggestedFeesQuery,
} from '../../src/market/acrossFees.ts'
import {
  ACROSS_P95_FILL_MULTIPLE,
  type AcrossFeesKeeper,
  acrossLaneExpectedByMs,
  acrossLanesOf,
  createAcrossLaneFees,
  type KeptLaneRead,
} from '../../src/market/acrossLaneFees.ts'
import type { ChainCode, LaneFees } from '../../src/schemas/catalogue.ts'
import {
  type AcrossStandIn,
  DEFAULT_LANE,
  REBALANCE_FILL_SEC,
  type StandInLane,
  startAcrossStandIn,
  suggestedFeesFor,
} from './acrossStandIn.ts'

const { files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const snapshot = compileCatalogue(files)
const log = pino({ level: 'silent' })
const USDC = 10n ** 6n
const ETH_USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'
const OPT_USDC = '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85'
const query = { inputToken: ETH_USDC, outputToken: OPT_USDC, originChainId: 1, destinationChainId: 10 }

let stand: AcrossStandIn
beforeAll(async () => {
  stand = await startAcrossStandIn()
})
afterAll(async () => {
  await stand.close()
})
afterEach(() => {
  stand.failNext(0, 503)
  stand.setDelayMs(0)
  stand.setDribbleMs(0)
  stand.requests.length = 0
  stand.sockets.clear()
})

const quick = { retryDelayMs: 5, maxRequestsPerSecond: 1000 }

describe('createAcrossFeesClient', () => {
  it('reads the fees and limits as exact integers, with the query Across documents, over keep-alive connections', async () => {
    // Spaced 20 ms apart: long enough for the connection to return to the pool between two requests.
    const client = createAcrossFeesClient({ url: stand.url, maxRequestsPerSecond: 50 })
    try {
      const fees = await client.suggestedFees({ ...query, amount: 1000n * USDC })
      const expected = suggestedFeesFor(DEFAULT_LANE, 1000n * USDC)
      expect(fees.relayerGasFee).toEqual({ pct: BigInt(expected.relayerGasFee.pct), total: 250_000n })
      expect(fees.relayerCapitalFee.total).toBe(BigInt(expected.relayerCapitalFee.total))
      expect(fees.lpFee.total).toBe(100_000n) // 1 bp of 1,000 USDC
      expect(fees.totalRelayFee.total).toBe(BigInt(expected.totalRelayFee.total))
      expect(fees.limits).toEqual({
        minDeposit: DEFAULT_LANE.minDeposit,
        maxDeposit: DEFAULT_LANE.maxDeposit,
        maxDepositInstant: DEFAULT_LANE.maxDeposit,
      })
      expect(fees.estimatedFillTimeSec).toBe(2)
      expect(fees.isAmountTooLow).toBe(false)
      for (const whole of [10n, 100n, 10n, 100n, 10n]) await client.suggestedFees({ ...query, amount: whole * USDC })
      const [first] = stand.requests
      expect(Object.fromEntries(first?.query ?? [])).toEqual({
        inputToken: ETH_USDC,
        outputToken: OPT_USDC,
        originChainId: '1',
        destinationChainId: '10',
        amount: '1000000000',
      })
      // Keep-alive: six requests over at most two connections (undici may open a second while the first is released).
      expect(stand.requests).toHaveLength(6)
      expect(stand.sockets.size).toBeLessThanOrEqual(2)
    } finally {
      await client.close()
    }
  })

  it('reads Across’s fill estimate rounded up to a whole second, whether a number or a string, and its instant limit', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    try {
      stand.setLane(1, 10, { fillTimeSec: 12.2, maxDepositInstant: 300_000n * USDC })
      const fees = await client.suggestedFees({ ...query, amount: 1000n * USDC })
      expect(fees.estimatedFillTimeSec).toBe(13)
      expect(fees.limits.maxDepositInstant).toBe(300_000n * USDC)
      stand.setLane(1, 10, { fillTimeSec: '0.4' })
      expect((await client.suggestedFees({ ...query, amount: 1000n * USDC })).estimatedFillTimeSec).toBe(1)
      // Above the instant limit, Across estimates its rebalance time.
      expect((await client.suggestedFees({ ...query, amount: 400_000n * USDC })).estimatedFillTimeSec).toBe(REBALANCE_FILL_SEC)
      // An answer without them cannot say how fast or how much is filled at once: it is not taken.
      stand.setLane(1, 10, { isWithoutFillFigures: true })
      await expect(client.suggestedFees({ ...query, amount: 1000n * USDC })).rejects.toThrow(
        /^Across's answer is not suggested fees: (limits\.maxDepositInstant|estimatedFillTimeSec): /,
      )
    } finally {
      stand.setLane(1, 10, { isWithoutFillFigures: false })
      stand.setLane(1, 10, { fillTimeSec: 2, maxDepositInstant: DEFAULT_LANE.maxDeposit })
      await client.close()
    }
  })

  it('asks Across to allow unmatched decimals only where the two tokens differ', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    try {
      await client.suggestedFees({ ...query, amount: USDC, isUnmatchedDecimals: true })
      expect(stand.requests[0]?.query.get('allowUnmatchedDecimals')).toBe('true')
    } finally {
      await client.close()
    }
  })

  it('retries a 5xx and a 429 with backoff, then answers', async () => {
    const waits: number[] = []
    const client = createAcrossFeesClient({
      url: stand.url,
      retryDelayMs: 7,
      maxRequestsPerSecond: 1000,
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    try {
      stand.failNext(1, 503)
      await expect(client.suggestedFees({ ...query, amount: USDC * 1000n })).resolves.toMatchObject({ isAmountTooLow: false })
      expect(stand.requests).toHaveLength(2)
      stand.failNext(2, 429)
      await expect(client.suggestedFees({ ...query, amount: USDC * 1000n })).resolves.toMatchObject({ isAmountTooLow: false })
      // Backoff: the first retry waits 7 ms, the second 14 ms (spacing waits are under 1 ms and not counted).
      expect(waits.filter((ms) => ms >= 7)).toEqual([7, 7, 14])
    } finally {
      await client.close()
    }
  })

  it('gives up after its attempts on 5xx, and at once on a 4xx, with AcrossApiError', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick, attempts: 3 })
    try {
      stand.failNext(5, 500)
      await expect(client.suggestedFees({ ...query, amount: USDC })).rejects.toThrow(/could not be asked \(3 attempts; last: HTTP 500\)/)
      expect(stand.requests).toHaveLength(3)
      stand.failNext(0, 500)
      stand.requests.length = 0
      await expect(client.suggestedFees({ ...query, amount: 'x' as unknown as bigint })).rejects.toThrow(AcrossApiError)
      expect(stand.requests).toHaveLength(1)
    } finally {
      await client.close()
    }
  })

  it('refuses an answer too large to be one lane’s fees at once, without asking again', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick, attempts: 3 })
    try {
      stand.setLane(1, 10, { paddingBytes: 300_000 })
      const outcome = await client.suggestedFees({ ...query, amount: USDC }).catch((error: unknown) => error)
      expect(outcome).toBeInstanceOf(AcrossApiError)
      expect(outcome).toMatchObject({ isTransient: false, message: "Across's answer exceeds 200000 bytes" })
      expect(stand.requests).toHaveLength(1)
    } finally {
      stand.setLane(1, 10, { paddingBytes: 0 })
      await client.close()
    }
  })

  it('times out a request that does not answer, within its attempts', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick, timeoutMs: 200, attempts: 2 })
    try {
      stand.setDelayMs(5000)
      const started = Date.now()
      await expect(client.suggestedFees({ ...query, amount: USDC })).rejects.toThrow(/could not be asked \(2 attempts; last: .*Timeout/)
      // undici's timers are coarse (about half a second), but both attempts end long before one answer would come.
      expect(Date.now() - started).toBeLessThan(4000)
      expect(stand.requests).toHaveLength(2)
    } finally {
      await client.close()
    }
  })

  it('cuts an answer whose body does not end within the timeout, however steadily it trickles', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick, timeoutMs: 1000, attempts: 1 })
    try {
      // Headers at once, then a byte every 100 ms: no gap reaches undici's body timeout, and the answer would take
      // over a minute.
      stand.setDribbleMs(100)
      const started = Date.now()
      const outcome = await client.suggestedFees({ ...query, amount: USDC }).catch((error: unknown) => error)
      expect(Date.now() - started).toBeLessThan(2000)
      expect(outcome).toBeInstanceOf(AcrossApiError)
      expect(outcome).toMatchObject({
        isTransient: true,
        message: expect.stringMatching(/could not be asked \(1 attempts; last: TimeoutError: no whole answer within 1000 ms\)$/),
      })
      expect(stand.requests).toHaveLength(1)
    } finally {
      await client.close()
    }
  })

  it('spaces its requests: 6 at 20 a second take at least 250 ms', async () => {
    const client = createAcrossFeesClient({ url: stand.url, maxRequestsPerSecond: 20 })
    try {
      await Promise.all(Array.from({ length: 6 }, () => client.suggestedFees({ ...query, amount: USDC })))
      const times = stand.requests.map((request) => request.atMs)
      expect((times.at(-1) ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(240)
      // Spaced when sent (50 ms apart), timed here when they arrive: on a busy machine one request's arrival is late and
      // the next gap looks shorter (30 ms seen in CI), never near the 0 to 2 ms of requests sent at once.
      for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(20)
    } finally {
      await client.close()
    }
  })

  it('spaces warming requests at the warming rate, the others at the steady rate, and never warms slower than steady', async () => {
    const waits: number[] = []
    const spaced = (parameters: { maxRequestsPerSecond: number; warmingRequestsPerSecond?: number }) =>
      createAcrossFeesClient({
        url: stand.url,
        ...parameters,
        now: () => 0,
        sleep: async (ms) => {
          waits.push(ms)
        },
      })
    const client = spaced({ maxRequestsPerSecond: 5, warmingRequestsPerSecond: 20 })
    const slow = spaced({ maxRequestsPerSecond: 50, warmingRequestsPerSecond: 20 })
    try {
      expect(client.requestsPerSecond).toEqual({ steady: 5, warming: 20 })
      for (let i = 0; i < 3; i++) await client.suggestedFees({ ...query, amount: USDC }, { isWarming: true })
      await client.suggestedFees({ ...query, amount: USDC })
      await client.suggestedFees({ ...query, amount: USDC })
      // The clock stands still: each wait is the slot's distance from now. 50 ms apart warming, then 200 ms.
      expect(waits).toEqual([50, 100, 150, 350])
      expect(slow.requestsPerSecond).toEqual({ steady: 50, warming: 50 })
    } finally {
      await client.close()
      await slow.close()
    }
  })

  it('refuses an answer that is not suggested fees', async () => {
    const client = createAcrossFeesClient({ url: `${stand.url}/nothing`, ...quick })
    try {
      await expect(client.suggestedFees({ ...query, amount: USDC })).rejects.toThrow(/HTTP 404/)
    } finally {
      await client.close()
    }
  })
})

/** What the stand-in would take for `amount` on `lane`: the whole relay fee, the LP fee counted once. */
const acrossFee = (lane: StandInLane, amount: bigint): bigint => {
  const fees = suggestedFeesFor(lane, amount)
  return BigInt(fees.relayerCapitalFee.total) + BigInt(fees.relayerGasFee.total) + BigInt(fees.lpFee.total)
}
const read = (lane: StandInLane, amount: bigint): SizedFees => {
  const fees = suggestedFeesFor(lane, amount)
  const part = (value: { pct: string; total: string }) => ({ pct: BigInt(value.pct), total: BigInt(value.total) })
  return {
    amount,
    fees: {
      totalRelayFee: part(fees.totalRelayFee),
      relayerCapitalFee: part(fees.relayerCapitalFee),
      relayerGasFee: part(fees.relayerGasFee),
      lpFee: part(fees.lpFee),
      isAmountTooLow: fees.isAmountTooLow,
      limits: {
        minDeposit: BigInt(fees.limits.minDeposit),
        maxDeposit: BigInt(fees.limits.maxDeposit),
        maxDepositInstant: BigInt(fees.limits.maxDepositInstant),
      },
      estimatedFillTimeSec: Math.ceil(Number(fees.estimatedFillTimeSec)),
    },
  }
}

describe('laneFeeModel', () => {
  const sweep = (from: bigint, to: bigint): bigint[] => {
    const amounts: bigint[] = []
    for (let amount = from; amount <= to; amount = (amount * 13n) / 10n + 1n) amounts.push(amount)
    return [...amounts, to]
  }

  for (const [name, lane] of [
    ['a rising capital fee with a cutoff inside the range', DEFAULT_LANE],
    ['a cutoff above the largest size read', { ...DEFAULT_LANE, capitalCutoff: 10n ** 16n }],
    ['totalRelayFee without the LP fee (the first API)', { ...DEFAULT_LANE, isTotalWithoutLp: true }],
    ['no capital fee rise and a dear fill', { ...DEFAULT_LANE, capitalUpperPct: DEFAULT_LANE.capitalLowerPct, gasTotal: 4_000_000n }],
  ] as const)
    it(`never charges less than Across at any amount it offers: ${name}`, () => {
      const reference = 1000n * USDC
      const top = lane.maxDeposit
      const model = laneFeeModel([read(lane, reference), read(lane, top)])
      if ('error' in model) throw new Error(model.error)
      expect(model.maxAmount).toBe(top)
      expect(model.minAmount).toBe(lane.minDeposit)
      expect(model.fixedFee).toBe(lane.gasTotal)
      for (const amount of sweep(model.minAmount, model.maxAmount)) {
        const charged = ceilDiv(amount * model.feePpm, 1_000_000n) + model.fixedFee
        expect(charged, `at ${amount}`).toBeGreaterThanOrEqual(acrossFee(lane, amount))
      }
      // And not far more: within 1 ppm of the largest size's share.
      const atTop = ceilDiv(top * model.feePpm, 1_000_000n) + model.fixedFee
      expect(atTop - acrossFee(lane, top)).toBeLessThanOrEqual(top / 1_000_000n + 1n)
    })

  it('offers nothing above the largest size read, even where Across’s maxDeposit is higher', () => {
    const model = laneFeeModel([read(DEFAULT_LANE, 1000n * USDC), read(DEFAULT_LANE, 200_000n * USDC)])
    expect(model).toMatchObject({ maxAmount: 200_000n * USDC })
  })

  it('offers nothing above what relayers fill at once, and takes the slowest fill Across estimates within it', () => {
    const lane = { ...DEFAULT_LANE, maxDepositInstant: 300_000n * USDC, fillTimeSec: 2 }
    // Read at USD 1,000 and at maxDeposit (above the instant limit: Across says 900 s there).
    const model = laneFeeModel([read(lane, 1000n * USDC), read({ ...lane, fillTimeSec: 7 }, 300_000n * USDC), read(lane, lane.maxDeposit)])
    expect(model).toMatchObject({ maxAmount: 300_000n * USDC, instantMax: 300_000n * USDC, fillSec: 7 })
    // No size read within the instant limit: Across's estimate for what was read, however slow.
    expect(laneFeeModel([read({ ...lane, maxDepositInstant: 500n * USDC }, 1000n * USDC)])).toMatchObject({
      maxAmount: 500n * USDC,
      fillSec: REBALANCE_FILL_SEC,
    })
    expect(laneFeeModel([read({ ...lane, maxDepositInstant: 0n }, 1000n * USDC)])).toEqual({
      error: 'no amount fits: Across takes at least 1000000, and its relayers can fill at most 0 at once (maxDepositInstant)',
    })
  })

  it('takes a size Across says is too low as the lane’s floor, and is no model when every size is too low', () => {
    const lane = { ...DEFAULT_LANE, minDeposit: 5000n * USDC }
    expect(laneFeeModel([read(lane, 1000n * USDC), read(lane, lane.maxDeposit)])).toMatchObject({ minAmount: 5000n * USDC })
    expect(laneFeeModel([read(lane, 1000n * USDC), read(lane, 2000n * USDC)])).toEqual({
      error: 'Across says every amount read is too low for its fees',
    })
  })
})

describe('createAcrossLaneFees', () => {
  const lanes = acrossLanesOf(snapshot)
  const ethToOpt = lanes.filter((lane) => lane.id === 'across-usdc:ETH>OPT')

  it('lists every buildable lane of the catalogue’s Across bridges, sized at USD 1,000 and the bridge’s cap', () => {
    expect(lanes.length).toBe(30 + 20)
    expect(new Set(lanes.map((lane) => lane.bridgeId))).toEqual(new Set(['across-usdc', 'across-usdt']))
    expect(ethToOpt[0]).toMatchObject({ referenceAmount: 1000n * USDC, capAmount: 2_000_000n * USDC })
    // USDC has 18 decimals on BNB Chain: Across is told so.
    expect(lanes.find((lane) => lane.id === 'across-usdc:ETH>BNB')?.query.isUnmatchedDecimals).toBe(true)
    expect(ethToOpt[0]?.query.isUnmatchedDecimals).toBeUndefined()
  })

  const target = (nowMs: number) => {
    const bridgeFees: Record<string, Record<string, LaneFees>> = {}
    const laneGaps = new Map<string, string>()
    const chainStatuses = (['ETH', 'OPT'] as ChainCode[]).map((chain) => ({ chain, stale: [] as string[] }))
    const changes: number[] = []
    return { nowMs, bridgeFees, laneGaps, chainStatuses, changesAt: (sec: number) => changes.push(sec), changes }
  }

  it('prices a lane read from the stand-in, and makes it a gap once its read fails or ages past five minutes', async () => {
    let now = 1_000_000
    const client = createAcrossFeesClient({ url: stand.url, ...quick, attempts: 1 })
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: stand.url, clock: () => now, log })
    try {
      const before = target(now)
      source.apply(before)
      expect(before.laneGaps.get('across-usdc:ETH>OPT')).toBe('its Across fees have not been read yet')
      await source.refresh()
      // Read at USD 1,000 and at the stand-in's maxDeposit (below the bridge's USD 2,000,000).
      expect(stand.requests.map((request) => request.query.get('amount'))).toEqual(['1000000000', String(DEFAULT_LANE.maxDeposit)])
      const fresh = target(now)
      source.apply(fresh)
      expect(fresh.laneGaps.size).toBe(0)
      const model = laneFeeModel([read(DEFAULT_LANE, 1000n * USDC), read(DEFAULT_LANE, DEFAULT_LANE.maxDeposit)])
      if ('error' in model) throw new Error(model.error)
      expect(fresh.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({
        feePpm: Number(model.feePpm),
        fixedFeeUsd: '0.25', // 250,000 atomic USDC at USD 1
        destinationGasUnits: 0,
        minAmount: DEFAULT_LANE.minDeposit.toString(),
        maxAmount: DEFAULT_LANE.maxDeposit.toString(),
        quotedBy: 'across',
      })
      expect(fresh.changes).toEqual([(now + 300_000) / 1000])
      now += 300_001
      const aged = target(now)
      source.apply(aged)
      expect(aged.laneGaps.get('across-usdc:ETH>OPT')).toBe('its Across fees were read 300 s ago (max age 300 s)')
      expect(aged.chainStatuses.find((status) => status.chain === 'ETH')?.stale).toEqual(['bridge:across-usdc:ETH>OPT'])
      stand.setLane(1, 10, { failWith: 502 })
      await source.refresh()
      const failed = target(now)
      source.apply(failed)
      expect(failed.laneGaps.get('across-usdc:ETH>OPT')).toMatch(/^its Across fees could not be read: .*HTTP 502/)
      expect(failed.bridgeFees['across-usdc']).toBeUndefined()
    } finally {
      stand.setLane(1, 10, { failWith: 0 })
      await client.close()
    }
  })

  it('keeps a lane priced through a refresh that cannot reach Across, until its figures age out; a 4xx takes it out at once', async () => {
    let now = 2_000_000
    const client = createAcrossFeesClient({ url: stand.url, ...quick, attempts: 1 })
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: stand.url, clock: () => now, log })
    try {
      await source.refresh()
      now += 60_000
      stand.setLane(1, 10, { failWith: 503 })
      await source.refresh()
      const unreachable = target(now)
      source.apply(unreachable)
      expect(unreachable.laneGaps.size).toBe(0)
      expect(unreachable.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({ quotedBy: 'across' })
      now += 240_001
      const aged = target(now)
      source.apply(aged)
      expect(aged.laneGaps.get('across-usdc:ETH>OPT')).toMatch(/^its Across fees could not be read: .*HTTP 503/)
      stand.setLane(1, 10, { failWith: 0 })
      await source.refresh()
      stand.setLane(1, 10, { failWith: 404 })
      await source.refresh()
      const refused = target(now)
      source.apply(refused)
      expect(refused.laneGaps.get('across-usdc:ETH>OPT')).toMatch(/^its Across fees could not be read: Across answered HTTP 404/)
    } finally {
      stand.setLane(1, 10, { failWith: 0 })
      await client.close()
    }
  })

  it('reads a lane up to what relayers fill at once, and gives it Across’s fill estimate as its p50 and the rule’s p95', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: stand.url, clock: Date.now, log })
    try {
      stand.setLane(1, 10, { maxDepositInstant: 300_000n * USDC, fillTimeSec: 25 })
      await source.refresh()
      // The second size is the instant limit, not maxDeposit (1,500,000 USDC) where Across would say 900 s.
      expect(stand.requests.map((request) => request.query.get('amount'))).toEqual(['1000000000', String(300_000n * USDC)])
      const fast = target(Date.now())
      source.apply(fast)
      // ETH's prior for Across is p50 15 s, p95 60 s: Across's 25 s replaces the p50, and 3 × 25 s is above the p95.
      expect(fast.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({
        maxAmount: String(300_000n * USDC),
        // What the relayers fill at once, kept apart: a batch's deposits on the lane are summed against it.
        instantAmount: String(300_000n * USDC),
        durationP50Sec: 25,
        durationP95Sec: 75,
        source: expect.stringContaining(`(filled at once up to ${300_000n * USDC}), fill ~25 s`),
      })
      stand.setLane(1, 10, { fillTimeSec: 3 })
      await source.refresh()
      const faster = target(Date.now())
      source.apply(faster)
      // 3 × 3 s is below the prior's 60 s: the p95 stays the prior's.
      expect(faster.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({ durationP50Sec: 3, durationP95Sec: 60 })
    } finally {
      stand.setLane(1, 10, { maxDepositInstant: DEFAULT_LANE.maxDeposit, fillTimeSec: 2 })
      await client.close()
    }
  })

  it('a lane whose fill estimate is no number of seconds within a sold p95 is out of service, saying why', async () => {
    // The p95 priced from the largest estimate taken still ends within the deposit's fill window (else it is refunded).
    expect(ACROSS_MAX_FILL_SEC * ACROSS_P95_FILL_MULTIPLE).toBeLessThanOrEqual(ACROSS_FILL_WINDOW_SEC)
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: stand.url, clock: Date.now, log })
    const tooSlow = 'must be at most 7200 s (a p95 of three times it must end within the 21600 s fill window)'
    try {
      for (const [fillTimeSec, why] of [
        // As JSON carries it: 1e+308, which would make the p95 Infinity and the destination deadline throw.
        [1e308, tooSlow],
        // Eight hours: a p95 of a day, past the 6 h refund.
        [28_800, tooSlow],
        [7_201, tooSlow],
        ['9'.repeat(400), 'Invalid input: expected number, received Infinity'],
        [-5, 'must not be negative'],
      ] as const) {
        stand.setLane(1, 10, { fillTimeSec })
        await source.refresh()
        const state = target(Date.now())
        source.apply(state)
        expect(state.laneGaps.get('across-usdc:ETH>OPT'), String(fillTimeSec)).toBe(
          `its Across fees could not be read: Across's answer is not suggested fees: estimatedFillTimeSec: ${why}`,
        )
        expect(state.bridgeFees['across-usdc']).toBeUndefined()
      }
      // Two hours at most is a fill time, a fraction rounded up.
      stand.setLane(1, 10, { fillTimeSec: 7_199.5 })
      await source.refresh()
      const slow = target(Date.now())
      source.apply(slow)
      expect(slow.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({ durationP50Sec: 7_200, durationP95Sec: 3 * 7_200 })
    } finally {
      stand.setLane(1, 10, { fillTimeSec: 2 })
      await client.close()
    }
  })

  it('stop() closes the client’s connections, and a start after it opens new ones', async () => {
    // A stand-in of its own: only this client's connections are counted.
    const own = await startAcrossStandIn()
    const client = createAcrossFeesClient({ url: own.url, ...quick })
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: own.url, clock: Date.now, log })
    try {
      await source.refresh()
      expect(await own.openConnections()).toBeGreaterThan(0)
      await source.stop()
      // Well before the stand-in's own keep-alive timeout (5 s) would close them.
      await vi.waitFor(async () => expect(await own.openConnections()).toBe(0), { timeout: 1000 })
      source.start(() => {})
      await source.refresh()
      const state = target(Date.now())
      source.apply(state)
      expect(state.laneGaps.size).toBe(0)
      expect(own.requests).toHaveLength(4)
    } finally {
      await source.stop()
      await own.close()
    }
  })

  it('a lane whose every size Across says is too low is a gap', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    const source = createAcrossLaneFees({ client, lanes: ethToOpt, apiUrl: stand.url, clock: Date.now, log })
    try {
      stand.setLane(1, 10, { minDeposit: 10n ** 15n })
      await source.refresh()
      const state = target(Date.now())
      source.apply(state)
      expect(state.laneGaps.get('across-usdc:ETH>OPT')).toBe(
        'its Across fees could not be read: Across says every amount read is too low for its fees',
      )
    } finally {
      stand.setLane(1, 10, { minDeposit: DEFAULT_LANE.minDeposit })
      await client.close()
    }
  })
})

describe('createAcrossLaneFees across a restart', () => {
  const lanes = acrossLanesOf(snapshot)
  const pick = (...ids: string[]) => ids.map((id) => lanes.find((lane) => lane.id === id) ?? expect.fail(id))
  const target = (nowMs: number) => {
    const bridgeFees: Record<string, Record<string, LaneFees>> = {}
    const laneGaps = new Map<string, string>()
    const chainStatuses = (['ETH', 'OPT', 'ARB'] as ChainCode[]).map((chain) => ({ chain, stale: [] as string[] }))
    const changes: number[] = []
    return { nowMs, bridgeFees, laneGaps, chainStatuses, changesAt: (sec: number) => changes.push(sec), changes }
  }
  /** A keeper in memory, with what was asked of it. */
  const memoryKeeper = (kept: KeptLaneRead[] = []) => {
    const saved: KeptLaneRead[] = []
    const forgotten: string[] = []
    const keeper: AcrossFeesKeeper = {
      save: async (read) => {
        saved.push(read)
      },
      forget: async (lane) => {
        forgotten.push(lane)
      },
      load: async (apiUrl, readSinceMs) => kept.filter((read) => read.apiUrl === apiUrl && read.readAtMs >= readSinceMs),
    }
    return { keeper, saved, forgotten }
  }

  it('keeps each lane’s reads once per lane read, and forgets a lane Across refuses', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick, attempts: 1 })
    const { keeper, saved, forgotten } = memoryKeeper()
    const source = createAcrossLaneFees({
      client,
      lanes: pick('across-usdc:ETH>OPT', 'across-usdc:ETH>ARB'),
      apiUrl: stand.url,
      clock: () => 5_000,
      log,
      keeper,
    })
    try {
      await source.refresh()
      expect(stand.requests).toHaveLength(4)
      await vi.waitFor(() => expect(saved).toHaveLength(2))
      expect(saved.find((read) => read.lane === 'across-usdc:ETH>OPT')).toMatchObject({
        apiUrl: stand.url,
        readAtMs: 5_000,
        figures: {
          query,
          reads: [
            { amount: '1000000000', fees: { estimatedFillTimeSec: 2, limits: { maxDepositInstant: String(DEFAULT_LANE.maxDeposit) } } },
            { amount: String(DEFAULT_LANE.maxDeposit) },
          ],
        },
      })
      stand.setLane(1, 10, { failWith: 400 })
      await source.refresh()
      await vi.waitFor(() => expect(forgotten).toEqual(['across-usdc:ETH>OPT']))
      // Not reachable is not a refusal: the kept read stands until it ages out.
      stand.setLane(1, 10, { failWith: 503 })
      await source.refresh()
      expect(forgotten).toEqual(['across-usdc:ETH>OPT'])
    } finally {
      stand.setLane(1, 10, { failWith: 0 })
      await client.close()
    }
  })

  it('stop() waits for the keeper’s writes under way and writes nothing after it, so the store can close', async () => {
    const client = createAcrossFeesClient({ url: stand.url, ...quick, attempts: 1 })
    const { keeper, saved } = memoryKeeper()
    let release = (): void => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const slowKeeper: AcrossFeesKeeper = { ...keeper, save: async (read) => held.then(() => keeper.save(read)) }
    const source = createAcrossLaneFees({
      client,
      lanes: pick('across-usdc:ETH>OPT'),
      apiUrl: stand.url,
      clock: () => 5_000,
      log,
      keeper: slowKeeper,
    })
    try {
      await source.refresh()
      let isStopped = false
      const stopping = source.stop().then(() => {
        isStopped = true
      })
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(isStopped).toBe(false)
      release()
      await stopping
      expect(saved).toHaveLength(1)
      // A lane read after stop() is served but not kept: the store may be closed by then.
      await source.refresh()
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(saved).toHaveLength(1)
    } finally {
      release()
      await client.close()
    }
  })

  it('prices a lane from a kept read with its real read time, and it ages out then, as if the process had never stopped', async () => {
    const readAtMs = 10_000_000
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    const first = memoryKeeper()
    const earlier = createAcrossLaneFees({
      client,
      lanes: pick('across-usdc:ETH>OPT'),
      apiUrl: stand.url,
      clock: () => readAtMs,
      log,
      keeper: first.keeper,
    })
    await earlier.refresh()
    await vi.waitFor(() => expect(first.saved).toHaveLength(1))
    await client.close()
    // Kept: that read, another of a lane whose tokens have changed since, and one from another API.
    const [kept] = first.saved
    if (kept === undefined) throw new Error('nothing kept')
    const { keeper } = memoryKeeper([
      kept,
      { ...kept, lane: 'across-usdc:ETH>ARB' },
      { ...kept, lane: 'across-usdc:OPT>ARB', apiUrl: 'https://elsewhere.example/api' },
    ])
    let now = readAtMs + 200_000
    const unreachable = createAcrossFeesClient({ url: 'http://127.0.0.1:1/api', attempts: 1 })
    const later = createAcrossLaneFees({
      client: unreachable,
      lanes: pick('across-usdc:ETH>OPT', 'across-usdc:ETH>ARB', 'across-usdc:OPT>ARB'),
      apiUrl: stand.url,
      clock: () => now,
      log,
      keeper,
    })
    try {
      expect(await later.restore()).toBe(1)
      const restored = target(now)
      later.apply(restored)
      expect(restored.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({
        quotedBy: 'across',
        maxAmount: DEFAULT_LANE.maxDeposit.toString(),
        source: expect.stringContaining(
          `/suggested-fees at ${new Date(readAtMs).toISOString()} (kept in the store from before this start)`,
        ),
      })
      expect(restored.changes).toEqual([(readAtMs + 300_000) / 1000])
      expect([...restored.laneGaps.keys()].sort()).toEqual(['across-usdc:ETH>ARB', 'across-usdc:OPT>ARB'])
      now = readAtMs + 300_001
      const aged = target(now)
      later.apply(aged)
      expect(aged.laneGaps.get('across-usdc:ETH>OPT')).toBe('its Across fees were read 300 s ago (max age 300 s)')
      // Restored later than that, the read is not taken at all.
      const late = createAcrossLaneFees({
        client: unreachable,
        lanes: pick('across-usdc:ETH>OPT'),
        apiUrl: stand.url,
        clock: () => now,
        log,
        keeper,
      })
      expect(await late.restore()).toBe(0)
    } finally {
      await unreachable.close()
    }
  })

  it('takes back the fill estimate and the instant limit with a kept read, and does not take a read kept without them', async () => {
    const readAtMs = 20_000_000
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    const first = memoryKeeper()
    stand.setLane(1, 10, { maxDepositInstant: 200_000n * USDC, fillTimeSec: 30 })
    try {
      await createAcrossLaneFees({
        client,
        lanes: pick('across-usdc:ETH>OPT'),
        apiUrl: stand.url,
        clock: () => readAtMs,
        log,
        keeper: first.keeper,
      }).refresh()
      await vi.waitFor(() => expect(first.saved).toHaveLength(1))
    } finally {
      stand.setLane(1, 10, { maxDepositInstant: DEFAULT_LANE.maxDeposit, fillTimeSec: 2 })
      await client.close()
    }
    const [kept] = first.saved
    if (kept === undefined) throw new Error('nothing kept')
    // As the store hands it back: JSON.
    const stored = JSON.parse(JSON.stringify(kept.figures)) as {
      reads: { fees: Record<string, unknown> & { limits: Record<string, unknown> } }[]
    }
    const withoutNew = structuredClone(stored)
    for (const { fees } of withoutNew.reads) {
      delete fees['estimatedFillTimeSec']
      delete fees.limits['maxDepositInstant']
    }
    const unreachable = createAcrossFeesClient({ url: 'http://127.0.0.1:1/api', attempts: 1 })
    const now = readAtMs + 100_000
    const later = createAcrossLaneFees({
      client: unreachable,
      lanes: pick('across-usdc:ETH>OPT', 'across-usdc:ETH>ARB'),
      apiUrl: stand.url,
      clock: () => now,
      log,
      keeper: memoryKeeper([
        { ...kept, figures: stored },
        {
          ...kept,
          lane: 'across-usdc:ETH>ARB',
          figures: {
            ...withoutNew,
            query: { ...query, destinationChainId: 42161, outputToken: pick('across-usdc:ETH>ARB')[0]?.query.outputToken },
          },
        },
      ]).keeper,
    })
    try {
      expect(await later.restore()).toBe(1)
      const restored = target(now)
      later.apply(restored)
      expect(restored.bridgeFees['across-usdc']?.['ETH>OPT']).toMatchObject({
        maxAmount: String(200_000n * USDC),
        durationP50Sec: 30,
        durationP95Sec: 90,
      })
      expect(restored.laneGaps.get('across-usdc:ETH>ARB')).toBe('its Across fees have not been read yet')
    } finally {
      await unreachable.close()
    }
  })

  it('reads the lanes with no usable figures first, at the warming rate in the first refresh only, then the others oldest first', async () => {
    const asked: { lane: string; isWarming: boolean }[] = []
    const fees = suggestedFeesFor(DEFAULT_LANE, 1000n * USDC)
    const part = (value: { pct: string; total: string }) => ({ pct: BigInt(value.pct), total: BigInt(value.total) })
    const answer = {
      totalRelayFee: part(fees.totalRelayFee),
      relayerCapitalFee: part(fees.relayerCapitalFee),
      relayerGasFee: part(fees.relayerGasFee),
      lpFee: part(fees.lpFee),
      isAmountTooLow: false,
      limits: { minDeposit: DEFAULT_LANE.minDeposit, maxDeposit: 1000n * USDC, maxDepositInstant: 1000n * USDC },
      estimatedFillTimeSec: 2,
    }
    const client: AcrossFeesClient = {
      suggestedFees: async (asking: SuggestedFeesQuery, options) => {
        asked.push({ lane: `${asking.originChainId}>${asking.destinationChainId}`, isWarming: options?.isWarming === true })
        return answer
      },
      requestsPerSecond: { steady: 5, warming: 10 },
      close: async () => {},
    }
    // ETH>OPT and ETH>ARB read by an earlier process (ETH>ARB first); OPT>ARB never.
    const seed = memoryKeeper()
    const now = 50_000_000
    for (const [id, atMs] of [
      ['across-usdc:ETH>ARB', now - 100_000],
      ['across-usdc:ETH>OPT', now - 50_000],
    ] as const) {
      const earlier = createAcrossLaneFees({ client, lanes: pick(id), apiUrl: 'x', clock: () => atMs, log, keeper: seed.keeper })
      await earlier.refresh()
    }
    await vi.waitFor(() => expect(seed.saved).toHaveLength(2))
    asked.length = 0
    const source = createAcrossLaneFees({
      client,
      lanes: pick('across-usdc:ETH>OPT', 'across-usdc:ETH>ARB', 'across-usdc:OPT>ARB'),
      apiUrl: 'x',
      clock: () => now,
      log,
      keeper: memoryKeeper(seed.saved).keeper,
    })
    expect(await source.restore()).toBe(2)
    // While the first refresh runs, a lane never read says it is being read and by when (its request slots, and a
    // second for Across to answer).
    const refreshing = source.refresh()
    const meanwhile = target(now)
    source.apply(meanwhile)
    expect(meanwhile.laneGaps.get('across-usdc:OPT>ARB')).toBe(
      `its Across fees are being read, the first read since start: expected by ${new Date(now + 200 + 1000).toISOString()}`,
    )
    // What a 503 reads back from it to say when to ask again.
    expect(acrossLaneExpectedByMs(meanwhile.laneGaps.get('across-usdc:OPT>ARB') ?? '')).toBe(now + 1200)
    expect(acrossLaneExpectedByMs('its Across fees have not been read yet')).toBeUndefined()
    await refreshing
    // One lane at a time is not guaranteed (four are read at once), but each lane's first request is in queue order.
    const firsts = [...new Map(asked.map((ask) => [ask.lane, ask])).values()]
    expect(firsts).toEqual([
      { lane: '10>42161', isWarming: true },
      { lane: '1>42161', isWarming: false },
      { lane: '1>10', isWarming: false },
    ])
    asked.length = 0
    await source.refresh()
    expect(asked.every((ask) => !ask.isWarming)).toBe(true)
  })

  it('a keeper that cannot be read restores nothing and says so; the lanes are read from Across', async () => {
    const lines: unknown[] = []
    const client = createAcrossFeesClient({ url: stand.url, ...quick })
    const source = createAcrossLaneFees({
      client,
      lanes: pick('across-usdc:ETH>OPT'),
      apiUrl: stand.url,
      clock: Date.now,
      log: pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) }),
      keeper: { ...memoryKeeper().keeper, load: () => Promise.reject(new Error('connection refused')) },
    })
    try {
      expect(await source.restore()).toBe(0)
      expect(lines).toEqual([expect.objectContaining({ event: 'market_across_restore_failed', err: 'connection refused' })])
      await source.refresh()
      const state = target(Date.now())
      source.apply(state)
      expect(state.laneGaps.size).toBe(0)
    } finally {
      await client.close()
    }
  })
})
