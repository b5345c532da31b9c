import { describe, expect, it } from 'vitest'
import { corridorAnswer, MIN_SAMPLE_SIZE, reliabilityBand } from '../../src/intel/corridorAnswer.ts'
import { parsePairCode } from '../../src/intel/parsePairCode.ts'
import type { PublishedPriorsReturnType } from '../../src/intel/publishedPriors.ts'
import { sizeBand } from '../../src/intel/sizeBand.ts'
import { E18 } from '../../src/engine/index.ts'
import { CorridorIntelligencePro } from '../../src/schemas/intelligence.ts'
import type { BridgeFigures, FailureFigures } from '../../src/store/createIntelStore.ts'

const pairOf = (code: string) => {
  const parsed = parsePairCode(code)
  if (!parsed.ok) throw new Error(parsed.message)
  return parsed.pair
}
const WINDOW = { since: new Date('2026-08-22T12:00:00Z'), until: new Date('2026-11-20T12:00:00Z') }
const PRIORS: PublishedPriorsReturnType = {
  bridges: [
    { bridge: 'across', settlementSec: { p50: 4, p95: 30 } },
    { bridge: 'cctp-v2-fast', settlementSec: { p50: 20, p95: 60 } },
  ],
  hasSameChainRoute: false,
}

function figures(bridge: string, settled: number, delivered: number, p50: number, overrides: Partial<BridgeFigures> = {}): BridgeFigures {
  return {
    bridge,
    settled,
    delivered,
    refunded: 0,
    failed: settled - delivered,
    pending: 0,
    notFound: 0,
    settledSec: { p50, p95: p50 * 3 },
    quotedSecP50: 5,
    slippageBps: { p50: 1, p95: 4 },
    band: null,
    ...overrides,
  }
}

const answer = (
  rows: BridgeFigures[],
  extra: {
    failures?: FailureFigures[]
    amount?: { text: string; band: ReturnType<typeof sizeBand> } | null
    pair?: string
    priors?: PublishedPriorsReturnType
  } = {},
) =>
  CorridorIntelligencePro.parse(
    corridorAnswer({
      pair: pairOf(extra.pair ?? 'BAS-ARB'),
      amount: extra.amount ?? null,
      figures: rows,
      failures: extra.failures ?? [],
      priors: extra.priors ?? PRIORS,
      window: WINDOW,
      now: WINDOW.until,
    }),
  )

describe('reliabilityBand and sizeBand', () => {
  it.each([
    [0, 0, 'unknown'],
    [98, 100, 'high'],
    [49, 50, 'high'],
    [97, 100, 'medium'],
    [9, 10, 'medium'],
    [89, 100, 'low'],
    [0, 3, 'low'],
  ] as const)('%i delivered of %i settled is %s', (delivered, settled, band) => {
    expect(reliabilityBand(delivered, settled)).toBe(band)
  })

  it.each([
    [0n, { minUsd: '0', maxUsd: '100' }],
    [99n * E18 + E18 - 1n, { minUsd: '0', maxUsd: '100' }],
    [100n * E18, { minUsd: '100', maxUsd: '1000' }],
    [9_999n * E18, { minUsd: '1000', maxUsd: '10000' }],
    [100_000n * E18, { minUsd: '100000', maxUsd: null }],
    [10n ** 30n * E18, { minUsd: '100000', maxUsd: null }],
  ])('%s (USD, 1e18) is in %o', (usd, band) => {
    expect(sizeBand(usd)).toEqual(band)
  })
})

describe('corridorAnswer', () => {
  it(`is observed from ${MIN_SAMPLE_SIZE} settled transfers, and published priors below, saying so`, () => {
    const below = answer([figures('across', 12, 12, 6), figures('cctp-v2-fast', MIN_SAMPLE_SIZE - 13, MIN_SAMPLE_SIZE - 13, 25)])
    expect(below).toMatchObject({
      basis: 'published_priors',
      sampleSize: MIN_SAMPLE_SIZE - 1,
      reliabilityBand: 'unknown',
      recommendedBridge: 'across',
    })
    expect(below.bridges).toEqual([
      {
        bridge: 'across',
        basis: 'published_priors',
        sampleSize: 12,
        successRateBps: null,
        settlementSec: { p50: 4, p95: 30 },
        quotedSecP50: null,
        slippageBps: null,
      },
      {
        bridge: 'cctp-v2-fast',
        basis: 'published_priors',
        sampleSize: 7,
        successRateBps: null,
        settlementSec: { p50: 20, p95: 60 },
        quotedSecP50: null,
        slippageBps: null,
      },
    ])
    expect(below.notes[0]).toBe(
      `Only 19 settled transfers in this corridor over the window (20 needed): figures are the bridges' published settlement-time priors, as each bridge states them, not measurements, and reliability is unknown.`,
    )
    expect(below.optimalRoute).toMatchObject({ bridge: 'across', basis: 'published_priors', scope: 'corridor' })

    const at = answer([figures('across', 12, 12, 6), figures('cctp-v2-fast', MIN_SAMPLE_SIZE - 12, MIN_SAMPLE_SIZE - 12, 25)])
    expect(at).toMatchObject({ basis: 'observed', sampleSize: MIN_SAMPLE_SIZE, reliabilityBand: 'high', recommendedBridge: 'across' })
    expect(at.bridges[0]).toEqual({
      bridge: 'across',
      basis: 'observed',
      sampleSize: 12,
      successRateBps: 10_000,
      settlementSec: { p50: 6, p95: 18 },
      quotedSecP50: 5,
      slippageBps: { p50: 1, p95: 4 },
    })
  })

  it('ranks the optimal route by reliability band before speed, among bridges with enough transfers', () => {
    const result = answer([
      figures('across', 40, 35, 3), // 87.5%: low, though fastest
      figures('cctp-v2-fast', 30, 30, 25), // high
      figures('stargate-v2-taxi', 4, 4, 2), // too few to rank
    ])
    expect(result.reliabilityBand).toBe('medium') // 69 of 74
    expect(result.recommendedBridge).toBe('cctp-v2-fast')
    expect(result.optimalRoute).toMatchObject({ bridge: 'cctp-v2-fast', basis: 'observed', scope: 'corridor', sampleSize: 74 })
    // A catalogued bridge with no observations is still listed, on its priors.
    expect(result.bridges.map((b) => [b.bridge, b.basis])).toEqual([
      ['across', 'observed'],
      ['cctp-v2-fast', 'observed'],
      ['stargate-v2-taxi', 'observed'],
    ])
    expect(answer([figures('cctp-v2-fast', 30, 30, 25)]).bridges.map((b) => [b.bridge, b.basis, b.sampleSize])).toEqual([
      ['cctp-v2-fast', 'observed', 30],
      ['across', 'published_priors', 0],
    ])
  })

  it("ranks within the amount's size band when the band has enough transfers, else over the corridor, and says which", () => {
    const band = sizeBand(20_000n * E18)
    const rows = [
      figures('across', 30, 30, 3, { band: { settled: 5, delivered: 3, settledSecP50: 3, slippageBpsP50: 9 } }),
      figures('cctp-v2-fast', 30, 30, 25, { band: { settled: 20, delivered: 20, settledSecP50: 24, slippageBpsP50: 0 } }),
    ]
    const inBand = answer(rows, { amount: { text: '20000', band } })
    expect(inBand.optimalRoute).toEqual({
      bridge: 'cctp-v2-fast',
      basis: 'observed',
      scope: 'amount_band',
      amountBandUsd: { min: '10000', max: '100000' },
      sampleSize: 25,
      reason:
        'Transfers of 10000 to 100000 USD: most reliable, then fastest median settlement, then least median slippage, among bridges with at least 5 settled transfers.',
    })
    expect(inBand.recommendedBridge).toBe('cctp-v2-fast')
    expect(inBand.notes).toContain(
      'amount was read as USD because BAS is a chain; use a currency code as the source side (for example EUR-ARB) to give it in that currency.',
    )

    const thin = rows.map((row) => ({ ...row, band: { settled: 2, delivered: 2, settledSecP50: 1, slippageBpsP50: 0 } }))
    const overCorridor = answer(thin, { amount: { text: '20000', band } })
    expect(overCorridor.optimalRoute).toMatchObject({ bridge: 'across', scope: 'corridor', sampleSize: 60 })
    expect(overCorridor.optimalRoute.reason).toMatch(
      /^Only 4 settled transfers of 10000 to 100000 USD \(20 needed\), so ranked over the whole corridor/,
    )
  })

  it('folds failures by outcome with their bridges, share of all observations and latest reason', () => {
    const result = answer([figures('across', 30, 27, 3, { pending: 2, notFound: 1 }), figures('cctp-v2-fast', 10, 9, 20)], {
      failures: [
        {
          status: 'FAILED',
          substatus: 'SLIPPAGE_EXCEEDED',
          bridge: 'across',
          count: 2,
          lastSeenAt: '2026-11-02T00:00:00.000Z',
          exampleReason: 'old',
        },
        {
          status: 'FAILED',
          substatus: 'SLIPPAGE_EXCEEDED',
          bridge: 'cctp-v2-fast',
          count: 1,
          lastSeenAt: '2026-11-05T00:00:00.000Z',
          exampleReason: 'new',
        },
        {
          status: 'PENDING',
          substatus: 'WAIT_DESTINATION_TRANSACTION',
          bridge: 'across',
          count: 2,
          lastSeenAt: '2026-11-19T00:00:00.000Z',
          exampleReason: null,
        },
        { status: 'NOT_FOUND', substatus: null, bridge: 'across', count: 1, lastSeenAt: '2026-11-18T00:00:00.000Z', exampleReason: null },
        {
          status: 'FAILED',
          substatus: 'EXPIRED',
          bridge: 'across',
          count: 1,
          lastSeenAt: '2026-11-01T00:00:00.000Z',
          exampleReason: 'deadline',
        },
      ],
    })
    expect(result.failurePatterns).toEqual([
      {
        status: 'FAILED',
        substatus: 'SLIPPAGE_EXCEEDED',
        count: 3,
        shareBps: 697,
        bridges: [
          { bridge: 'across', count: 2 },
          { bridge: 'cctp-v2-fast', count: 1 },
        ],
        lastSeenAt: '2026-11-05T00:00:00.000Z',
        exampleReason: 'new',
      },
      {
        status: 'PENDING',
        substatus: 'WAIT_DESTINATION_TRANSACTION',
        count: 2,
        shareBps: 465,
        bridges: [{ bridge: 'across', count: 2 }],
        lastSeenAt: '2026-11-19T00:00:00.000Z',
        exampleReason: null,
      },
      {
        status: 'FAILED',
        substatus: 'EXPIRED',
        count: 1,
        shareBps: 232,
        bridges: [{ bridge: 'across', count: 1 }],
        lastSeenAt: '2026-11-01T00:00:00.000Z',
        exampleReason: 'deadline',
      },
      {
        status: 'NOT_FOUND',
        substatus: null,
        count: 1,
        shareBps: 232,
        bridges: [{ bridge: 'across', count: 1 }],
        lastSeenAt: '2026-11-18T00:00:00.000Z',
        exampleReason: null,
      },
    ])
    expect(result.outcomes).toEqual({ delivered: 36, refunded: 0, failed: 4, pending: 2, notFound: 1 })
  })

  it('recommends no bridge for a same-chain pair, and nothing where no bridge joins the sides', () => {
    expect(answer([], { pair: 'POL-POL', priors: { bridges: [], hasSameChainRoute: true } }).optimalRoute).toMatchObject({
      bridge: 'none',
      reason: 'A same-chain swap: no bridge joins the two sides.',
    })
    const none = answer([], { pair: 'BAS-TRX', priors: { bridges: [], hasSameChainRoute: false } })
    expect(none).toMatchObject({ recommendedBridge: null, basis: 'published_priors', sampleSize: 0, bridges: [], failurePatterns: [] })
    expect(none.optimalRoute.reason).toBe('No catalogued bridge joins BAS and TRX.')
  })
})
