import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LegPosition, SwapRecord } from '../../src/store/createStore.ts'
import { type OpenedStore, storeDrivers } from './storeDrivers.ts'

const OPEN_TIMEOUT_MS = 120_000
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const id26 = (): string => Array.from(randomBytes(26), (byte) => ALPHABET[byte % 32]).join('')

function swap(ref: string, overrides: Partial<SwapRecord> = {}): SwapRecord & { keyId: string } {
  return {
    ref,
    channel: 'api_key',
    status: 'built',
    fromChain: 'BAS',
    toChain: 'POL',
    fromToken: 'USDC',
    toToken: 'EURe',
    fromAmount: '1000',
    toAmount: '850',
    toAmountMin: '845',
    fromAddress: '0x1111111111111111111111111111111111111111',
    toAddress: '0x2222222222222222222222222222222222222222',
    quote: { route: { steps: [] } },
    transactionRequest: { to: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e', data: '0x' },
    keyId: 'k1',
    createdAt: new Date('2026-11-20T12:00:00.000Z'),
    ...overrides,
  }
}

const sourceLeg: LegPosition = {
  chain: 'BAS',
  txHash: `0x${'ab'.repeat(32)}`,
  blockNumber: 12_345_678_901n,
  blockHash: `0x${'cd'.repeat(32)}`,
  logIndex: 3,
}

describe.each(storeDrivers())('swap lifecycles, cursors and leases on $name', (driver) => {
  let opened: OpenedStore | undefined
  beforeAll(async () => {
    opened = await driver.open()
  }, OPEN_TIMEOUT_MS)
  afterAll(async () => {
    await opened?.cleanup()
  }, OPEN_TIMEOUT_MS)
  const store = () => {
    if (opened === undefined) throw new Error('the store did not open')
    return opened.store
  }

  it('reads a swap no tracker moved as built since its creation, and an unknown reference as undefined', async () => {
    const ref = `swp_${id26()}`
    await store().recordKeyedSwap(swap(ref))
    expect(await store().lifecycle.get(ref)).toEqual({
      ref,
      disbursementRef: null,
      legIndex: null,
      state: 'built',
      substatus: null,
      reason: null,
      legs: {},
      sent: null,
      received: null,
      destinationFromBlock: null,
      transitions: [{ state: 'built', substatus: null, reason: null, legs: {}, at: '2026-11-20T12:00:00.000Z' }],
      updatedAt: '2026-11-20T12:00:00.000Z',
    })
    expect(await store().lifecycle.get(`swp_${id26()}`)).toBeUndefined()
    expect(await store().lifecycle.update(`swp_${id26()}`, { state: 'pending', at: new Date() }, ['built'])).toBeUndefined()
  })

  it('keeps every transition with its time and legs, merges legs, and moves only from the states named', async () => {
    const ref = `swp_${id26()}`
    await store().recordKeyedSwap(swap(ref))
    const { lifecycle } = store()
    const pending = await lifecycle.update(
      ref,
      {
        state: 'pending',
        legs: { source: sourceLeg },
        sent: { chain: 'BAS', token: '0xaaaa', amount: 1_000_000_000n },
        destinationFromBlock: 77n,
        at: new Date('2026-11-20T12:01:00.000Z'),
      },
      ['built'],
    )
    expect(pending?.updated).toBe(true)
    // Another replica making the same move finds it made.
    const again = await lifecycle.update(ref, { state: 'pending', at: new Date() }, ['built'])
    expect(again?.updated).toBe(false)
    expect(again?.record.state).toBe('pending')
    // Bookkeeping without a change of state is no transition.
    await lifecycle.update(ref, { state: 'pending', destinationFromBlock: 90n, at: new Date('2026-11-20T12:01:30.000Z') }, ['pending'])
    const destination: LegPosition = { ...sourceLeg, chain: 'POL', logIndex: 0 }
    await lifecycle.update(
      ref,
      {
        state: 'done',
        substatus: 'partial',
        reason: 'SwapEazi: output below minimum',
        legs: { destination },
        received: { chain: 'POL', token: '0xbbbb', amount: 999_000_000n },
        at: new Date('2026-11-20T12:03:00.000Z'),
      },
      ['pending'],
    )
    expect(await lifecycle.destinationClaimedBy('POL', destination.txHash, destination.logIndex)).toBe(ref)
    expect(await lifecycle.destinationClaimedBy('POL', destination.txHash, destination.logIndex + 1)).toBeUndefined()
    expect(await lifecycle.destinationClaimedBy('BAS', destination.txHash, destination.logIndex)).toBeUndefined()
    const record = await lifecycle.get(ref)
    expect(record).toMatchObject({
      state: 'done',
      substatus: 'partial',
      reason: 'SwapEazi: output below minimum',
      legs: { source: sourceLeg, destination },
      sent: { chain: 'BAS', token: '0xaaaa', amount: 1_000_000_000n },
      received: { chain: 'POL', token: '0xbbbb', amount: 999_000_000n },
      destinationFromBlock: 90n,
      updatedAt: '2026-11-20T12:03:00.000Z',
    })
    expect(record?.transitions.map((t) => [t.state, t.substatus, t.at, Object.keys(t.legs).sort()])).toEqual([
      ['built', null, '2026-11-20T12:00:00.000Z', []],
      ['pending', null, '2026-11-20T12:01:00.000Z', ['source']],
      ['done', 'partial', '2026-11-20T12:03:00.000Z', ['destination', 'source']],
    ])
    // A reorganisation removes a leg.
    const ref2 = `swp_${id26()}`
    await store().recordKeyedSwap(swap(ref2))
    await lifecycle.update(ref2, { state: 'pending', legs: { source: sourceLeg }, at: new Date() }, ['built'])
    await lifecycle.update(ref2, { state: 'built', reason: 'reorganised', legs: { source: null }, at: new Date() }, ['pending'])
    expect(await lifecycle.get(ref2)).toMatchObject({ state: 'built', legs: {}, reason: 'reorganised' })
  })

  it('lists open swaps of the chains asked, and a batch by its legs', async () => {
    const dsb = `dsb_${id26()}`
    const open = `swp_${id26()}`
    const closed = `swp_${id26()}`
    const elsewhere = `swp_${id26()}`
    await store().recordKeyedSwap(swap(open))
    await store().recordKeyedSwap(swap(closed))
    await store().recordKeyedSwap(swap(elsewhere, { fromChain: 'ETH' }))
    await store().disbursements.recordDisbursement(
      {
        ref: dsb,
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: '0x1111111111111111111111111111111111111111',
        items: [],
        totals: {},
        transactionRequest: {},
        keyId: 'k1',
        createdAt: new Date('2026-11-20T12:00:00.000Z'),
      },
      [swap(`${dsb}.2`, { channel: 'disbursement' }), swap(`${dsb}.0`, { channel: 'disbursement' })],
    )
    await store().lifecycle.update(closed, { state: 'expired', at: new Date() }, ['built'])
    // An expired swap never ran: its record says not_found.
    expect((await store().getSwap(closed))?.status).toBe('not_found')
    expect((await store().getSwap(open))?.status).toBe('built')
    const refs = new Set<string>()
    let afterRef: string | undefined
    for (;;) {
      const page = await store().lifecycle.listOpen({ chains: ['BAS'], limit: 50, ...(afterRef === undefined ? {} : { afterRef }) })
      if (page.length === 0) break
      for (const entry of page) refs.add(entry.swap.ref)
      afterRef = page.at(-1)?.swap.ref
    }
    expect(refs.has(open)).toBe(true)
    expect(refs.has(`${dsb}.0`)).toBe(true)
    expect(refs.has(closed)).toBe(false)
    expect(refs.has(elsewhere)).toBe(false)
    const legs = await store().lifecycle.getBatchLegs(dsb)
    expect(legs.map((leg) => [leg.ref, leg.disbursementRef, leg.legIndex, leg.state])).toEqual([
      [`${dsb}.0`, dsb, 0, 'built'],
      [`${dsb}.2`, dsb, 2, 'built'],
    ])
    const tracked = await store().lifecycle.getTracked(`${dsb}.2`)
    expect(tracked?.swap).toMatchObject({
      ref: `${dsb}.2`,
      channel: 'disbursement',
      toAddress: '0x2222222222222222222222222222222222222222',
    })
  })

  it('keeps a chain cursor, moved only from where the mover saw it', async () => {
    const chain = `C${id26().slice(0, 6)}`
    const { lifecycle } = store()
    expect(await lifecycle.getCursor(chain)).toBeUndefined()
    const first = { block: 10n, blockHash: '0x01', blockTime: new Date('2026-11-20T12:00:00.000Z') }
    expect(await lifecycle.setCursor(chain, first, null)).toBe(true)
    expect(await lifecycle.setCursor(chain, first, null)).toBe(false)
    expect(await lifecycle.setCursor(chain, { ...first, block: 20n }, 11n)).toBe(false)
    expect(await lifecycle.setCursor(chain, { ...first, block: 20n, blockHash: '0x02' }, 10n)).toBe(true)
    expect(await lifecycle.getCursor(chain)).toEqual({ block: 20n, blockHash: '0x02', blockTime: first.blockTime })
  })

  it('gives a lease to one holder at a time, extends it for its holder, and hands it on once it expires', async () => {
    const { leases } = store().lifecycle
    const name = `lease-${id26()}`
    // Ten takers at once: exactly one wins.
    const won = await Promise.all(Array.from({ length: 10 }, (_, k) => leases.tryAcquire(name, `r${k}`, 60_000)))
    expect(won.filter(Boolean)).toHaveLength(1)
    const holder = `r${won.indexOf(true)}`
    const other = holder === 'r0' ? 'r1' : 'r0'
    expect(await leases.tryAcquire(name, holder, 60_000)).toBe(true)
    expect(await leases.renew(name, other, 60_000)).toBe(false)
    expect(await leases.renew(name, holder, 60_000)).toBe(true)
    await leases.release(name, other)
    expect(await leases.tryAcquire(name, other, 60_000)).toBe(false)
    await leases.release(name, holder)
    expect(await leases.tryAcquire(name, other, 60_000)).toBe(true)
    // A holder that stops renewing loses the lease.
    const short = `lease-${id26()}`
    // (A TTL far longer than the next statement takes on a busy machine.)
    expect(await leases.tryAcquire(short, 'dead', 2000)).toBe(true)
    expect(await leases.tryAcquire(short, 'alive', 60_000)).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 2100))
    expect(await leases.renew(short, 'dead', 60_000)).toBe(false)
    expect(await leases.tryAcquire(short, 'alive', 60_000)).toBe(true)
  })
})
