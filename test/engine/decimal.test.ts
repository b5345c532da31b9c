import fc from 'fast-check'
import { formatUnits, parseUnits } from 'viem'
import { describe, expect, it } from 'vitest'
import { ceilDiv, formatAtomic, formatFixedDown, formatFixedUp, numberToFixed, parseUnitsExact, pow10 } from '../../src/engine/decimal.ts'

describe('parseUnitsExact', () => {
  it.each([
    ['1', 6, 1_000_000n],
    ['0.000001', 6, 1n],
    ['0', 6, 0n],
    ['1000.5', 6, 1_000_500_000n],
    ['0.5', 18, 5n * 10n ** 17n],
    ['123456789.123456789012345678', 18, 123456789123456789012345678n],
    ['7', 0, 7n],
  ])('parses %s with %i decimals', (text, decimals, value) => {
    expect(parseUnitsExact(text, decimals)).toEqual({ ok: true, value })
  })

  it.each(['1e3', '-1', ' 1', '1 ', '1.', '.5', '01', '00', '', '1,5', '0x10', '+1', '1.2.3', 'NaN', 'Infinity', '１'])(
    'rejects %j as not a decimal',
    (text) => {
      expect(parseUnitsExact(text, 6)).toEqual({ ok: false, reason: 'not_decimal', maxDecimals: 6 })
    },
  )

  it('rejects more fraction digits than the token has, never rounding', () => {
    expect(parseUnitsExact('1.0000001', 6)).toEqual({ ok: false, reason: 'too_many_decimals', maxDecimals: 6 })
    expect(parseUnitsExact('1.0000000', 6)).toEqual({ ok: false, reason: 'too_many_decimals', maxDecimals: 6 })
    expect(parseUnitsExact('0.1', 0)).toEqual({ ok: false, reason: 'too_many_decimals', maxDecimals: 0 })
    expect(parseUnitsExact('1.000000', 6)).toEqual({ ok: true, value: 1_000_000n })
  })

  it('differs from viem parseUnits, which rounds the excess away', () => {
    expect(parseUnits('1.0000005', 6)).toBe(1_000_001n)
    expect(parseUnitsExact('1.0000005', 6)).toEqual({ ok: false, reason: 'too_many_decimals', maxDecimals: 6 })
  })

  it('rejects any string with one fraction digit too many (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (whole, decimals) => {
        const text = `${whole}.${'0'.repeat(decimals)}1`
        expect(parseUnitsExact(text, decimals)).toEqual({ ok: false, reason: 'too_many_decimals', maxDecimals: decimals })
      }),
    )
  })
})

describe('formatAtomic', () => {
  it.each([
    [0n, 6, '0'],
    [1n, 6, '0.000001'],
    [1_500_000n, 6, '1.5'],
    [12_000_000n, 6, '12'],
    [-1_500_000n, 6, '-1.5'],
    [10n ** 18n + 1n, 18, '1.000000000000000001'],
    [42n, 0, '42'],
  ])('formats %s with %i decimals as %s', (value, decimals, text) => {
    expect(formatAtomic(value, decimals)).toBe(text)
  })

  it('round-trips through parseUnitsExact for every non-negative amount (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.integer({ min: 0, max: 36 }), (value, decimals) => {
        const text = formatAtomic(value, decimals)
        expect(text).toMatch(/^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/)
        expect(parseUnitsExact(text, decimals)).toEqual({ ok: true, value })
      }),
    )
  })
})

describe('formatAtomic against viem', () => {
  // The engine cannot import viem; the output must still be what viem's formatUnits gives.
  it('equals formatUnits for positive and negative amounts at every scale (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: 0, max: 36 }), (value, decimals) => {
        expect(formatAtomic(value, decimals)).toBe(formatUnits(value, decimals))
      }),
    )
  })
})

describe('formatAtomic against division', () => {
  // formatAtomic slices the digit string; this reference divides, so the two share no code.
  const byDivision = (value: bigint, decimals: number): string => {
    const sign = value < 0n ? '-' : ''
    const abs = value < 0n ? -value : value
    const base = 10n ** BigInt(decimals)
    const fraction = decimals === 0 ? '' : (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '')
    return `${sign}${abs / base}${fraction ? `.${fraction}` : ''}`
  }

  it('agrees for positive and negative amounts at every scale (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: 0, max: 36 }), (value, decimals) => {
        expect(formatAtomic(value, decimals)).toBe(byDivision(value, decimals))
      }),
    )
  })
})

describe('pow10', () => {
  it('matches exponentiation inside and beyond its table', () => {
    for (const exponent of [0, 1, 6, 18, 36, 77, 78, 100]) expect(pow10(exponent)).toBe(10n ** BigInt(exponent))
  })
})

describe('numberToFixed', () => {
  it('converts slippage fractions exactly to 18-decimal fixed point', () => {
    expect(numberToFixed(0.005)).toBe(5n * 10n ** 15n)
    expect(numberToFixed(1e-7)).toBe(10n ** 11n)
    expect(numberToFixed(0.1)).toBe(10n ** 17n)
    expect(numberToFixed(0)).toBe(0n)
    expect(numberToFixed(1)).toBe(10n ** 18n)
    // biome-ignore lint/correctness/noPrecisionLoss: the point: a literal with more digits than a double keeps
    expect(numberToFixed(0.123456789012345678)).toBe(123456789012345680n) // the double's shortest form has 17 digits
    expect(numberToFixed(1e-18)).toBe(1n)
    expect(numberToFixed(2.5e21)).toBe(25n * 10n ** 38n)
  })

  // biome-ignore lint/correctness/noPrecisionLoss: the last value tests a literal past a double's precision
  it.each([-0.005, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-19, 1.5e-18, 0.1234567890123456789e-2])(
    'rejects %s',
    (value) => {
      expect(numberToFixed(value)).toBeUndefined()
    },
  )

  it('equals m·10^(18−s) for any m·10^−s written with at most 15 significant digits (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 999_999_999_999_999n }), fc.integer({ min: 0, max: 18 }), (mantissa, scale) => {
        const value = Number(`${mantissa}e-${scale}`)
        expect(numberToFixed(value)).toBe(mantissa * 10n ** BigInt(18 - scale))
      }),
    )
  })
})

describe('rounding helpers', () => {
  it('ceilDiv rounds up, exact quotients stay', () => {
    expect(ceilDiv(0n, 7n)).toBe(0n)
    expect(ceilDiv(1n, 7n)).toBe(1n)
    expect(ceilDiv(7n, 7n)).toBe(1n)
    expect(ceilDiv(8n, 7n)).toBe(2n)
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.bigInt({ min: 1n, max: 10n ** 20n }), (n, d) => {
        const q = ceilDiv(n, d)
        expect(q * d >= n).toBe(true)
        expect((q - 1n) * d < n || n === 0n).toBe(true)
      }),
    )
  })

  it('formatFixedUp rounds costs up and formatFixedDown rounds rates down', () => {
    const value = 1_234_500_000_000_000_001n // 1.234500000000000001
    expect(formatFixedUp(value, 4)).toBe('1.2346')
    expect(formatFixedDown(value, 4)).toBe('1.2345')
    expect(formatFixedUp(1_230_000_000_000_000_000n, 4)).toBe('1.23')
    expect(formatFixedDown(999_999_999_999_999_999n, 2)).toBe('0.99')
    expect(formatFixedUp(1n, 2)).toBe('0.01')
  })
})
