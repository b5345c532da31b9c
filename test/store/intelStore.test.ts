import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import type { BuiltSwap, CorridorQuery, Observation } from '../../src/store/createIntelStore.ts'
import type { PaymentReservation, Store, SwapRecord } from '../../src/store/createStore.ts'
import { type OpenedStore, storeDrivers } from './storeDrivers.ts'

const OPEN_TIMEOUT_MS = 120_000
const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
const SINCE = new Date('2026-08-22T12:00:00Z')
const UNTIL = new Date('2026-11-20T12:00:00Z')

/** A delivered USDC transfer on a corridor, with the fields a test does not care about fixed. */
function observation(fromChain: ChainCode, toChain: ChainCode, overrides: Partial<Observation> = {}): Observation {
  return {
    id: `obs_${hex(8)}`,
    observedAt: new Date('2026-11-10T10:00:00Z'),
    fromChain,
    toChain,
    fromToken: 'USDC',
    toToken: 'USDC',
    fromCurrency: 'USD',
    toCurrency: 'USD',
    bridge: 'across',
    amount: '1000',
    amountUsd: '1000',
    quotedDurationSec: 4,
    settledDurationSec: 5,
    realisedSlippageBps: 1,
    status: 'DONE',
    substatus: 'COMPLETED',
    failureReason: null,
    source: 'import',
    ...overrides,
  }
}

const chainQuery = (from: ChainCode, to: ChainCode, band: CorridorQuery['band'] = null): CorridorQuery => ({
  from: { kind: 'chain', code: from },
  to: { kind: 'chain', code: to },
  since: SINCE,
  until: UNTIL,
  band,
})

/** percentile_disc by its definition: the first value whose cumulative share reaches the fraction. */
const percentileDisc = (values: readonly number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN
}

describe.each(storeDrivers())('intel store on $name', (driver) => {
  let opened: OpenedStore | undefined
  beforeAll(async () => {
    opened = await driver.open()
  }, OPEN_TIMEOUT_MS)
  afterAll(async () => {
    await opened?.cleanup()
  }, OPEN_TIMEOUT_MS)
  const store = (): Store => {
    if (opened === undefined) throw new Error('the store did not open')
    return opened.store
  }
  const countObservations = async (id: string): Promise<number> => {
    const [row] = await store().sql.query<{ n: number }>('select count(*)::int as n from observations where id = $1', [id])
    return row?.n ?? -1
  }

  describe('importObservations', () => {
    it('inserts every batch, skips ids already stored, and keeps amounts exactly', async () => {
      const a = observation('OPT', 'BNB', { amount: '123456789012345678901234.123456789012345678', amountUsd: '0.000001' })
      const b = observation('OPT', 'BNB')
      expect(await store().intel.importObservations([[a], [b]])).toEqual({ inserted: 2, skipped: 0 })
      expect(await store().intel.importObservations([[a, observation('OPT', 'BNB', { id: a.id, bridge: 'cctp-v2-fast' })]])).toEqual({
        inserted: 0,
        skipped: 2,
      })
      const [row] = await store().sql.query<{ amount: string; amount_usd: string; bridge: string }>(
        'select amount::text as amount, amount_usd::text as amount_usd, bridge from observations where id = $1',
        [a.id],
      )
      expect(row).toEqual({ amount: '123456789012345678901234.123456789012345678', amount_usd: '0.000001', bridge: 'across' })
    })

    it('writes nothing when a later batch throws: one transaction', async () => {
      const first = observation('OPT', 'BNB')
      async function* batches(): AsyncGenerator<Observation[]> {
        yield [first]
        throw new Error('line 2: amount is invalid')
      }
      await expect(store().intel.importObservations(batches())).rejects.toThrow('line 2: amount is invalid')
      expect(await countObservations(first.id)).toBe(0)
    })

    it('is refused by the schema for an unknown status or a non-positive amount', async () => {
      await expect(store().intel.importObservations([[observation('OPT', 'BNB', { amount: '0' })]])).rejects.toThrow(/check constraint/)
      await expect(
        store().intel.importObservations([[observation('OPT', 'BNB', { status: 'INVALID' as Observation['status'] })]]),
      ).rejects.toThrow(/check constraint/)
    })
  })

  describe('corridorBridges', () => {
    it('computes counts and percentiles per bridge in the database, matching percentile_disc by hand', async () => {
      const settled = [3, 9, 1, 27, 14, 8, 8, 30, 2, 5, 11, 19]
      const slippage = [0, 2, -1, 5, 3, 1, 1, 9, 0, 2, 4, 6]
      const rows = [
        ...settled.map((sec, i) =>
          observation('POL', 'OPT', { settledDurationSec: sec, realisedSlippageBps: slippage[i] ?? 0, quotedDurationSec: 4 + (i % 3) }),
        ),
        observation('POL', 'OPT', {
          status: 'FAILED',
          substatus: 'SLIPPAGE_EXCEEDED',
          settledDurationSec: null,
          realisedSlippageBps: null,
        }),
        observation('POL', 'OPT', { status: 'DONE', substatus: 'REFUNDED', settledDurationSec: 999, realisedSlippageBps: 500 }),
        observation('POL', 'OPT', { status: 'PENDING', substatus: 'WAIT_DESTINATION_TRANSACTION', settledDurationSec: null }),
        observation('POL', 'OPT', { status: 'NOT_FOUND', substatus: null, settledDurationSec: null }),
        observation('POL', 'OPT', { bridge: 'stargate-v2-taxi', settledDurationSec: 40, realisedSlippageBps: 6 }),
      ]
      await store().intel.importObservations([rows])
      const figures = await store().intel.corridorBridges(chainQuery('POL', 'OPT'))
      expect(figures.map((f) => f.bridge)).toEqual(['across', 'stargate-v2-taxi'])
      expect(figures[0]).toEqual({
        bridge: 'across',
        settled: 14,
        delivered: 12,
        refunded: 1,
        failed: 1,
        pending: 1,
        notFound: 1,
        // The refunded transfer's 999 s and 500 bps are not a delivery, so they stay out of the percentiles.
        settledSec: { p50: percentileDisc(settled, 0.5), p95: percentileDisc(settled, 0.95) },
        quotedSecP50: percentileDisc(
          settled.map((_, i) => 4 + (i % 3)),
          0.5,
        ),
        slippageBps: { p50: percentileDisc(slippage, 0.5), p95: percentileDisc(slippage, 0.95) },
        band: null,
      })
      expect(figures[0]?.settledSec).toEqual({ p50: 8, p95: 30 })
      expect(figures[1]).toMatchObject({ settled: 1, delivered: 1, settledSec: { p50: 40, p95: 40 } })
    })

    it("matches a chain side by chain and a currency side by the tokens' currency, within the window", async () => {
      await store().intel.importObservations([
        [
          observation('ARB', 'GNO', { toToken: 'EURe', toCurrency: 'EUR', settledDurationSec: 50 }),
          observation('ARB', 'GNO', { toToken: 'USDC.e', toCurrency: 'USD', settledDurationSec: 60 }),
          observation('ARB', 'POL', { toToken: 'EURe', toCurrency: 'EUR', settledDurationSec: 70 }),
          observation('ARB', 'POL', {
            toToken: 'EURe',
            toCurrency: 'EUR',
            settledDurationSec: 80,
            observedAt: new Date('2026-08-01T00:00:00Z'),
          }),
          observation('ARB', 'POL', {
            toToken: 'EURe',
            toCurrency: 'EUR',
            settledDurationSec: 90,
            observedAt: new Date('2026-11-21T00:00:00Z'),
          }),
        ],
      ])
      const arbToEur = await store().intel.corridorBridges({ ...chainQuery('ARB', 'GNO'), to: { kind: 'currency', code: 'EUR' } })
      expect(arbToEur).toMatchObject([{ bridge: 'across', settled: 2, settledSec: { p50: 50, p95: 70 } }])
      const arbToGno = await store().intel.corridorBridges(chainQuery('ARB', 'GNO'))
      expect(arbToGno).toMatchObject([{ settled: 2, settledSec: { p50: 50, p95: 60 } }])
      expect(await store().intel.corridorBridges(chainQuery('GNO', 'ARB'))).toEqual([])
    })

    it('adds size-band figures over [min, max) in USD when a band is asked', async () => {
      await store().intel.importObservations([
        [
          observation('BNB', 'OPT', { amountUsd: '99.999999', settledDurationSec: 1 }),
          observation('BNB', 'OPT', { amountUsd: '100', settledDurationSec: 10 }),
          observation('BNB', 'OPT', { amountUsd: '999.99', settledDurationSec: 20, realisedSlippageBps: 7 }),
          observation('BNB', 'OPT', { amountUsd: '1000', settledDurationSec: 30 }),
          observation('BNB', 'OPT', { amountUsd: '500', status: 'FAILED', substatus: 'EXPIRED', settledDurationSec: null }),
        ],
      ])
      const [bounded] = await store().intel.corridorBridges(chainQuery('BNB', 'OPT', { minUsd: '100', maxUsd: '1000' }))
      expect(bounded?.band).toEqual({ settled: 3, delivered: 2, settledSecP50: 10, slippageBpsP50: 1 })
      const [open] = await store().intel.corridorBridges(chainQuery('BNB', 'OPT', { minUsd: '1000', maxUsd: null }))
      expect(open?.band).toEqual({ settled: 1, delivered: 1, settledSecP50: 30, slippageBpsP50: 1 })
      expect(open?.settled).toBe(5)
    })
  })

  describe('corridorFailures', () => {
    it('groups undelivered transfers by status, substatus and bridge with the latest reason', async () => {
      await store().intel.importObservations([
        [
          observation('CEL', 'ARB', {
            status: 'FAILED',
            substatus: 'OUT_OF_GAS',
            settledDurationSec: null,
            failureReason: 'older',
            observedAt: new Date('2026-11-01T00:00:00Z'),
          }),
          observation('CEL', 'ARB', {
            status: 'FAILED',
            substatus: 'OUT_OF_GAS',
            settledDurationSec: null,
            failureReason: 'newer',
            observedAt: new Date('2026-11-02T00:00:00Z'),
          }),
          observation('CEL', 'ARB', {
            status: 'FAILED',
            substatus: 'OUT_OF_GAS',
            settledDurationSec: null,
            failureReason: null,
            observedAt: new Date('2026-11-03T00:00:00Z'),
          }),
          observation('CEL', 'ARB', { status: 'DONE', substatus: 'REFUNDED', settledDurationSec: null, bridge: 'usdt0-oft-legacy-mesh' }),
          observation('CEL', 'ARB'),
          observation('CEL', 'ARB', { substatus: 'PARTIAL' }),
        ],
      ])
      expect(await store().intel.corridorFailures(chainQuery('CEL', 'ARB'))).toEqual([
        {
          status: 'FAILED',
          substatus: 'OUT_OF_GAS',
          bridge: 'across',
          count: 3,
          lastSeenAt: '2026-11-03T00:00:00.000Z',
          exampleReason: 'newer',
        },
        {
          status: 'DONE',
          substatus: 'REFUNDED',
          bridge: 'usdt0-oft-legacy-mesh',
          count: 1,
          lastSeenAt: '2026-11-10T10:00:00.000Z',
          exampleReason: null,
        },
      ])
    })
  })

  describe('countCall', () => {
    it('counts up to the limit and refuses past it, per subject and period', async () => {
      const subject = `intel:ip:${hex(8)}`
      expect(await store().intel.countCall(subject, '2026-11', 2)).toBe(1)
      expect(await store().intel.countCall(subject, '2026-11', 2)).toBe(2)
      expect(await store().intel.countCall(subject, '2026-11', 2)).toBeUndefined()
      expect(await store().intel.countCall(subject, '2026-12', 2)).toBe(1)
      expect(await store().intel.usage('2026-11', subject)).toEqual([{ subject, calls: 2 }])
    })

    it('gives exactly `limit` calls to 60 concurrent callers, and meters without a limit', async () => {
      const subject = `intel:ip:${hex(8)}`
      const results = await Promise.all(Array.from({ length: 60 }, () => store().intel.countCall(subject, '2026-11', 25)))
      expect(results.filter((calls) => calls !== undefined).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        Array.from({ length: 25 }, (_, i) => i + 1),
      )
      const key = `intel:key:key_${hex(12)}`
      const metered = await Promise.all(Array.from({ length: 30 }, () => store().intel.countCall(key, '2026-11')))
      expect(Math.max(...metered.map(Number))).toBe(30)
    })

    it('lists usage by subject prefix for one period only', async () => {
      const prefix = `intel:key:${hex(4)}`
      await store().intel.countCall(`${prefix}a`, '2026-10')
      await store().intel.countCall(`${prefix}b`, '2026-10')
      await store().intel.countCall(`${prefix}b`, '2026-10')
      await store().intel.countCall(`${prefix}b`, '2026-11')
      expect(await store().intel.usage('2026-10', prefix)).toEqual([
        { subject: `${prefix}a`, calls: 1 },
        { subject: `${prefix}b`, calls: 2 },
      ])
      expect(await store().intel.usage('2026-09', prefix)).toEqual([])
    })
  })

  describe('completeSwap and pendingSwaps', () => {
    const quote = { bridge: 'across', estimatedDuration: 4, route: { steps: [{ type: 'bridge', id: 'across-usdc' }] } }
    async function builtSwap(createdAt: Date): Promise<string> {
      const ref = `swp_${hex(8)}`
      const payer = `0x${hex(20)}`
      const reservation: PaymentReservation = {
        payer,
        nonce: `0x${hex(32)}`,
        value: 20_000n,
        asset: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
        payTo: '0x2222222222222222222222222222222222222222',
        validAfter: 0n,
        validBefore: 2n ** 40n,
        signature: `0x${hex(65)}`,
        settlementMode: 'ledger',
        swapRef: ref,
        reservedAt: createdAt,
      }
      const swap: SwapRecord = {
        ref,
        channel: 'x402',
        status: 'built',
        fromChain: 'BAS',
        toChain: 'ARB',
        fromToken: 'USDC',
        toToken: 'USDC',
        fromAmount: '2500.5',
        toAmount: '2487.9975',
        toAmountMin: '2475.5575',
        fromAddress: payer,
        toAddress: payer,
        quote,
        transactionRequest: { to: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e', data: '0x', value: '0', chainId: 8453 },
        createdAt,
      }
      expect(await store().recordSettledSwap(reservation, { transaction: `ledger:${ref}`, settledAt: createdAt }, swap)).toBe(true)
      return ref
    }

    it('lists built swaps oldest first, and a completed swap leaves the list with its observation recorded', async () => {
      const older = await builtSwap(new Date('2026-01-01T00:00:00Z'))
      const newer = await builtSwap(new Date('2026-01-01T00:00:01Z'))
      const future = await builtSwap(new Date('2026-01-03T00:00:00Z'))
      const pending = await store().intel.pendingSwaps({ createdBefore: new Date('2026-01-02T00:00:00Z'), limit: 1000 })
      const refs = pending.map((swap) => swap.ref)
      expect(refs.indexOf(older)).toBeGreaterThanOrEqual(0)
      expect(refs.indexOf(older)).toBeLessThan(refs.indexOf(newer))
      expect(refs).not.toContain(future)
      expect(pending.find((swap) => swap.ref === older)).toMatchObject({
        fromChain: 'BAS',
        toChain: 'ARB',
        fromAmount: '2500.5',
        bridge: 'across',
        createdAt: '2026-01-01T00:00:00.000Z',
      })

      let seen: BuiltSwap | undefined
      const outcome = await store().intel.completeSwap(older, (swap) => {
        seen = swap
        return observation('BAS', 'ARB', {
          id: swap.ref,
          amount: swap.fromAmount,
          amountUsd: '2500.5',
          source: 'tracker',
          settledDurationSec: 7,
        })
      })
      expect(seen).toEqual({
        ref: older,
        fromChain: 'BAS',
        toChain: 'ARB',
        fromToken: 'USDC',
        toToken: 'USDC',
        fromAmount: '2500.5',
        quote,
        createdAt: '2026-01-01T00:00:00.000Z',
      })
      expect(outcome).toMatchObject({ ok: true, swapStatus: 'done', observation: { id: older, settledDurationSec: 7 } })
      expect((await store().getSwap(older))?.status).toBe('done')
      expect(await countObservations(older)).toBe(1)
      const after = await store().intel.pendingSwaps({ createdBefore: new Date('2026-01-02T00:00:00Z'), limit: 1000 })
      expect(after.map((swap) => swap.ref)).not.toContain(older)
      expect(after.map((swap) => swap.ref)).toContain(newer)

      expect(await store().intel.completeSwap(older, () => observation('BAS', 'ARB'))).toEqual({
        ok: false,
        reason: 'not_pending',
        status: 'done',
      })
      expect(await store().intel.completeSwap('swp_unknown', () => observation('BAS', 'ARB'))).toEqual({ ok: false, reason: 'not_found' })
    })

    it('moves the swap to its outcome, and rolls back both writes when the observation cannot be recorded', async () => {
      const refunded = await builtSwap(new Date('2026-01-05T00:00:00Z'))
      expect(
        await store().intel.completeSwap(refunded, (swap) =>
          observation('BAS', 'ARB', { id: swap.ref, status: 'DONE', substatus: 'REFUNDED', settledDurationSec: null }),
        ),
      ).toMatchObject({ ok: true, swapStatus: 'refunded' })

      const clash = await builtSwap(new Date('2026-01-05T00:00:01Z'))
      await expect(store().intel.completeSwap(clash, () => observation('BAS', 'ARB', { id: refunded }))).rejects.toThrow(
        `an observation ${refunded} is already recorded`,
      )
      expect((await store().getSwap(clash))?.status).toBe('built')

      await expect(
        store().intel.completeSwap(clash, (swap) =>
          observation('BAS', 'ARB', { id: swap.ref, status: 'PENDING', substatus: 'WAIT_SOURCE_CONFIRMATIONS' }),
        ),
      ).rejects.toThrow('a PENDING transfer has not completed')
      expect(await countObservations(clash)).toBe(0)
      expect((await store().getSwap(clash))?.status).toBe('built')
    })
  })
})
