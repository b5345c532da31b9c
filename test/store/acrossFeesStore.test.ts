// Each Across lane's last read kept in the store (migration 14): a newer read replaces an older one and never the
// reverse, a refused lane's read is forgotten, and only reads from the API asked, within the age asked, come back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAcrossFeesStore } from '../../src/store/createAcrossFeesStore.ts'
import { type OpenedStore, storeDrivers } from './storeDrivers.ts'

const OPEN_TIMEOUT_MS = 120_000
const API = 'https://app.across.to/api'
const T = Date.parse('2026-11-20T12:00:00.123Z')

describe.each(storeDrivers())('Across lane fees kept on $name', (driver) => {
  let opened: OpenedStore | undefined
  beforeAll(async () => {
    opened = await driver.open()
  }, OPEN_TIMEOUT_MS)
  afterAll(async () => {
    await opened?.cleanup()
  }, OPEN_TIMEOUT_MS)
  const store = () => {
    if (opened === undefined) throw new Error('the store did not open')
    return createAcrossFeesStore(opened.sql)
  }

  it('keeps the newest read of a lane, with its time to the millisecond, per API', async () => {
    const kept = store()
    await kept.save({ lane: 'across-usdc:ETH>OPT', apiUrl: API, figures: { reads: ['first'] }, readAtMs: T })
    await kept.save({ lane: 'across-usdc:ETH>OPT', apiUrl: API, figures: { reads: ['second'] }, readAtMs: T + 60_000 })
    // An older read (a replica that read earlier) does not replace a newer one.
    await kept.save({ lane: 'across-usdc:ETH>OPT', apiUrl: API, figures: { reads: ['older'] }, readAtMs: T + 1 })
    await kept.save({ lane: 'across-usdc:ETH>OPT', apiUrl: 'http://127.0.0.1:1/api', figures: { reads: ['other'] }, readAtMs: T })
    await kept.save({ lane: 'across-usdt:ETH>ARB', apiUrl: API, figures: { reads: ['usdt'] }, readAtMs: T })
    expect((await kept.load(API, T)).sort((a, b) => a.lane.localeCompare(b.lane))).toEqual([
      { lane: 'across-usdc:ETH>OPT', apiUrl: API, figures: { reads: ['second'] }, readAtMs: T + 60_000 },
      { lane: 'across-usdt:ETH>ARB', apiUrl: API, figures: { reads: ['usdt'] }, readAtMs: T },
    ])
    // Only reads at or after the time asked.
    expect((await kept.load(API, T + 1)).map((read) => read.lane)).toEqual(['across-usdc:ETH>OPT'])
  })

  it('forgets a lane’s read made at or before the time given, and not a newer one', async () => {
    const kept = store()
    await kept.save({ lane: 'across-usdc:OPT>ARB', apiUrl: API, figures: {}, readAtMs: T + 120_000 })
    await kept.forget('across-usdc:OPT>ARB', API, T + 119_999)
    expect((await kept.load(API, T)).map((read) => read.lane)).toContain('across-usdc:OPT>ARB')
    await kept.forget('across-usdc:OPT>ARB', API, T + 120_000)
    expect((await kept.load(API, T)).map((read) => read.lane)).not.toContain('across-usdc:OPT>ARB')
  })
})
