import { randomBytes } from 'node:crypto'
import { getAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PaymentReservation, Store, SwapRecord } from '../../src/store/createStore.ts'
import { MIGRATIONS, migrate } from '../../src/store/migrations.ts'
import { type OpenedStore, storeDrivers } from './storeDrivers.ts'

const OPEN_TIMEOUT_MS = 120_000
const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const PAY_TO = '0x2222222222222222222222222222222222222222'
const MAX_UINT256 = 2n ** 256n - 1n

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
/** A checksummed (mixed-case) address, so lowercasing by the store is visible. */
const randomAddress = (): string => getAddress(`0x${hex(20)}`)
/** A 32-byte nonce in upper case, as some clients send it. */
const randomNonce = (): string => `0x${hex(32).toUpperCase()}`
const randomRef = (): string => `swp_${hex(8)}`
const upperHex = (value: string): string => `0x${value.slice(2).toUpperCase()}`

/** A reservation with every field distinct from its default and a fresh (payer, nonce). */
function reservation(overrides: Partial<PaymentReservation> = {}): PaymentReservation {
  return {
    payer: randomAddress(),
    nonce: randomNonce(),
    value: 20_000n,
    asset: USDC_BASE,
    payTo: getAddress(PAY_TO),
    validAfter: 1_795_000_000n,
    validBefore: 2n ** 64n - 1n,
    signature: `0x${hex(65)}Ab`,
    settlementMode: 'ledger',
    swapRef: randomRef(),
    reservedAt: new Date('2026-11-20T12:00:00.123Z'),
    ...overrides,
  }
}

function swapRecord(ref: string, overrides: Partial<SwapRecord> = {}): SwapRecord {
  return {
    ref,
    channel: 'x402',
    status: 'built',
    fromChain: 'ETH',
    toChain: 'BAS',
    fromToken: 'USDC',
    toToken: 'USDT',
    fromAmount: '1000',
    toAmount: '999.123456',
    toAmountMin: '994.127838',
    fromAddress: randomAddress(),
    toAddress: randomAddress(),
    quote: {
      id: `q_${hex(4)}`,
      route: {
        id: 'r1',
        steps: [
          { kind: 'swap', venue: 'curve', fee: 0.0004 },
          { kind: 'bridge', venue: 'cctp', fee: null },
        ],
      },
      amounts: ['1000', '999.123456'],
      isExecutable: true,
      note: 'naïve ✓ "quoted"',
      empty: {},
    },
    transactionRequest: {
      from: '0x1111111111111111111111111111111111111111',
      to: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e',
      data: `0x${hex(100)}`,
      value: '0',
      chainId: 1,
    },
    createdAt: new Date('2026-11-20T12:00:01.456Z'),
    ...overrides,
  }
}

const settlementOf = (r: PaymentReservation, transaction = `ledger:${r.swapRef}`) => ({
  payer: r.payer,
  nonce: r.nonce,
  transaction,
  settledAt: new Date('2026-11-20T12:00:02.789Z'),
})

describe.each(storeDrivers())('store on $name', (driver) => {
  let opened: OpenedStore | undefined
  beforeAll(async () => {
    // From scratch, so that `migrate` below is tested on a database that has never seen it.
    opened = await driver.open({ fromScratch: true })
  }, OPEN_TIMEOUT_MS)
  afterAll(async () => {
    await opened?.cleanup()
  }, OPEN_TIMEOUT_MS)

  const current = (): OpenedStore => {
    if (opened === undefined) throw new Error('the store did not open')
    return opened
  }
  const store = (): Store => current().store
  const countSwapsOf = async (payer: string): Promise<number> => {
    const [row] = await current().sql.query<{ n: number }>('select count(*)::int as n from swaps where payer = $1', [payer.toLowerCase()])
    return row?.n ?? -1
  }
  const countPaymentsOf = async (payer: string): Promise<number> => {
    const [row] = await current().sql.query<{ n: number }>('select count(*)::int as n from x402_payments where payer = $1', [
      payer.toLowerCase(),
    ])
    return row?.n ?? -1
  }

  describe('migrate', () => {
    it('applies every migration on a fresh store, then nothing, and lists each once', async () => {
      const { sql, applied } = current()
      expect(MIGRATIONS.length).toBeGreaterThan(0)
      expect(applied).toEqual(MIGRATIONS.map((m) => m.id))
      expect(await migrate(sql)).toEqual([])
      expect(await migrate(sql)).toEqual([])
      const rows = await sql.query<{ id: number; name: string }>('select id, name from schema_migrations order by id')
      expect(rows).toEqual(MIGRATIONS.map(({ id, name }) => ({ id, name })))
    })

    it('leaves swaps with neither the payment foreign key nor the address index that migration 1 created and 7 drops', async () => {
      const { sql } = current()
      const keys = await sql.query<{ n: number }>(
        `select count(*)::int as n from pg_constraint where conrelid = 'swaps'::regclass and contype = 'f'`,
      )
      const indexes = await sql.query<{ indexname: string }>(
        `select indexname from pg_indexes where tablename = 'swaps' order by indexname`,
      )
      expect(keys).toEqual([{ n: 0 }])
      expect(indexes.map((row) => row.indexname)).not.toContain('swaps_from_address_created')
      expect(indexes.map((row) => row.indexname)).toContain('swaps_pkey')
    })
  })

  describe('reservePayment', () => {
    it('claims (payer, nonce) once, whatever the case of either', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      expect(await store().reservePayment(r)).toBe(false)
      expect(await store().reservePayment({ ...r, swapRef: randomRef() })).toBe(false)
      expect(await store().reservePayment({ ...r, payer: r.payer.toLowerCase(), swapRef: randomRef() })).toBe(false)
      expect(await store().reservePayment({ ...r, payer: upperHex(r.payer), swapRef: randomRef() })).toBe(false)
      expect(await store().reservePayment({ ...r, nonce: r.nonce.toLowerCase(), swapRef: randomRef() })).toBe(false)
      expect(await store().reservePayment({ ...r, payer: r.payer.toLowerCase(), nonce: r.nonce.toLowerCase(), swapRef: randomRef() })).toBe(
        false,
      )
      expect(await countPaymentsOf(r.payer)).toBe(1)
      expect(await store().getPayment(r.payer.toLowerCase(), r.nonce.toLowerCase())).toMatchObject({
        payer: r.payer.toLowerCase(),
        nonce: r.nonce.toLowerCase(),
        swapRef: r.swapRef,
        status: 'reserved',
      })
    })

    it('keys on the pair: another nonce of the payer, or the nonce of another payer, is free', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      expect(await store().reservePayment({ ...r, nonce: randomNonce(), swapRef: randomRef() })).toBe(true)
      const otherPayer = randomAddress()
      expect(await store().reservePayment({ ...r, payer: otherPayer, swapRef: randomRef() })).toBe(true)
      expect(await countPaymentsOf(r.payer)).toBe(2)
      expect(await countPaymentsOf(otherPayer)).toBe(1)
    })

    it('gives exactly one true to 50 concurrent reservations of one (payer, nonce)', async () => {
      const r = reservation()
      const refs = Array.from({ length: 50 }, (_, i) => `${r.swapRef}_${i}`)
      const outcomes = await Promise.all(
        refs.map((swapRef, i) =>
          store().reservePayment({
            ...r,
            swapRef,
            payer: i % 2 === 0 ? r.payer : r.payer.toLowerCase(),
            nonce: i % 3 === 0 ? r.nonce : r.nonce.toLowerCase(),
          }),
        ),
      )
      expect(outcomes.filter((isReserved) => isReserved)).toHaveLength(1)
      const winner = outcomes.indexOf(true)
      expect((await store().getPayment(r.payer, r.nonce))?.swapRef).toBe(refs[winner])
      expect(await countPaymentsOf(r.payer)).toBe(1)
    })
  })

  describe('releasePayment', () => {
    it('gives the reservation back to the swap that holds it, case-insensitively, so it can pay again', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().releasePayment(upperHex(r.payer), r.nonce.toLowerCase(), r.swapRef)
      expect(await store().getPayment(r.payer, r.nonce)).toBeUndefined()
      const again = { ...r, swapRef: randomRef() }
      expect(await store().reservePayment(again)).toBe(true)
      expect((await store().getPayment(r.payer, r.nonce))?.swapRef).toBe(again.swapRef)
    })

    it('does not release a reservation held for another swap', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().releasePayment(r.payer, r.nonce, randomRef())
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'reserved', swapRef: r.swapRef })
      expect(await store().reservePayment({ ...r, swapRef: randomRef() })).toBe(false)
    })

    it('does not release a settled payment', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().recordPaidSwap(settlementOf(r), swapRecord(r.swapRef))
      await store().releasePayment(r.payer, r.nonce, r.swapRef)
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'settled', swapRef: r.swapRef })
      expect(await store().reservePayment({ ...r, swapRef: randomRef() })).toBe(false)
      expect((await store().getSwap(r.swapRef))?.payment).toEqual({ payer: r.payer.toLowerCase(), nonce: r.nonce.toLowerCase() })
    })
  })

  describe('markPaymentUnsettled', () => {
    it('keeps a reservation as unsettled with the transaction and error to reconcile', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().markPaymentUnsettled(r.payer.toLowerCase(), r.nonce.toLowerCase(), {
        transaction: '0xabc123',
        error: 'receipt timed out',
      })
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({
        status: 'unsettled',
        transaction: '0xabc123',
        error: 'receipt timed out',
        settledAt: null,
        swapRef: r.swapRef,
      })
      // Still spent: neither a new reservation nor a release takes it, and it cannot be recorded as settled.
      expect(await store().reservePayment({ ...r, swapRef: randomRef() })).toBe(false)
      await store().releasePayment(r.payer, r.nonce, r.swapRef)
      await expect(store().recordPaidSwap(settlementOf(r), swapRecord(r.swapRef))).rejects.toThrow(/is not reserved/)
      expect(await store().getSwap(r.swapRef)).toBeUndefined()
      expect((await store().getPayment(r.payer, r.nonce))?.status).toBe('unsettled')
    })

    it('records a null transaction when none is known', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().markPaymentUnsettled(r.payer, r.nonce, { error: 'facilitator unreachable' })
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({
        status: 'unsettled',
        transaction: null,
        error: 'facilitator unreachable',
      })
    })

    it('changes neither a settled payment nor an absent one', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().recordPaidSwap(settlementOf(r, '0xsettled'), swapRecord(r.swapRef))
      await store().markPaymentUnsettled(r.payer, r.nonce, { transaction: '0xother', error: 'late' })
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'settled', transaction: '0xsettled', error: null })

      const absent = reservation()
      await store().markPaymentUnsettled(absent.payer, absent.nonce, { error: 'nothing here' })
      expect(await store().getPayment(absent.payer, absent.nonce)).toBeUndefined()
    })
  })

  describe('a payment kept with what it bought (settlement_pending, paid retries)', () => {
    const delivered = { swapEaziRef: 'swp_x', nextSteps: ['sign ✓ "it"'], amounts: ['1', '2'] }

    it('keeps the request key and the answer from the reservation on, through settlement', async () => {
      const r = reservation({ requestKey: 'BAS:USDC|POL:USDC|1000000|0xa|0xa|5000000000000000', result: delivered })
      expect(await store().reservePayment(r)).toBe(true)
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ requestKey: r.requestKey, result: delivered })
      await store().recordPaidSwap(settlementOf(r), swapRecord(r.swapRef))
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'settled', requestKey: r.requestKey, result: delivered })
    })

    it('records the swap with an unsettled payment, settles it once, and never releases a settled one', async () => {
      const r = reservation({ requestKey: 'k', result: delivered })
      expect(await store().reservePayment(r)).toBe(true)
      await store().markPaymentUnsettled(r.payer, r.nonce, { transaction: '0xfeed', error: 'receipt timed out' }, swapRecord(r.swapRef))
      expect(await store().getSwap(r.swapRef)).toMatchObject({ ref: r.swapRef, payment: { payer: r.payer.toLowerCase() } })

      const settledAt = new Date('2026-11-20T12:05:00.000Z')
      const attempt = { swapRef: r.swapRef, transaction: '0xfeed' }
      // Another attempt's reconciliation (another swap, or another broadcast) leaves this one alone.
      expect(
        await store().settleUnsettledPayment(r.payer, r.nonce, { transaction: '0xfeed', settledAt }, { ...attempt, swapRef: 'swp_other' }),
      ).toBe(false)
      expect(
        await store().settleUnsettledPayment(r.payer, r.nonce, { transaction: '0xfeed', settledAt }, { ...attempt, transaction: null }),
      ).toBe(false)
      expect(await store().settleUnsettledPayment(r.payer, r.nonce, { transaction: '0xfeed', settledAt }, attempt)).toBe(true)
      expect(await store().settleUnsettledPayment(r.payer, r.nonce, { transaction: '0xother', settledAt }, attempt)).toBe(false)
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({
        status: 'settled',
        transaction: '0xfeed',
        error: null,
        settledAt: settledAt.toISOString(),
      })
      expect(await store().releaseUnsettledPayment(r.payer, r.nonce, attempt)).toBe(false)
      expect(await store().getSwap(r.swapRef)).toBeDefined()
    })

    it('releases an unsettled payment together with its swap, so the authorization can pay again', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().markPaymentUnsettled(r.payer, r.nonce, { transaction: '0xdead', error: 'timed out' }, swapRecord(r.swapRef))
      const attempt = { swapRef: r.swapRef, transaction: '0xdead' }
      expect(await store().releaseUnsettledPayment(r.payer, r.nonce, { ...attempt, transaction: '0xlater' })).toBe(false)
      expect(await store().releaseUnsettledPayment(upperHex(r.payer), upperHex(r.nonce), attempt)).toBe(true)
      expect(await store().getPayment(r.payer, r.nonce)).toBeUndefined()
      expect(await store().getSwap(r.swapRef)).toBeUndefined()
      expect(await store().releaseUnsettledPayment(r.payer, r.nonce, attempt)).toBe(false)
      expect(await store().reservePayment({ ...r, swapRef: randomRef() })).toBe(true)
    })

    it('never releases a payment still reserved by a request in progress', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      expect(await store().releaseUnsettledPayment(r.payer, r.nonce, { swapRef: r.swapRef, transaction: null })).toBe(false)
      expect((await store().getPayment(r.payer, r.nonce))?.status).toBe('reserved')
    })
  })

  describe('recordPaidSwap', () => {
    it('settles the payment and inserts the swap, linked to it', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().recordPaidSwap(settlementOf(r, '0xfeed'), swapRecord(r.swapRef))
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({
        status: 'settled',
        transaction: '0xfeed',
        settledAt: '2026-11-20T12:00:02.789Z',
      })
      expect((await store().getSwap(r.swapRef))?.payment).toEqual({ payer: r.payer.toLowerCase(), nonce: r.nonce.toLowerCase() })
      expect(await countSwapsOf(r.payer)).toBe(1)
    })

    it('rolls the settlement back when the swap cannot be inserted (duplicate ref): the payment stays reserved', async () => {
      const first = reservation()
      expect(await store().reservePayment(first)).toBe(true)
      const firstSwap = swapRecord(first.swapRef)
      await store().recordPaidSwap(settlementOf(first), firstSwap)

      // A second payment held for the same ref: its update succeeds inside the transaction, the insert then fails.
      const second = reservation({ swapRef: first.swapRef })
      expect(await store().reservePayment(second)).toBe(true)
      await expect(store().recordPaidSwap(settlementOf(second, '0xnever'), swapRecord(first.swapRef, { toAmount: '1' }))).rejects.toThrow(
        /swaps_pkey/,
      )

      expect(await store().getPayment(second.payer, second.nonce)).toMatchObject({
        status: 'reserved',
        transaction: null,
        settledAt: null,
        swapRef: first.swapRef,
      })
      expect(await countSwapsOf(second.payer)).toBe(0)
      const kept = await store().getSwap(first.swapRef)
      expect(kept?.toAmount).toBe(firstSwap.toAmount)
      expect(kept?.payment).toEqual({ payer: first.payer.toLowerCase(), nonce: first.nonce.toLowerCase() })
      // The rolled-back reservation is intact: it can still be released and reserved again.
      await store().releasePayment(second.payer, second.nonce, second.swapRef)
      expect(await store().reservePayment({ ...second, swapRef: randomRef() })).toBe(true)
    })

    it('refuses a payment that was never reserved, and inserts nothing', async () => {
      const r = reservation()
      await expect(store().recordPaidSwap(settlementOf(r), swapRecord(r.swapRef))).rejects.toThrow(/is not reserved/)
      expect(await store().getSwap(r.swapRef)).toBeUndefined()
      expect(await store().getPayment(r.payer, r.nonce)).toBeUndefined()
      expect(await countSwapsOf(r.payer)).toBe(0)
    })

    it('refuses a payment reserved for another swap, and leaves it reserved', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      const otherRef = randomRef()
      await expect(store().recordPaidSwap(settlementOf(r), swapRecord(otherRef))).rejects.toThrow(/is not reserved/)
      expect(await store().getSwap(otherRef)).toBeUndefined()
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'reserved', transaction: null, settledAt: null })
    })

    it('refuses a payment already settled, even for its own ref', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      await store().recordPaidSwap(settlementOf(r, '0xfirst'), swapRecord(r.swapRef))
      await expect(store().recordPaidSwap(settlementOf(r, '0xsecond'), swapRecord(r.swapRef))).rejects.toThrow(/is not reserved/)
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'settled', transaction: '0xfirst' })
      expect(await countSwapsOf(r.payer)).toBe(1)
    })
  })

  describe('recordSettledSwap (the ledger: reserve, settle and record in one statement)', () => {
    it('writes the settled payment and its linked swap, then refuses the same (payer, nonce) in any case', async () => {
      const r = reservation()
      const settlement = { transaction: `ledger:${r.swapRef}`, settledAt: new Date('2026-11-20T12:00:02.789Z') }
      expect(await store().recordSettledSwap(r, settlement, swapRecord(r.swapRef))).toBe(true)
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({
        status: 'settled',
        value: 20_000n,
        transaction: `ledger:${r.swapRef}`,
        settledAt: '2026-11-20T12:00:02.789Z',
        swapRef: r.swapRef,
      })
      expect((await store().getSwap(r.swapRef))?.payment).toEqual({ payer: r.payer.toLowerCase(), nonce: r.nonce.toLowerCase() })
      const again = { ...r, payer: r.payer.toLowerCase(), nonce: upperHex(r.nonce), swapRef: randomRef() }
      expect(await store().recordSettledSwap(again, settlement, swapRecord(again.swapRef))).toBe(false)
      expect(await store().getSwap(again.swapRef)).toBeUndefined()
      expect(await countSwapsOf(r.payer)).toBe(1)
    })

    it('refuses a (payer, nonce) held by a reservation, and writes nothing', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      const other = { ...r, swapRef: randomRef() }
      expect(await store().recordSettledSwap(other, { transaction: 'ledger:x', settledAt: new Date() }, swapRecord(other.swapRef))).toBe(
        false,
      )
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({ status: 'reserved', swapRef: r.swapRef })
      expect(await countSwapsOf(r.payer)).toBe(0)
    })

    it('writes neither row when the swap cannot be inserted (duplicate ref)', async () => {
      const first = reservation()
      expect(await store().recordSettledSwap(first, { transaction: 'ledger:a', settledAt: new Date() }, swapRecord(first.swapRef))).toBe(
        true,
      )
      const second = reservation({ swapRef: first.swapRef })
      await expect(
        store().recordSettledSwap(second, { transaction: 'ledger:b', settledAt: new Date() }, swapRecord(first.swapRef)),
      ).rejects.toThrow(/swaps_pkey/)
      expect(await store().getPayment(second.payer, second.nonce)).toBeUndefined()
    })

    it('gives exactly one true to 50 concurrent submissions of one (payer, nonce)', async () => {
      const r = reservation()
      const results = await Promise.all(
        Array.from({ length: 50 }, () => {
          const attempt = { ...r, swapRef: randomRef() }
          return store().recordSettledSwap(
            attempt,
            { transaction: `ledger:${attempt.swapRef}`, settledAt: new Date() },
            swapRecord(attempt.swapRef),
          )
        }),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await countSwapsOf(r.payer)).toBe(1)
      expect(await countPaymentsOf(r.payer)).toBe(1)
    })
  })

  describe('getPayment and getSwap', () => {
    it('round-trip every field of a payment, with exact bigints and ISO timestamps', async () => {
      const r = reservation({ value: 20_000n, validAfter: 0n, validBefore: 2n ** 64n - 1n })
      expect(await store().reservePayment(r)).toBe(true)
      const reserved = {
        payer: r.payer.toLowerCase(),
        nonce: r.nonce.toLowerCase(),
        value: 20_000n,
        asset: USDC_BASE.toLowerCase(),
        payTo: PAY_TO,
        validAfter: 0n,
        validBefore: 18_446_744_073_709_551_615n,
        signature: r.signature,
        settlementMode: 'ledger',
        swapRef: r.swapRef,
        status: 'reserved',
        transaction: null,
        error: null,
        reservedAt: '2026-11-20T12:00:00.123Z',
        settledAt: null,
        requestKey: null,
        result: null,
      }
      expect(await store().getPayment(r.payer, r.nonce)).toEqual(reserved)
      await store().recordPaidSwap(settlementOf(r, '0x5e771ed'), swapRecord(r.swapRef))
      expect(await store().getPayment(upperHex(r.payer), upperHex(r.nonce))).toEqual({
        ...reserved,
        status: 'settled',
        transaction: '0x5e771ed',
        settledAt: '2026-11-20T12:00:02.789Z',
      })
    })

    it('keep uint256 amounts exact at the top of the range', async () => {
      const r = reservation({ value: MAX_UINT256, validAfter: MAX_UINT256 - 1n, validBefore: MAX_UINT256 })
      expect(await store().reservePayment(r)).toBe(true)
      expect(await store().getPayment(r.payer, r.nonce)).toMatchObject({
        value: MAX_UINT256,
        validAfter: MAX_UINT256 - 1n,
        validBefore: MAX_UINT256,
      })
    })

    it('round-trip every field of a swap, its quote and transaction deep-equal', async () => {
      const r = reservation()
      expect(await store().reservePayment(r)).toBe(true)
      const swap = swapRecord(r.swapRef)
      await store().recordPaidSwap(settlementOf(r), swap)
      expect(await store().getSwap(r.swapRef)).toEqual({
        ref: r.swapRef,
        channel: 'x402',
        status: 'built',
        fromChain: 'ETH',
        toChain: 'BAS',
        fromToken: 'USDC',
        toToken: 'USDT',
        fromAmount: '1000',
        toAmount: '999.123456',
        toAmountMin: '994.127838',
        fromAddress: swap.fromAddress.toLowerCase(),
        toAddress: swap.toAddress.toLowerCase(),
        quote: swap.quote,
        transactionRequest: swap.transactionRequest,
        payment: { payer: r.payer.toLowerCase(), nonce: r.nonce.toLowerCase() },
        keyId: null,
        createdAt: '2026-11-20T12:00:01.456Z',
      })
      expect(swap.fromAddress).not.toBe(swap.fromAddress.toLowerCase())
    })

    it('read a quote back in the order it was written, and keep a swap larger than a page (compressed or moved out of line)', async () => {
      // json keeps the text as written (jsonb sorted keys by length); a row past toast_tuple_target (8160 bytes)
      // still stores, as Postgres compresses or moves its largest values.
      const ordered = { zeta: 1, alpha: { yy: [3, 2, 1], b: 'x' }, mid: null }
      const small = { ...swapRecord(randomRef()), channel: 'api_key' as const, keyId: 'key_0123456789abcdef01234567', quote: ordered }
      await store().recordKeyedSwap(small)
      const read = await store().getSwap(small.ref)
      expect(JSON.stringify(read?.quote)).toBe(JSON.stringify(ordered))
      const data = `0x${randomBytes(24_000).toString('hex')}`
      const large = {
        ...swapRecord(randomRef()),
        channel: 'api_key' as const,
        keyId: 'key_0123456789abcdef01234567',
        transactionRequest: { to: randomAddress(), data, value: '0x0' },
      }
      await store().recordKeyedSwap(large)
      expect((await store().getSwap(large.ref))?.transactionRequest).toEqual(large.transactionRequest)
    })

    it('answer undefined for what is not there', async () => {
      const r = reservation()
      expect(await store().getPayment(r.payer, r.nonce)).toBeUndefined()
      expect(await store().getSwap(randomRef())).toBeUndefined()
    })
  })

  describe('recordKeyedSwap', () => {
    it('records a swap under its key, with no payment', async () => {
      const swap = { ...swapRecord('swp_01KAKEYEDSWAP0000000000000'), channel: 'api_key' as const, keyId: 'key_0123456789abcdef01234567' }
      await store().recordKeyedSwap(swap)
      expect(await store().getSwap(swap.ref)).toMatchObject({ ref: swap.ref, channel: 'api_key', keyId: swap.keyId, payment: null })
      await expect(store().recordKeyedSwap(swap)).rejects.toThrow()
    })

    it('records concurrent keyed swaps in shared statements, each resolved once stored, a duplicate failing alone', async () => {
      const swaps = Array.from({ length: 12 }, (_, k) => ({
        ...swapRecord(`swp_01KAGROUP${String(k).padStart(17, '0')}`),
        channel: 'api_key' as const,
        keyId: 'key_0123456789abcdef01234567',
      }))
      const duplicate = swaps[5] as (typeof swaps)[number]
      await store().recordKeyedSwap(duplicate)
      const outcomes = await Promise.allSettled(swaps.map((swap) => store().recordKeyedSwap(swap)))
      expect(outcomes.map((o) => o.status)).toEqual(swaps.map((swap) => (swap === duplicate ? 'rejected' : 'fulfilled')))
      for (const swap of swaps) expect(await store().getSwap(swap.ref)).toMatchObject({ ref: swap.ref, keyId: swap.keyId })
    })
  })

  describe('keys.sharedSecret', () => {
    it('keeps the first value stored under a name, for every later caller', async () => {
      expect(await store().keys.sharedSecret('quote_secret', () => 'first')).toBe('first')
      expect(await store().keys.sharedSecret('quote_secret', () => 'second')).toBe('first')
      expect(await store().keys.sharedSecret('api_key_secret', () => 'other')).toBe('other')
    })

    it('gives one value to concurrent first callers', async () => {
      const values = await Promise.all(Array.from({ length: 10 }, (_, k) => store().keys.sharedSecret('race_secret', () => `value-${k}`)))
      expect(new Set(values).size).toBe(1)
    })
  })

  describe('rateLimits', () => {
    it('counts per subject and window, atomically under concurrency', async () => {
      const counts = await Promise.all(Array.from({ length: 25 }, () => store().rateLimits.hit('ip:abc', 1_795_000_020)))
      expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, k) => k + 1))
      expect(await store().rateLimits.hit('ip:abc', 1_795_000_080)).toBe(1)
      expect(await store().rateLimits.hit('ip:other', 1_795_000_020)).toBe(1)
    })

    it('reads the denylist in the counting statement of a keyed request', async () => {
      expect(await store().rateLimits.hitKey('key_aaaaaaaaaaaaaaaaaaaaaaaa', 'key:key_aaaaaaaaaaaaaaaaaaaaaaaa', 1_795_000_020)).toEqual({
        calls: 1,
        isRevoked: false,
      })
      await store().keys.revoke('key_aaaaaaaaaaaaaaaaaaaaaaaa', new Date())
      expect(await store().rateLimits.hitKey('key_aaaaaaaaaaaaaaaaaaaaaaaa', 'key:key_aaaaaaaaaaaaaaaaaaaaaaaa', 1_795_000_020)).toEqual({
        calls: 2,
        isRevoked: true,
      })
    })

    it('prunes windows that ended more than an hour ago, and keeps the rest', async () => {
      await store().rateLimits.hit('ip:prune', 1_795_000_000 - 7200)
      await store().rateLimits.hit('ip:prune', 1_795_000_000 - 60)
      await store().rateLimits.prune(1_795_000_000)
      // A pruned window counts from nothing again; the kept one goes on.
      expect(await store().rateLimits.hit('ip:prune', 1_795_000_000 - 7200)).toBe(1)
      expect(await store().rateLimits.hit('ip:prune', 1_795_000_000 - 60)).toBe(2)
    })

    it('keeps the counters in the store when replicas share it, and in memory on the exclusive embedded store', async () => {
      await store().rateLimits.hit('ip:where', 1_795_000_020)
      await store().rateLimits.hitKey('key_cccccccccccccccccccccccc', 'key:key_cccccccccccccccccccccccc', 1_795_000_020)
      const rows = await current().sql.query(
        `select subject from rate_counters where subject in ('ip:where', 'key:key_cccccccccccccccccccccccc')`,
      )
      expect(rows).toHaveLength(current().sql.isExclusive ? 0 : 2)
    })
  })
})
