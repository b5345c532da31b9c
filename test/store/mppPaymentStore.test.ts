import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MppClaim } from '../../src/store/createMppPaymentStore.ts'
import type { SwapRecord } from '../../src/store/createStore.ts'
import { type OpenedStore, storeDrivers } from './storeDrivers.ts'

const OPEN_TIMEOUT_MS = 120_000
const hex = (bytes: number): string => randomBytes(bytes).toString('hex')

function claim(overrides: Partial<MppClaim> = {}): MppClaim {
  return {
    hash: `0x${hex(32).toUpperCase()}`,
    chainId: 4217,
    payer: `0x${hex(20).toUpperCase()}`,
    amount: 20_000n,
    currency: '0x20C0000000000000000000000000000000000000',
    recipient: '0x3333333333333333333333333333333333333333',
    challengeId: `c_${hex(8)}`,
    challengeExpires: new Date('2026-11-20T12:05:00.000Z'),
    swapRef: `swp_${hex(8)}`,
    requestKey: 'ETH:usdc|ETH:usdt|1000000000|0x1|0x1|5000000000000000',
    result: { swapEaziRef: 'swp_x', note: 'naïve ✓' },
    claimedAt: new Date('2026-11-20T12:00:01.456Z'),
    ...overrides,
  }
}

function swap(ref: string): SwapRecord {
  return {
    ref,
    channel: 'mpp',
    status: 'built',
    fromChain: 'ETH',
    toChain: 'ETH',
    fromToken: 'USDC',
    toToken: 'USDT',
    fromAmount: '1000',
    toAmount: '994.5',
    toAmountMin: '989.5',
    fromAddress: '0x1111111111111111111111111111111111111111',
    toAddress: '0x1111111111111111111111111111111111111111',
    quote: { id: 'q' },
    transactionRequest: { to: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e', data: '0x' },
    createdAt: new Date('2026-11-20T12:00:01.456Z'),
  }
}

describe.each(storeDrivers())('MPP payments on $name', (driver) => {
  let opened: OpenedStore | undefined
  beforeAll(async () => {
    opened = await driver.open()
  }, OPEN_TIMEOUT_MS)
  afterAll(async () => {
    await opened?.cleanup()
  }, OPEN_TIMEOUT_MS)
  const current = (): OpenedStore => {
    if (opened === undefined) throw new Error('the store did not open')
    return opened
  }
  const countWhere = async (table: 'swaps' | 'mpp_payments', column: string, value: string): Promise<number> => {
    const [row] = await current().sql.query<{ n: number }>(`select count(*)::int as n from ${table} where ${column} = $1`, [value])
    return row?.n ?? -1
  }

  it('claims a hash with the swap it bought, and reads it back as written (hash and addresses lowercase)', async () => {
    const { store } = current()
    const paid = claim()
    expect(await store.mpp.recordPaidSwap(paid, swap(paid.swapRef))).toBe(true)
    expect(await store.mpp.getPayment(paid.hash.toLowerCase())).toEqual({
      ...paid,
      hash: paid.hash.toLowerCase(),
      payer: paid.payer.toLowerCase(),
      currency: paid.currency.toLowerCase(),
      challengeExpires: '2026-11-20T12:05:00.000Z',
      claimedAt: '2026-11-20T12:00:01.456Z',
    })
    expect(await store.getSwap(paid.swapRef)).toMatchObject({ ref: paid.swapRef, channel: 'mpp', payment: null })
    expect(await store.mpp.getPayment(`0x${hex(32)}`)).toBeUndefined()
  })

  it('refuses the same hash in any case for another swap, and writes neither the claim nor that swap', async () => {
    const { store } = current()
    const first = claim()
    expect(await store.mpp.recordPaidSwap(first, swap(first.swapRef))).toBe(true)
    const again = claim({ hash: first.hash.toLowerCase() })
    expect(await store.mpp.recordPaidSwap(again, swap(again.swapRef))).toBe(false)
    expect(await store.getSwap(again.swapRef)).toBeUndefined()
    expect((await store.mpp.getPayment(first.hash))?.swapRef).toBe(first.swapRef)
  })

  it('leaves the hash unclaimed when its swap cannot be recorded (a duplicate ref), so the payment can still pay', async () => {
    const { store } = current()
    const taken = claim()
    expect(await store.mpp.recordPaidSwap(taken, swap(taken.swapRef))).toBe(true)
    const paid = claim({ swapRef: taken.swapRef })
    await expect(store.mpp.recordPaidSwap(paid, swap(paid.swapRef))).rejects.toThrow()
    expect(await store.mpp.getPayment(paid.hash)).toBeUndefined()
    const retried = claim({ hash: paid.hash })
    expect(await store.mpp.recordPaidSwap(retried, swap(retried.swapRef))).toBe(true)
  })

  it('gives exactly one true to 20 concurrent claims of one hash, with one swap recorded', async () => {
    const { store } = current()
    const hash = `0x${hex(32)}`
    const claims = Array.from({ length: 20 }, () => claim({ hash }))
    const outcomes = await Promise.all(claims.map((each) => store.mpp.recordPaidSwap(each, swap(each.swapRef))))
    expect(outcomes.filter(Boolean)).toHaveLength(1)
    const recorded = claims.filter((each) => outcomes[claims.indexOf(each)])
    expect(await countWhere('mpp_payments', 'hash', hash)).toBe(1)
    expect(await countWhere('swaps', 'ref', recorded[0]?.swapRef ?? '')).toBe(1)
    for (const each of claims.filter((_, index) => outcomes[index] !== true)) expect(await store.getSwap(each.swapRef)).toBeUndefined()
  })
})
