import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { solidlyStableGetAmountOut } from '../../src/engine/solidlyStable.ts'
import type { SolidlyStablePool } from '../../src/engine/solidlyStable.ts'

const E18 = 10n ** 18n
const E6 = 10n ** 6n

/** The invariant on 1e18-normalised reserves, exact. */
function k(x: bigint, y: bigint): bigint {
  return x * x * x * y + y * y * y * x
}

function scaleOf(decimals: number): bigint {
  return 10n ** BigInt(18 - decimals)
}

/** Reserves after the swap, normalised, as the pool would check them (fee kept out of the invariant). */
function reservesAfter(pool: SolidlyStablePool, i: 0 | 1, amountIn: bigint, out: bigint): { x: bigint; y: bigint } {
  const o = i === 0 ? 1 : 0
  const inAfterFee = amountIn - (amountIn * pool.feePpm) / 1_000_000n
  return {
    x: (pool.reserves[i] + inAfterFee) * scaleOf(pool.decimals[i]),
    y: (pool.reserves[o] - out) * scaleOf(pool.decimals[o]),
  }
}

/** Independent solver: bisection for the largest output in atomic units that keeps k' ≥ k. */
function amountOutByBisection(pool: SolidlyStablePool, i: 0 | 1, amountIn: bigint): bigint {
  const o = i === 0 ? 1 : 0
  const k0 = k(pool.reserves[i] * scaleOf(pool.decimals[i]), pool.reserves[o] * scaleOf(pool.decimals[o]))
  let lo = 0n
  let hi = pool.reserves[o] - 1n
  while (lo < hi) {
    const mid = (lo + hi + 1n) / 2n
    const { x, y } = reservesAfter(pool, i, amountIn, mid)
    if (k(x, y) >= k0) lo = mid
    else hi = mid - 1n
  }
  return lo
}

const poolArb = fc
  .record({
    r0: fc.bigInt({ min: 1_000n, max: 10n ** 10n }),
    r1: fc.bigInt({ min: 1_000n, max: 10n ** 10n }),
    d0: fc.constantFrom(6, 8, 18),
    d1: fc.constantFrom(6, 8, 18),
    feePpm: fc.constantFrom(0n, 100n, 500n, 3_000n),
  })
  .map(
    ({ r0, r1, d0, d1, feePpm }): SolidlyStablePool => ({
      reserves: [r0 * 10n ** BigInt(d0), r1 * 10n ** BigInt(d1)],
      decimals: [d0, d1],
      feePpm,
    }),
  )
const sideArb = fc.constantFrom<0 | 1>(0, 1)
/** Input as a fraction (in millionths) of the input reserve, up to 3x the reserve. */
const fractionArb = fc.bigInt({ min: 0n, max: 3_000_000n })

function amountFor(pool: SolidlyStablePool, i: 0 | 1, millionths: bigint): bigint {
  return (pool.reserves[i] * millionths) / 1_000_000n
}

describe('solidlyStableGetAmountOut: worked examples', () => {
  it('reflects (1, 3) onto (3, 1): 2 tokens in, exactly 2 out', () => {
    // k(x, y) = xy(x² + y²) is symmetric, so k(1, 3) = 3·10 = 30 = k(3, 1). Putting 2 tokens of X into a
    // 1 X / 3 Y pool lands exactly on (3, 1): y = 1 meets k with equality and y = 1 − 1 wei falls short, so the
    // output is exactly 2 Y, here in 6 decimals.
    const pool: SolidlyStablePool = { reserves: [1n * E18, 3n * E6], decimals: [18, 6], feePpm: 0n }
    expect(solidlyStableGetAmountOut(pool, 0, 2n * E18)).toBe(2n * E6)
    // And back: 2 Y into a 3 X / 1 Y pool pays 2 X.
    const back: SolidlyStablePool = { reserves: [3n * E18, 1n * E6], decimals: [18, 6], feePpm: 0n }
    expect(solidlyStableGetAmountOut(back, 1, 2n * E6)).toBe(2n * E18)
  })

  // Expected values from a separate Python model (python3 ints): fee = amountIn·feePpm // 10⁶, then the smallest
  // integer y with x'³y + x'y³ ≥ k found by bisection, out = (y0 − y) // scale. The same model with the contracts'
  // 1e18-truncated k, (x·y/1e18)·(x²/1e18 + y²/1e18)/1e18, gave identical outputs for all five cases.
  it.each([
    {
      label: '10,000 DAI -> USDC, 1M/1M, 5 bps',
      pool: { reserves: [1_000_000n * E18, 1_000_000n * E6], decimals: [18, 6], feePpm: 500n },
      i: 0,
      amountIn: 10_000n * E18,
      out: 9994995009n,
    },
    {
      label: '10,000 USDC -> DAI, 1M/1M, 5 bps',
      pool: { reserves: [1_000_000n * E18, 1_000_000n * E6], decimals: [18, 6], feePpm: 500n },
      i: 1,
      amountIn: 10_000n * E6,
      out: 9994995009997503694150n,
    },
    {
      label: '500,000 in, 3M/1M, 5 bps',
      pool: { reserves: [3_000_000n * E6, 1_000_000n * E6], decimals: [6, 6], feePpm: 500n },
      i: 0,
      amountIn: 500_000n * E6,
      out: 325225845182n,
    },
    {
      label: '1 atomic unit into the scarce side, no fee',
      pool: { reserves: [3_000_000n * E6, 1_000_000n * E6], decimals: [6, 6], feePpm: 0n },
      i: 1,
      amountIn: 1n,
      out: 1n,
    },
    {
      label: '250,000 in, uneven 18/6 pool, 3 bps',
      pool: { reserves: [1_234_567_890123456789012345n, 987_654_321098n], decimals: [18, 6], feePpm: 300n },
      i: 0,
      amountIn: 250_000n * E18,
      out: 243207192022n,
    },
  ] as const)('$label', ({ pool, i, amountIn, out }) => {
    expect(solidlyStableGetAmountOut(pool, i, amountIn)).toBe(out)
  })
})

describe('solidlyStableGetAmountOut: invariant', () => {
  it("keeps k' ≥ k, and one more atomic unit out would break it", () => {
    fc.assert(
      fc.property(poolArb, sideArb, fractionArb, (pool, i, millionths) => {
        const amountIn = amountFor(pool, i, millionths)
        const out = solidlyStableGetAmountOut(pool, i, amountIn)
        const o = i === 0 ? 1 : 0
        const k0 = k(pool.reserves[0] * scaleOf(pool.decimals[0]), pool.reserves[1] * scaleOf(pool.decimals[1]))
        expect(out).toBeGreaterThanOrEqual(0n)
        expect(out).toBeLessThan(pool.reserves[o])
        const kept = reservesAfter(pool, i, amountIn, out)
        expect(k(kept.x, kept.y)).toBeGreaterThanOrEqual(k0)
        const greedy = reservesAfter(pool, i, amountIn, out + 1n)
        if (greedy.y > 0n) expect(k(greedy.x, greedy.y)).toBeLessThan(k0)
      }),
      { numRuns: 400 },
    )
  })

  it('matches an independent bisection solver', () => {
    fc.assert(
      fc.property(poolArb, sideArb, fractionArb, (pool, i, millionths) => {
        const amountIn = amountFor(pool, i, millionths)
        expect(solidlyStableGetAmountOut(pool, i, amountIn)).toBe(amountOutByBisection(pool, i, amountIn))
      }),
      { numRuns: 300 },
    )
  })
})

describe('solidlyStableGetAmountOut: properties', () => {
  it('is monotone in amountIn', () => {
    fc.assert(
      fc.property(poolArb, sideArb, fractionArb, fractionArb, (pool, i, a, b) => {
        const lo = amountFor(pool, i, a < b ? a : b)
        const hi = amountFor(pool, i, a < b ? b : a)
        expect(solidlyStableGetAmountOut(pool, i, lo)).toBeLessThanOrEqual(solidlyStableGetAmountOut(pool, i, hi))
      }),
      { numRuns: 200 },
    )
  })

  it('pays less value out than in for a balanced pool', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1_000n, max: 10n ** 10n }),
        fc.constantFrom(6, 18),
        fc.constantFrom(6, 18),
        fc.bigInt({ min: 1n, max: 3_000_000n }),
        (coins, d0, d1, millionths) => {
          const pool: SolidlyStablePool = {
            reserves: [coins * 10n ** BigInt(d0), coins * 10n ** BigInt(d1)],
            decimals: [d0, d1],
            feePpm: 0n,
          }
          const amountIn = (pool.reserves[0] * millionths) / 1_000_000n + 1n
          const out = solidlyStableGetAmountOut(pool, 0, amountIn)
          expect(out * scaleOf(d1)).toBeLessThan(amountIn * scaleOf(d0))
          // The stable curve is flat near balance: 0.1% of the pool still gets over 99.99% through.
          if (millionths <= 1_000n && amountIn >= 10n ** BigInt(d0)) {
            expect(out * scaleOf(d1) * 10_000n).toBeGreaterThan(amountIn * scaleOf(d0) * 9_999n)
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('is symmetric in a balanced pool', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1_000n, max: 10n ** 10n }), fractionArb, (coins, millionths) => {
        const pool: SolidlyStablePool = { reserves: [coins * E6, coins * E6], decimals: [6, 6], feePpm: 500n }
        const amountIn = (coins * E6 * millionths) / 1_000_000n
        expect(solidlyStableGetAmountOut(pool, 0, amountIn)).toBe(solidlyStableGetAmountOut(pool, 1, amountIn))
      }),
      { numRuns: 200 },
    )
  })
})

describe('solidlyStableGetAmountOut: fee', () => {
  it('takes the fee from the input, rounded down', () => {
    const noFee: SolidlyStablePool = { reserves: [1_000_000n * E6, 1_000_000n * E6], decimals: [6, 6], feePpm: 0n }
    const fivePpm: SolidlyStablePool = { ...noFee, feePpm: 500n }
    // 1,999 units · 500 ppm = 0.9995 → fee 0: the whole input goes into the curve.
    expect(solidlyStableGetAmountOut(fivePpm, 0, 1_999n)).toBe(solidlyStableGetAmountOut(noFee, 0, 1_999n))
    // 2,000 units · 500 ppm = 1 exactly.
    expect(solidlyStableGetAmountOut(fivePpm, 0, 2_000n)).toBe(solidlyStableGetAmountOut(noFee, 0, 1_999n))
    // 1,000,000,000 units (1,000 coins) · 500 ppm = 500,000 units.
    expect(solidlyStableGetAmountOut(fivePpm, 0, 10n ** 9n)).toBe(solidlyStableGetAmountOut(noFee, 0, 10n ** 9n - 500_000n))
  })

  it('equals the no-fee output on the input less floor(amountIn·feePpm/1e6)', () => {
    fc.assert(
      fc.property(poolArb, sideArb, fractionArb, fc.bigInt({ min: 0n, max: 999_999n }), (pool, i, millionths, feePpm) => {
        const amountIn = amountFor(pool, i, millionths)
        const withFee = solidlyStableGetAmountOut({ ...pool, feePpm }, i, amountIn)
        const netIn = amountIn - (amountIn * feePpm) / 1_000_000n
        expect(withFee).toBe(solidlyStableGetAmountOut({ ...pool, feePpm: 0n }, i, netIn))
      }),
      { numRuns: 200 },
    )
  })
})

describe('solidlyStableGetAmountOut: edges and bad input', () => {
  const pool: SolidlyStablePool = { reserves: [1_000_000n * E18, 1_000_000n * E6], decimals: [18, 6], feePpm: 500n }

  it('returns 0 for 0 in and for dust below one output unit', () => {
    expect(solidlyStableGetAmountOut(pool, 0, 0n)).toBe(0n)
    expect(solidlyStableGetAmountOut(pool, 0, 1n)).toBe(0n)
    // 1e12 wei of an 18-decimal coin is one 6-decimal unit before the fee and the curve; they floor it to 0.
    expect(solidlyStableGetAmountOut({ ...pool, feePpm: 0n }, 0, 10n ** 12n)).toBe(0n)
  })

  it('scales 1 atomic unit of a 6-decimal coin into 18-decimal wei', () => {
    // Near balance the marginal price is 1 (∂k/∂x = ∂k/∂y when x = y), so 1e12 wei comes out less the
    // curvature and rounding, which cost a single wei here.
    expect(solidlyStableGetAmountOut({ ...pool, feePpm: 0n }, 1, 1n)).toBe(10n ** 12n - 1n)
  })

  it('never pays out the whole reserve, however large the input', () => {
    const out = solidlyStableGetAmountOut(pool, 0, 10n ** 40n)
    expect(out).toBeLessThan(pool.reserves[1])
    expect(out).toBeGreaterThan(pool.reserves[1] - 10n)
  })

  it.each([
    { label: 'zero reserve', bad: { ...pool, reserves: [0n, E6] as const } },
    { label: 'negative reserve', bad: { ...pool, reserves: [E18, -1n] as const } },
    { label: 'decimals above 18', bad: { ...pool, decimals: [19, 6] as const } },
    { label: 'negative fee', bad: { ...pool, feePpm: -1n } },
    { label: 'fee of 100%', bad: { ...pool, feePpm: 1_000_000n } },
  ])('rejects a $label with a RangeError', ({ bad }) => {
    expect(() => solidlyStableGetAmountOut(bad, 0, E18)).toThrow(RangeError)
  })

  it('rejects a negative input', () => {
    expect(() => solidlyStableGetAmountOut(pool, 0, -1n)).toThrow(RangeError)
  })
})
