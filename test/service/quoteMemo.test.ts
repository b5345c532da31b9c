import { describe, expect, it } from 'vitest'
import { createQuoteMemo } from '../../src/service/quoteMemo.ts'

/** A settable clock and a compute that counts its calls and answers `<key>@<second of the clock>`. */
function fixture(startMs = 1_800_000_000_000) {
  const clock = { now: startMs }
  const calls: string[] = []
  const compute = (key: string): string => {
    calls.push(key)
    return `${key}@${Math.floor(clock.now / 1000)}`
  }
  return { clock, calls, compute, read: () => clock.now }
}

describe('createQuoteMemo', () => {
  it('computes a key once per clock second and gives the same text to every request in that second', () => {
    const f = fixture(1_800_000_000_000)
    const memo = createQuoteMemo(f.read)
    expect(memo.answer('a', f.compute)).toBe('a@1800000000')
    f.clock.now += 999
    expect(memo.answer('a', f.compute)).toBe('a@1800000000')
    expect(memo.answer('b', f.compute)).toBe('b@1800000000')
    expect(f.calls).toEqual(['a', 'b'])
  })

  it('computes afresh in the next second, so no answer outlives the second it was signed in', () => {
    const f = fixture(1_800_000_000_999)
    const memo = createQuoteMemo(f.read)
    expect(memo.answer('a', f.compute)).toBe('a@1800000000')
    f.clock.now += 1
    expect(memo.answer('a', f.compute)).toBe('a@1800000001')
    // A clock stepped back is a different second too.
    f.clock.now -= 5_000
    expect(memo.answer('a', f.compute)).toBe('a@1799999996')
    expect(f.calls).toEqual(['a', 'a', 'a'])
  })

  it('keeps nothing when compute throws: the next identical request computes (and fails or answers) again', () => {
    const f = fixture()
    const memo = createQuoteMemo(f.read)
    let fail = true
    const flaky = (key: string): string => {
      f.calls.push(key)
      if (fail) throw new Error('amount_out_of_range')
      return 'ok'
    }
    expect(() => memo.answer('a', flaky)).toThrow('amount_out_of_range')
    expect(() => memo.answer('a', flaky)).toThrow('amount_out_of_range')
    fail = false
    expect(memo.answer('a', flaky)).toBe('ok')
    expect(memo.answer('a', flaky)).toBe('ok')
    expect(f.calls).toEqual(['a', 'a', 'a'])
  })

  it('does not keep an answer computed across a second boundary', () => {
    const f = fixture(1_800_000_000_999)
    const memo = createQuoteMemo(f.read)
    const slow = (key: string): string => {
      f.calls.push(key)
      f.clock.now += 1 // the second turns while computing
      return `${key}@${Math.floor(f.clock.now / 1000)}`
    }
    expect(memo.answer('a', slow)).toBe('a@1800000001')
    f.clock.now = 1_800_000_000_999
    // Filed under second 1800000000 it would now be handed out with the next second's expiry.
    expect(memo.answer('a', f.compute)).toBe('a@1800000000')
    expect(f.calls).toEqual(['a', 'a'])
  })

  it('keeps at most maxEntries answers a second and no key longer than maxKeyLength', () => {
    const f = fixture()
    const memo = createQuoteMemo(f.read, { maxEntries: 2, maxKeyLength: 4 })
    for (const key of ['a', 'b', 'c', 'a', 'b', 'c']) memo.answer(key, f.compute)
    expect(f.calls).toEqual(['a', 'b', 'c', 'c'])
    const long = 'x'.repeat(5)
    memo.answer(long, f.compute)
    memo.answer(long, f.compute)
    expect(f.calls.filter((key) => key === long)).toHaveLength(2)
    // A new second starts empty: room again.
    f.clock.now += 1_000
    const before = f.calls.length
    for (const key of ['c', 'c']) memo.answer(key, f.compute)
    expect(f.calls.length).toBe(before + 1)
  })
})
