import { pow10 } from './decimal.ts'

/**
 * Curve-style StableSwap maths, derived from the invariant (routing.md 4.2), for n coins whose balances are
 * normalised to 18 decimals (xᵢ):
 *
 *   Ann·Σxᵢ + D = Ann·D + D^(n+1) / (nⁿ·Πxᵢ),   Ann = A·nⁿ
 *
 * Everything is bigint with floor division; no amount ever passes through a Number.
 */

export type StableSwapPool = {
  /** Atomic units of each coin. */
  balances: readonly bigint[]
  decimals: readonly number[]
  /** The paper's A, so Ann = A·nⁿ. Pools that store A·n^(n−1) or A·100 must be converted by the caller. */
  amp: bigint
  /** Fee on the output in parts per million (100 = 1 bp). */
  feePpm: bigint
}

export type PreparedStableSwap = {
  /** Balances normalised to 18 decimals. */
  xp: readonly bigint[]
  d: bigint
  ann: bigint
  /** scale[i] = 10^(18 − decimals[i]). */
  scale: readonly bigint[]
  n: number
  feePpm: bigint
}

const MAX_ITERATIONS = 255
const PPM = 1_000_000n

/** Validates a pool and computes its normalised balances and D once, so each quote only solves for y. */
export function prepareStableSwap(pool: StableSwapPool): PreparedStableSwap {
  const n = pool.balances.length
  if (n < 2) throw new RangeError(`StableSwap pool needs at least 2 coins, got ${n}`)
  if (pool.decimals.length !== n) {
    throw new RangeError(`StableSwap pool has ${n} balances but ${pool.decimals.length} decimals`)
  }
  if (pool.amp <= 0n) throw new RangeError(`StableSwap amp must be positive, got ${pool.amp}`)
  if (pool.feePpm < 0n || pool.feePpm >= PPM) {
    throw new RangeError(`StableSwap feePpm must be in [0, 1000000), got ${pool.feePpm}`)
  }
  const xp: bigint[] = []
  const scale: bigint[] = []
  for (let i = 0; i < n; i++) {
    const balance = pool.balances[i]
    const decimals = pool.decimals[i]
    if (balance === undefined || balance <= 0n) {
      throw new RangeError(`StableSwap balance ${i} must be positive, got ${balance}`)
    }
    if (decimals === undefined || !Number.isInteger(decimals) || decimals < 0 || decimals > 18) {
      throw new RangeError(`StableSwap decimals ${i} must be an integer in [0, 18], got ${decimals}`)
    }
    const s = pow10(18 - decimals)
    scale.push(s)
    xp.push(balance * s)
  }
  const nn = BigInt(n) ** BigInt(n)
  const ann = pool.amp * nn
  return { xp, d: stableSwapD(xp, ann), ann, scale, n, feePpm: pool.feePpm }
}

/**
 * Solves the invariant for D by Newton's method from D = Σx. With f(D) = (Ann−1)·D + D_P − Ann·S and
 * D_P = D^(n+1)/(nⁿ·Πx), the step D − f/f' simplifies to (Ann·S + n·D_P)·D / ((Ann−1)·D + (n+1)·D_P).
 */
export function stableSwapD(xp: readonly bigint[], ann: bigint): bigint {
  const n = BigInt(xp.length)
  let s = 0n
  // nⁿ·Πx, fixed across iterations; D_P is then one exact floor division rather than n truncating ones.
  let nnProd = 1n
  for (const x of xp) {
    if (x <= 0n) throw new RangeError(`StableSwap normalised balance must be positive, got ${x}`)
    s += x
    nnProd *= x * n
  }
  let d = s
  for (let k = 0; k < MAX_ITERATIONS; k++) {
    const dP = d ** (n + 1n) / nnProd
    const prev = d
    d = ((ann * s + dP * n) * d) / ((ann - 1n) * d + (n + 1n) * dP)
    if (d - prev <= 1n && prev - d <= 1n) return d
  }
  throw new RangeError(`StableSwap D did not converge in ${MAX_ITERATIONS} iterations`)
}

/**
 * Coin j's normalised balance when coin i's is x and D is fixed. Multiplying the invariant by y/Ann gives
 * y² + (b − D)·y = c with b = S' + D/Ann and c = D^(n+1)/(nⁿ·Π'·Ann) (S', Π' over the coins other than j),
 * whose Newton step is y = (y² + c)/(2y + b − D); from y = D it descends monotonically onto the root.
 */
export function stableSwapY(i: number, j: number, x: bigint, xp: readonly bigint[], d: bigint, ann: bigint): bigint {
  const n = xp.length
  if (i === j || !Number.isInteger(i) || !Number.isInteger(j) || i < 0 || j < 0 || i >= n || j >= n) {
    throw new RangeError(`StableSwap coin indices must be distinct and in [0, ${n}), got ${i} and ${j}`)
  }
  if (x <= 0n) throw new RangeError(`StableSwap new balance must be positive, got ${x}`)
  const bigN = BigInt(n)
  let sPrime = 0n
  // nⁿ·Π'·Ann: n−1 factors of (x_k·n), times one more n and Ann.
  let cDen = ann * bigN
  let k = 0
  for (const xpk of xp) {
    if (k !== j) {
      const xk = k === i ? x : xpk
      sPrime += xk
      cDen *= xk * bigN
    }
    k++
  }
  const c = d ** (bigN + 1n) / cDen
  // b − D, fixed across iterations (integer sums are exact, so hoisting it changes no result).
  const bMinusD = sPrime + d / ann - d
  let y = d
  for (let it = 0; it < MAX_ITERATIONS; it++) {
    const prev = y
    y = (y * y + c) / (2n * y + bMinusD)
    const step = y - prev
    if (step <= 1n && step >= -1n) return y
  }
  throw new RangeError(`StableSwap y did not converge in ${MAX_ITERATIONS} iterations`)
}

/**
 * Output in atomic units of coin j for dx atomic units of coin i, after the fee. One wei is held back before
 * de-normalising and both the output and the fee are floored, so the quote never exceeds what the pool pays.
 */
export function stableSwapGetDy(pool: PreparedStableSwap, i: number, j: number, dx: bigint): bigint {
  const xi = pool.xp[i]
  const xj = pool.xp[j]
  const si = pool.scale[i]
  const sj = pool.scale[j]
  if (i === j || xi === undefined || xj === undefined || si === undefined || sj === undefined) {
    throw new RangeError(`StableSwap coin indices must be distinct and in [0, ${pool.n}), got ${i} and ${j}`)
  }
  if (dx < 0n) throw new RangeError(`StableSwap dx must be non-negative, got ${dx}`)
  if (dx === 0n) return 0n
  const y = stableSwapY(i, j, xi + dx * si, pool.xp, pool.d, pool.ann)
  const raw = xj - y - 1n
  // A dust input can leave y within a wei of xj: that is zero output, not a negative one.
  if (raw <= 0n) return 0n
  const dy = raw / sj
  return dy - (dy * pool.feePpm) / PPM
}
