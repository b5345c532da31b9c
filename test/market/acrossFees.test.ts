// Across's suggested fees read through the real client (undici, keep-alive, retries, spacing) from a local stand-in
// in the API's shape, the fee model derived from them, and the lane source that turns them into market figures.
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { ceilDiv, compileCatalogue } from '../../src/engine/index.ts'
import { AcrossApiError, createAcrossFeesClient, laneFeeModel, type SizedFees } from '../../src/market/acrossFees.ts'
import { acrossLanesOf, createAcrossLaneFees } from '../../src/market/acrossLaneFees.ts'
import type { ChainCode, LaneFees } from '../../src/schemas/catalogue.ts'
import { type AcrossStandIn, DEFAULT_LANE, type StandInLane, startAcrossStandIn, suggestedFeesFor } from './acrossStandIn.ts'

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
      expect(fees.limits).toEqual({ minDeposit: DEFAULT_LANE.minDeposit, maxDeposit: DEFAULT_LANE.maxDeposit })
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

  it('spaces its requests: 6 at 20 a second take at least 250 ms', async () => {
    const client = createAcrossFeesClient({ url: stand.url, maxRequestsPerSecond: 20 })
    try {
      await Promise.all(Array.from({ length: 6 }, () => client.suggestedFees({ ...query, amount: USDC })))
      const times = stand.requests.map((request) => request.atMs)
      expect((times.at(-1) ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(240)
      for (let i = 1; i < times.length; i++) expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(35)
    } finally {
      await client.close()
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
      limits: { minDeposit: BigInt(fees.limits.minDeposit), maxDeposit: BigInt(fees.limits.maxDeposit) },
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
