// The Across API's request rates and refresh interval (SWAPEAZI_ACROSS_*): defaults, bounds, and the warming rate
// never below the steady one.
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.ts'

describe('the Across rates in the configuration', () => {
  it('defaults to 5 requests a second, 10 while warming, and a refresh 60 s after the last', () => {
    expect(loadConfig({}).market).toMatchObject({ acrossRequestsPerSecond: 5, acrossWarmingRequestsPerSecond: 10, acrossRefreshMs: 60_000 })
    expect(
      loadConfig({
        SWAPEAZI_ACROSS_REQUESTS_PER_SEC: '2',
        SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: '2',
        SWAPEAZI_ACROSS_REFRESH_MS: '120000',
      }).market,
    ).toMatchObject({ acrossRequestsPerSecond: 2, acrossWarmingRequestsPerSecond: 2, acrossRefreshMs: 120_000 })
  })

  it('refuses a warming rate below the steady rate, and values out of bounds, with one line', () => {
    expect(() => loadConfig({ SWAPEAZI_ACROSS_REQUESTS_PER_SEC: '8', SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: '6' })).toThrow(
      'invalid configuration: SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: must not be less than SWAPEAZI_ACROSS_REQUESTS_PER_SEC (the first read after start is never slower than the others)',
    )
    // Over 240 s between refreshes, a lane could pass its 5 minutes before it is read again.
    expect(() => loadConfig({ SWAPEAZI_ACROSS_REFRESH_MS: '300000' })).toThrow(/^invalid configuration: SWAPEAZI_ACROSS_REFRESH_MS: /)
    expect(() => loadConfig({ SWAPEAZI_ACROSS_REQUESTS_PER_SEC: '0' })).toThrow(
      /^invalid configuration: SWAPEAZI_ACROSS_REQUESTS_PER_SEC: /,
    )
    expect(() => loadConfig({ SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: '51' })).toThrow(
      /^invalid configuration: SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: /,
    )
  })
})
