import { describe, it, expect } from 'vitest'
import fc from 'fast-check'
import { prepareStableSwap, stableSwapD, stableSwapGetDy, stableSwapY } from '../../src/engine/stableSwap.ts'
import type { StableSwapPool } from '../../src/engine/stableSwap.ts'

const E18 = 10n ** 18n
const E6 = 10n ** 6n

// ---- Independent solvers: none of these use Newton or the implementation's formulas. ----

/** Floor square root by bisection on r² ≤ v. */
function isqrt(v: bigint): bigint {
  if (v < 0n) throw new RangeError('negative')
  let lo = 0n
  let hi = 1n
  while (hi * hi <= v) hi *= 2n
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n
    if (mid * mid <= v) lo = mid
    else hi = mid
  }
  return lo
}

/**
 * n = 2: with the other coin at x, the invariant times 4x·y is the quadratic
 * 4x·Ann·y² + 4x·(Ann·x + D − Ann·D)·y − D³ = 0; its positive root is (−B + √(B² + 4aC)) / 2a, floored.
 */
function yByQuadratic(x: bigint, d: bigint, ann: bigint): bigint {
  const a = 4n * x * ann
  const b = 4n * x * (ann * x + d - ann * d)
  const c = d ** 3n
  return (isqrt(b * b + 4n * a * c) - b) / (2n * a)
}

/**
 * Smallest integer D with R(D) ≥ 0, where R is the invariant's residual multiplied by nⁿ·Πx:
 * R(D) = (Ann − 1)·D·nⁿΠx + D^(n+1) − Ann·S·nⁿΠx, increasing in D; the root lies in (0, S].
 */
function dByBisection(xp: readonly bigint[], ann: bigint): bigint {
  const n = BigInt(xp.length)
  const s = xp.reduce((acc, x) => acc + x, 0n)
  const p = xp.reduce((acc, x) => acc * x * n, 1n)
  let lo = 0n
  let hi = s
  while (lo < hi) {
    const mid = (lo + hi) / 2n
    if ((ann - 1n) * mid * p + mid ** (n + 1n) - ann * s * p >= 0n) hi = mid
    else lo = mid + 1n
  }
  return lo
}

function abs(v: bigint): bigint {
  return v < 0n ? -v : v
}

function pool(balances: bigint[], decimals: number[], amp: bigint, feePpm = 0n): StableSwapPool {
  return { balances, decimals, amp, feePpm }
}

/** Normalised balance: whole coins ≥ 1000 plus a random fraction, 18 decimals. */
const balanceArb = fc.bigInt({ min: 1_000n * E18, max: 1_000_000_000n * E18 })
const ampArb = fc.bigInt({ min: 1n, max: 5_000n })

describe('stableSwapD', () => {
  it('is exactly Σx for a balanced pool', () => {
    // With every xᵢ = X: S = nX and nⁿ·Πx = nⁿXⁿ, so D = nX gives D^(n+1)/(nⁿΠx) = nX = D and both sides read
    // Ann·nX + nX. Newton from D = S = nX is therefore already at the root and returns it unchanged.
    const x = 1_234_567n * E18 + 890n
    expect(stableSwapD([x, x], 200n)).toBe(2n * x)
    expect(stableSwapD([x, x, x], 2_000n * 27n)).toBe(3n * x)
    // 1,000,000 DAI (18 dec), USDC and USDT (6 dec) normalise to the same X.
    const prepared = prepareStableSwap(pool([1_000_000n * E18, 1_000_000n * E6, 1_000_000n * E6], [18, 6, 6], 2_000n))
    expect(prepared.d).toBe(3_000_000n * E18)
    expect(prepared.ann).toBe(2_000n * 27n)
    expect(prepared.scale).toEqual([1n, 10n ** 12n, 10n ** 12n])
  })

  it('matches bisection on the invariant within 1 wei for 2 coins', () => {
    fc.assert(
      fc.property(balanceArb, balanceArb, ampArb, (x0, x1, amp) => {
        const ann = amp * 4n
        expect(abs(stableSwapD([x0, x1], ann) - dByBisection([x0, x1], ann))).toBeLessThanOrEqual(1n)
      }),
      { numRuns: 300 },
    )
  })

  it('matches bisection on the invariant within 1 wei for 3 coins', () => {
    fc.assert(
      fc.property(balanceArb, balanceArb, balanceArb, ampArb, (x0, x1, x2, amp) => {
        const ann = amp * 27n
        const xp = [x0, x1, x2]
        expect(abs(stableSwapD(xp, ann) - dByBisection(xp, ann))).toBeLessThanOrEqual(1n)
      }),
      { numRuns: 300 },
    )
  })

  it('lies between n·(Πx)^(1/n) and Σx for a lopsided pool', () => {
    // Constant-sum (A → ∞) gives Σx, constant-product (A → 0) gives n·geomean; 2 coins: 2·√(x0·x1).
    const xp = [10n * E18, 1_000_000n * E18]
    const d = stableSwapD(xp, 400n)
    expect(d).toBeLessThan(1_000_010n * E18)
    expect(d).toBeGreaterThan(2n * isqrt(xp[0]! * xp[1]!))
  })
})

describe('stableSwapY', () => {
  it('matches the closed-form quadratic root within 1 wei for 2 coins', () => {
    fc.assert(
      fc.property(balanceArb, balanceArb, fc.bigInt({ min: 0n, max: 10n ** 9n * E18 }), ampArb, (x0, x1, dx, amp) => {
        const ann = amp * 4n
        const xp = [x0, x1]
        const d = stableSwapD(xp, ann)
        const x = x0 + dx
        expect(abs(stableSwapY(0, 1, x, xp, d, ann) - yByQuadratic(x, d, ann))).toBeLessThanOrEqual(1n)
        expect(abs(stableSwapY(1, 0, x, [x1, x0], d, ann) - yByQuadratic(x, d, ann))).toBeLessThanOrEqual(1n)
      }),
      { numRuns: 300 },
    )
  })

  it('returns the other balance within 1 wei when nothing changes', () => {
    const xp = [3_000_000n * E18, 7_000_000n * E18 + 12_345n]
    const ann = 400n
    const d = stableSwapD(xp, ann)
    expect(abs(stableSwapY(0, 1, xp[0]!, xp, d, ann) - xp[1]!)).toBeLessThanOrEqual(1n)
  })

  it('rejects equal or out-of-range indices and a non-positive balance', () => {
    const xp = [E18, E18]
    expect(() => stableSwapY(0, 0, E18, xp, 2n * E18, 4n)).toThrow(RangeError)
    expect(() => stableSwapY(0, 2, E18, xp, 2n * E18, 4n)).toThrow(RangeError)
    expect(() => stableSwapY(-1, 1, E18, xp, 2n * E18, 4n)).toThrow(RangeError)
    expect(() => stableSwapY(0, 1, 0n, xp, 2n * E18, 4n)).toThrow(RangeError)
  })
})

describe('stableSwapGetDy: worked examples', () => {
  // DAI/USDC/USDT-like: decimals 18/6/6, A = 2000 (Ann = 2000·27), fee 100 ppm (1 bp), deliberately unbalanced.
  // Expected values come from a separate Python model (python3, arbitrary-precision ints) written from the
  // invariant: D by Newton as in routing.md 4.2 with D_P = D^(n+1) // (nⁿ·Πx), y by Newton on the quadratic,
  // dy = (xp_j − y − 1) // scale_j, fee = dy·100 // 10⁶. As a second check the same model solved D and y by
  // integer bisection on the multiplied-out invariant (no Newton); that gave D = …086 instead of …085 and the
  // 18-decimal outputs 1 wei lower, the 6-decimal outputs identical.
  const threePool = prepareStableSwap(
    pool([50_000_000_123456789012345678n, 48_000_000_654321n, 62_000_000_111111n], [18, 6, 6], 2_000n, 100n),
  )

  it('computes D of the 3-coin pool', () => {
    expect(threePool.d).toBe(159999943072520226363441085n)
  })

  it.each([
    { label: '1,000 USDC -> DAI', i: 1, j: 0, dx: 1_000n * E6, dy: 999902515650176411432n },
    { label: '1,000,000 DAI -> USDT', i: 0, j: 2, dx: 1_000_000n * E18, dy: 999910679395n },
    { label: '1 USDT -> USDC', i: 2, j: 1, dx: 1n * E6, dy: 999886n },
    { label: '5,000,000 USDT -> DAI', i: 2, j: 0, dx: 5_000_000n * E6, dy: 4999414851490403428193553n },
    // USDC is the scarcer coin, so one atomic unit is worth a little over one USDT unit and survives the floor.
    { label: '1 atomic USDC -> USDT', i: 1, j: 2, dx: 1n, dy: 1n },
  ])('$label', ({ i, j, dx, dy }) => {
    expect(stableSwapGetDy(threePool, i, j, dx)).toBe(dy)
  })

  it('2-coin balanced pool, A = 100, 4 bps: values from the Python model', () => {
    const p = prepareStableSwap(pool([1_000_000n * E18, 1_000_000n * E18], [18, 18], 100n, 400n))
    expect(p.d).toBe(2_000_000n * E18)
    // Without the fee it is 1e18 − 4,975,124,354 = 999999995024875646 (slippage plus the held-back wei);
    // the 4 bps fee then takes floor(999999995024875646 · 400 / 1e6) = 399999998009950.
    expect(stableSwapGetDy(p, 0, 1, E18)).toBe(999599995026865696n)
    expect(stableSwapGetDy(p, 0, 1, 100_000n * E18)).toBe(99909796859367415788546n)
  })
})

describe('stableSwapGetDy: decimals', () => {
  // 1,000,000 DAI (18) against 1,000,000 USDC (6), A = 100, no fee. Values from the Python model above.
  const p = prepareStableSwap(pool([1_000_000n * E18, 1_000_000n * E6], [18, 6], 100n))

  it('scales 1 atomic unit of a 6-decimal coin to 1e12 wei of an 18-decimal coin, less the held-back wei', () => {
    expect(stableSwapGetDy(p, 1, 0, 1n)).toBe(10n ** 12n - 1n)
    expect(stableSwapGetDy(p, 1, 0, E6)).toBe(999999995024875646n)
  })

  it('floors 18-decimal dust to zero 6-decimal units', () => {
    expect(stableSwapGetDy(p, 0, 1, 1n)).toBe(0n)
    // 1e12 wei is worth one USDC unit minus slippage and the held-back wei, so it floors to 0; 2e12 gives 1.
    expect(stableSwapGetDy(p, 0, 1, 10n ** 12n)).toBe(0n)
    expect(stableSwapGetDy(p, 0, 1, 2n * 10n ** 12n)).toBe(1n)
  })

  it('returns 0 rather than a negative for 1 wei between 18-decimal coins', () => {
    const same = prepareStableSwap(pool([1_000_000n * E18, 1_000_000n * E18], [18, 18], 100n))
    expect(stableSwapGetDy(same, 0, 1, 1n)).toBe(0n)
    expect(stableSwapGetDy(same, 0, 1, 0n)).toBe(0n)
    // A hand-built state whose D is 10 wei too high puts y above xp[1]: the quote clamps to 0, not −10.
    const x = 1_000_000n * E18
    const stale = { xp: [x, x], d: 2n * x + 10n, ann: 400n, scale: [1n, 1n], n: 2, feePpm: 0n }
    expect(stableSwapY(0, 1, x + 1n, stale.xp, stale.d, stale.ann)).toBeGreaterThan(x)
    expect(stableSwapGetDy(stale, 0, 1, 1n)).toBe(0n)
  })
})

describe('stableSwapGetDy: fee', () => {
  it('takes floor(dy·feePpm/1e6) from the no-fee output', () => {
    const balances = [50_000_000_123456789012345678n, 48_000_000_654321n, 62_000_000_111111n]
    const noFee = prepareStableSwap(pool(balances, [18, 6, 6], 2_000n, 0n))
    const withFee = prepareStableSwap(pool(balances, [18, 6, 6], 2_000n, 100n))
    const dy = stableSwapGetDy(noFee, 1, 0, 1_000n * E6)
    // 1000002515901766588090 · 100 / 1e6 = 100000251590176658.809 → 100000251590176658 (floor).
    expect(dy).toBe(1000002515901766588090n)
    expect(stableSwapGetDy(withFee, 1, 0, 1_000n * E6)).toBe(dy - 100000251590176658n)
  })

  it('rounds a sub-unit fee down to nothing', () => {
    // 999,985 USDT units · 100 ppm = 99.9985 units of fee → 99; a fee of 1 ppm on 999,985 is 0.999985 → 0.
    const balances = [50_000_000_123456789012345678n, 48_000_000_654321n, 62_000_000_111111n]
    const noFee = stableSwapGetDy(prepareStableSwap(pool(balances, [18, 6, 6], 2_000n, 0n)), 2, 1, E6)
    expect(noFee).toBe(999985n)
    expect(stableSwapGetDy(prepareStableSwap(pool(balances, [18, 6, 6], 2_000n, 100n)), 2, 1, E6)).toBe(999886n)
    expect(stableSwapGetDy(prepareStableSwap(pool(balances, [18, 6, 6], 2_000n, 1n)), 2, 1, E6)).toBe(999985n)
  })

  it('holds for any fee on random pools', () => {
    fc.assert(
      fc.property(
        balanceArb,
        balanceArb,
        fc.bigInt({ min: 1n, max: 10n ** 7n * E18 }),
        fc.bigInt({ min: 0n, max: 999_999n }),
        (x0, x1, dx, feePpm) => {
          const dy = stableSwapGetDy(prepareStableSwap(pool([x0, x1], [18, 18], 200n)), 0, 1, dx)
          const got = stableSwapGetDy(prepareStableSwap(pool([x0, x1], [18, 18], 200n, feePpm)), 0, 1, dx)
          expect(got).toBe(dy - (dy * feePpm) / 1_000_000n)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('stableSwapGetDy: properties', () => {
  // A balanced-ish pool: each balance within ±20% of a common base, in 6- or 18-decimal coins.
  const poolArb = fc
    .record({
      base: fc.bigInt({ min: 10_000n, max: 1_000_000_000n }),
      skews: fc.array(fc.integer({ min: 80, max: 120 }), { minLength: 2, maxLength: 4 }),
      decimals: fc.array(fc.constantFrom(6, 18), { minLength: 4, maxLength: 4 }),
      amp: fc.bigInt({ min: 1n, max: 5_000n }),
      feePpm: fc.constantFrom(0n, 100n, 400n, 3_000n),
    })
    .map(({ base, skews, decimals, amp, feePpm }) => {
      const decs = skews.map((_, k) => decimals[k] ?? 18)
      const balances = skews.map((skew, k) => (base * BigInt(skew) * 10n ** BigInt(decs[k] ?? 18)) / 100n)
      return pool(balances, decs, amp, feePpm)
    })

  it('is monotone in dx', () => {
    fc.assert(
      fc.property(poolArb, fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.bigInt({ min: 0n, max: 10n ** 30n }), (raw, a, b) => {
        const p = prepareStableSwap(raw)
        const last = p.n - 1
        // Keep dx below the pool's size in coin 0's units so y stays well defined.
        const cap = raw.balances[0]!
        const lo = (a < b ? a : b) % cap
        const hi = lo + ((a > b ? a - b : b - a) % cap)
        expect(stableSwapGetDy(p, 0, last, lo)).toBeLessThanOrEqual(stableSwapGetDy(p, 0, last, hi))
      }),
      { numRuns: 200 },
    )
  })

  it('pays less value out than in for a balanced pool', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 9n }),
        fc.constantFrom(6, 18),
        fc.constantFrom(6, 18),
        ampArb,
        fc.bigInt({ min: 1n, max: 10n ** 27n }),
        (coins, di, dj, amp, dxRaw) => {
          const p = prepareStableSwap(pool([coins * 10n ** BigInt(di), coins * 10n ** BigInt(dj)], [di, dj], amp))
          const dx = (dxRaw % (coins * 10n ** BigInt(di))) + 1n
          // Compare in normalised 18-decimal value.
          const valueIn = dx * 10n ** BigInt(18 - di)
          const valueOut = stableSwapGetDy(p, 0, 1, dx) * 10n ** BigInt(18 - dj)
          expect(valueOut).toBeLessThan(valueIn)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('gives the same answer in either direction of a symmetric pool', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 9n }), ampArb, fc.bigInt({ min: 0n, max: 10n ** 27n }), (coins, amp, dxRaw) => {
        // USDC/USDT-like in the 2-coin case, and mixed decimals normalised to the same value in the 3-coin one.
        const two = prepareStableSwap(pool([coins * E6, coins * E6], [6, 6], amp, 400n))
        const dx = dxRaw % (coins * E6)
        expect(stableSwapGetDy(two, 0, 1, dx)).toBe(stableSwapGetDy(two, 1, 0, dx))
        const three = prepareStableSwap(pool([coins * E18, coins * E6, coins * E6], [18, 6, 6], amp, 100n))
        expect(stableSwapGetDy(three, 1, 2, dx)).toBe(stableSwapGetDy(three, 2, 1, dx))
        expect(stableSwapGetDy(three, 1, 0, dx)).toBe(stableSwapGetDy(three, 2, 0, dx))
      }),
      { numRuns: 200 },
    )
  })

  it('slips less with more amp', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1_000n, max: 10n ** 9n }),
        fc.integer({ min: 1, max: 50 }),
        fc.bigInt({ min: 1n, max: 2_000n }),
        (coins, pct, amp) => {
          // A trade of 1–50% of one side of a balanced pool: output approaches dx as A grows.
          const dx = (coins * E6 * BigInt(pct)) / 100n
          const low = stableSwapGetDy(prepareStableSwap(pool([coins * E6, coins * E6], [6, 6], amp)), 0, 1, dx)
          const high = stableSwapGetDy(prepareStableSwap(pool([coins * E6, coins * E6], [6, 6], amp * 10n)), 0, 1, dx)
          expect(high).toBeGreaterThanOrEqual(low)
          expect(high).toBeLessThan(dx)
        },
      ),
      { numRuns: 200 },
    )
    // A strict example: 10% of a 1M/1M pool.
    const at = (amp: bigint): bigint =>
      stableSwapGetDy(prepareStableSwap(pool([1_000_000n * E6, 1_000_000n * E6], [6, 6], amp)), 0, 1, 100_000n * E6)
    expect(at(10n)).toBeLessThan(at(100n))
    expect(at(100n)).toBeLessThan(at(1_000n))
  })
})

describe('prepareStableSwap / stableSwapGetDy: bad input', () => {
  it.each([
    { label: 'one coin', raw: pool([E18], [18], 100n) },
    { label: 'mismatched lengths', raw: pool([E18, E18], [18], 100n) },
    { label: 'zero balance', raw: pool([E18, 0n], [18, 18], 100n) },
    { label: 'negative balance', raw: pool([E18, -1n], [18, 18], 100n) },
    { label: 'decimals above 18', raw: pool([E18, E18], [18, 19], 100n) },
    { label: 'fractional decimals', raw: pool([E18, E18], [18, 6.5], 100n) },
    { label: 'zero amp', raw: pool([E18, E18], [18, 18], 0n) },
    { label: 'negative amp', raw: pool([E18, E18], [18, 18], -5n) },
    { label: 'negative fee', raw: pool([E18, E18], [18, 18], 100n, -1n) },
    { label: 'fee of 100%', raw: pool([E18, E18], [18, 18], 100n, 1_000_000n) },
  ])('rejects $label with a RangeError', ({ raw }) => {
    expect(() => prepareStableSwap(raw)).toThrow(RangeError)
  })

  it('rejects bad indices and a negative dx', () => {
    const p = prepareStableSwap(pool([E18, E18], [18, 18], 100n))
    expect(() => stableSwapGetDy(p, 0, 0, E18)).toThrow(RangeError)
    expect(() => stableSwapGetDy(p, 0, 2, E18)).toThrow(RangeError)
    expect(() => stableSwapGetDy(p, 0.5, 1, E18)).toThrow(RangeError)
    expect(() => stableSwapGetDy(p, 0, 1, -1n)).toThrow(RangeError)
  })
})
