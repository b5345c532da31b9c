import { describe, expect, it } from 'vitest'
import { parseUsagePeriod, usagePeriod } from '../../src/intel/usagePeriod.ts'

describe('usagePeriod', () => {
  it.each([
    ['2026-11-20T12:00:00Z', { period: '2026-11', resetsAt: '2026-12-01T00:00:00.000Z', secondsToReset: 907_200, lengthSec: 30 * 86_400 }],
    ['2026-12-31T23:59:59.001Z', { period: '2026-12', resetsAt: '2027-01-01T00:00:00.000Z', secondsToReset: 1, lengthSec: 31 * 86_400 }],
    [
      '2027-01-01T00:00:00Z',
      { period: '2027-01', resetsAt: '2027-02-01T00:00:00.000Z', secondsToReset: 31 * 86_400, lengthSec: 31 * 86_400 },
    ],
    [
      '2028-02-15T00:00:00Z',
      { period: '2028-02', resetsAt: '2028-03-01T00:00:00.000Z', secondsToReset: 15 * 86_400, lengthSec: 29 * 86_400 },
    ],
  ])('%s is in the UTC month %o', (at, expected) => {
    const { period, resetsAtMs, secondsToReset, lengthSec } = usagePeriod(Date.parse(at))
    expect({ period, resetsAt: new Date(resetsAtMs).toISOString(), secondsToReset, lengthSec }).toEqual(expected)
  })

  it('reads a YYYY-MM month and nothing else', () => {
    expect(parseUsagePeriod('2026-11')).toBe('2026-11')
    for (const bad of ['2026-13', '2026-00', '2026-1', '26-11', '2026/11', '2026-11-01', ' 2026-11'])
      expect(parseUsagePeriod(bad)).toBeUndefined()
  })
})
