import { describe, expect, it } from 'vitest'
import {
  cutLadder,
  LIMIT_L0,
  LIMIT_L1,
  LIMIT_LG,
  maxAtomicFlow,
  maxInputForOutput,
  roomLeft,
  type TokenTradingLimits,
  type TradingLimitConfig,
  type TradingLimitState,
  tradingLimitId,
  withinTradingLimits,
} from '../../src/market/mentoTradingLimits.ts'

// Mento's trading limits as the Broker's swapIn enforces them (mento-core Broker.sol guardTradingLimits,
// TradingLimits.sol update and verify), and the ladder they leave.

const NOW = 1_700_000_000
const config = (overrides: Partial<TradingLimitConfig> = {}): TradingLimitConfig => ({
  timestep0: 300,
  timestep1: 86_400,
  limit0: 1_000n,
  limit1: 5_000n,
  limitGlobal: 20_000n,
  flags: 0,
  ...overrides,
})
const state = (overrides: Partial<TradingLimitState> = {}): TradingLimitState => ({
  lastUpdated0: NOW - 10,
  lastUpdated1: NOW - 10,
  netflow0: 0n,
  netflow1: 0n,
  netflowGlobal: 0n,
  ...overrides,
})
const e6 = (whole: bigint): bigint => whole * 10n ** 6n
const e18 = (whole: bigint): bigint => whole * 10n ** 18n

describe('the limit id', () => {
  it('is the exchange id XOR the token address as a bytes32', () => {
    const exchangeId = '0x773bcec109cee923b5e04706044fd9d6a5121b1a6a4c059c36fdbe5b845d4e9b'
    const token = '0x765DE816845861e75A25fCA122bb6898B8B1282a'
    expect(tradingLimitId(exchangeId, token)).toBe('0x773bcec109cee923b5e04706721231c0214a7afd3069f93d1446d6c33cec66b1')
    // Only the low 20 bytes change, and XOR twice gives the exchange id back.
    expect(tradingLimitId(tradingLimitId(exchangeId, token), token)).toBe(exchangeId)
  })
})

describe('roomLeft', () => {
  it('no flag set: no limit applies, whatever the netflows', () => {
    expect(roomLeft(config({ flags: 0 }), state({ netflow0: 5_000n }), NOW)).toEqual({})
  })

  it('L0 alone: room is the limit less the netflow that way, within the window', () => {
    expect(roomLeft(config({ flags: LIMIT_L0 }), state({ netflow0: 400n }), NOW)).toEqual({
      inflow: { units: 600n, limit: 'L0' },
      outflow: { units: 1_000n, limit: 'L0' },
    })
  })

  it('a negative netflow leaves less outflow room, and is not counted on for more inflow (the window may restart)', () => {
    expect(roomLeft(config({ flags: LIMIT_L0 }), state({ netflow0: -700n }), NOW)).toEqual({
      inflow: { units: 1_000n, limit: 'L0' },
      outflow: { units: 300n, limit: 'L0' },
    })
  })

  it('a window whose time is up at the block starts from 0; at exactly lastUpdated + timestep it is still running', () => {
    const full = state({ netflow0: 1_000n, lastUpdated0: NOW - 300 })
    expect(roomLeft(config({ flags: LIMIT_L0 }), full, NOW).inflow).toEqual({ units: 0n, limit: 'L0' })
    expect(roomLeft(config({ flags: LIMIT_L0 }), full, NOW + 1).inflow).toEqual({ units: 1_000n, limit: 'L0' })
  })

  it('L1 moves only with L0: the smaller room of the two windows binds, each with its own expiry', () => {
    const flows = state({ netflow0: 100n, netflow1: 4_500n })
    expect(roomLeft(config({ flags: LIMIT_L0 | LIMIT_L1 }), flows, NOW)).toEqual({
      inflow: { units: 500n, limit: 'L1' },
      outflow: { units: 1_000n, limit: 'L0' },
    })
    // The day is over: L1 starts from 0 and L0 binds.
    const dayOld = state({ netflow0: 100n, netflow1: 4_500n, lastUpdated1: NOW - 86_401 })
    expect(roomLeft(config({ flags: LIMIT_L0 | LIMIT_L1 }), dayOld, NOW).inflow).toEqual({ units: 900n, limit: 'L0' })
    // L1 without L0 (validate() forbids it): a swap never moves netflow1, so only a netflow1 beyond it binds.
    expect(roomLeft(config({ flags: LIMIT_L1 }), flows, NOW)).toEqual({})
    expect(roomLeft(config({ flags: LIMIT_L1 }), state({ netflow1: 5_001n }), NOW).inflow).toEqual({ units: 0n, limit: 'L1' })
  })

  it('LG never restarts', () => {
    const global = state({ netflowGlobal: -19_000n, lastUpdated0: 0, lastUpdated1: 0 })
    expect(roomLeft(config({ flags: LIMIT_LG }), global, NOW)).toEqual({
      inflow: { units: 39_000n, limit: 'LG' },
      outflow: { units: 1_000n, limit: 'LG' },
    })
    expect(roomLeft(config({ flags: LIMIT_L0 | LIMIT_LG }), global, NOW).outflow).toEqual({ units: 1_000n, limit: 'L0' })
  })

  it('a netflow already beyond its limit (the limit lowered since) leaves no room either way', () => {
    expect(roomLeft(config({ flags: LIMIT_L0 }), state({ netflow0: -1_200n }), NOW)).toEqual({
      inflow: { units: 0n, limit: 'L0' },
      outflow: { units: 0n, limit: 'L0' },
    })
  })
})

describe('whole-unit rounding', () => {
  it('a flow counts as whole tokens truncated: everything below units + 1 tokens, none when no token is left', () => {
    expect(maxAtomicFlow(600n, 6)).toBe(e6(601n) - 1n)
    expect(maxAtomicFlow(1n, 18)).toBe(e18(2n) - 1n)
    // Any nonzero flow counts as at least one token.
    expect(maxAtomicFlow(0n, 18)).toBe(0n)
    expect(maxAtomicFlow(-3n, 6)).toBe(0n)
  })
})

describe('the ladder within the limits', () => {
  // USDT (6 decimals) → cUSD (18), 0.5% off, at USD 100 to 1,000,000.
  const points: [bigint, bigint][] = [100n, 1_000n, 10_000n, 100_000n, 1_000_000n].map((usd) => [e6(usd), (e18(usd) * 995n) / 1_000n])

  it('an output allowance becomes an input at the first point’s rate taken one unit up, never below the first point', () => {
    const [first] = points
    if (first === undefined) throw new Error('no point')
    const maxIn = maxInputForOutput(first, e18(5_000n))
    // 5,000 cUSD at 0.995 per USDT: just under 5,025.125… USDT, and what it pays is within the allowance.
    expect(maxIn).toBe((e18(5_000n) * e6(100n)) / (first[1] + 1n))
    expect((maxIn * first[1]) / first[0]).toBeLessThanOrEqual(e18(5_000n))
    expect(maxInputForOutput(first, first[1])).toBe(first[0])
    expect(maxInputForOutput(first, first[1] - 1n)).toBe(0n)
  })

  it('cutLadder drops the sizes above and adds a point at the allowance, interpolated down', () => {
    expect(cutLadder(points, e6(5_000n))).toEqual({
      points: [...points.slice(0, 2), [e6(5_000n), (e18(5_000n) * 995n) / 1_000n]],
      isCut: true,
    })
    // At a ladder size: no extra point; above the largest: the ladder as read.
    expect(cutLadder(points, e6(1_000n))).toEqual({ points: points.slice(0, 2), isCut: true })
    expect(cutLadder(points, e6(2_000_000n))).toEqual({ points, isCut: false })
    // Below the first size: one point on the line from (0, 0).
    expect(cutLadder(points, e6(50n))).toEqual({ points: [[e6(50n), (e18(50n) * 995n) / 1_000n]], isCut: true })
    expect(cutLadder(points, 0n)).toEqual({ points: [], isCut: true })
  })

  const usdt = (overrides: Partial<TokenTradingLimits> = {}): TokenTradingLimits => ({
    symbol: 'USDT',
    decimals: 6,
    config: config(),
    state: state(),
    ...overrides,
  })
  const cusd = (overrides: Partial<TokenTradingLimits> = {}): TokenTradingLimits => ({
    symbol: 'cUSD',
    decimals: 18,
    config: config(),
    state: state(),
    ...overrides,
  })
  const direction = { from: 'USDT', to: 'cUSD', points }

  it('tokenIn’s inflow room ends the ladder, and the end says which limit', () => {
    const limited = withinTradingLimits(
      direction,
      usdt({ config: config({ flags: LIMIT_L0 }), state: state({ netflow0: 400n }) }),
      cusd(),
      NOW,
    )
    const maxIn = e6(601n) - 1n
    // 600.999999 USDT: between the USD 100 and 1,000 points, on their line (the ladder is linear here).
    expect(limited.points.at(-1)).toEqual([maxIn, (maxIn * 995n * 10n ** 12n) / 1_000n])
    expect(limited.points).toHaveLength(2)
    expect(limited.end).toBe(
      `USDT → cUSD above ${maxIn}: Mento's trading limit would refuse it (USDT's L0 leaves 600 whole USDT to flow in)`,
    )
  })

  it('tokenOut’s outflow room ends it where the output is surely within it; the smaller of the two binds', () => {
    const out = cusd({ config: config({ flags: LIMIT_L0 | LIMIT_L1, limit1: 3_000n }), state: state({ netflow1: -500n }) })
    const limited = withinTradingLimits(direction, usdt({ config: config({ flags: LIMIT_LG }) }), out, NOW)
    const [first] = points
    const maxIn = maxInputForOutput(first ?? [1n, 1n], e18(1_001n) - 1n)
    expect(limited.points.at(-1)?.[0]).toBe(maxIn)
    expect(limited.points.at(-1)?.[1]).toBeLessThan(e18(1_001n))
    expect(limited.end).toContain("(cUSD's L0 leaves 1000 whole cUSD to flow out)")
  })

  it('no whole token left is no point at all, with the reason', () => {
    const full = usdt({ config: config({ flags: LIMIT_L0 }), state: state({ netflow0: 1_000n }) })
    expect(withinTradingLimits(direction, full, cusd(), NOW)).toEqual({
      from: 'USDT',
      to: 'cUSD',
      points: [],
      end: "USDT → cUSD: Mento's trading limit leaves no room (USDT's L0 leaves 0 whole USDT to flow in)",
    })
    // The next block after the window ends: the full limit again.
    expect(
      withinTradingLimits(direction, { ...full, state: state({ netflow0: 1_000n, lastUpdated0: NOW - 301 }) }, cusd(), NOW).points,
    ).toHaveLength(3)
  })

  it('limits with room beyond the ladder, or no limit at all, leave it as read', () => {
    const read = { ...direction, end: 'USDT → cUSD at 10000000000000: the quote failed' }
    expect(withinTradingLimits(read, usdt({ config: config({ flags: LIMIT_LG, limitGlobal: 10_000_000n }) }), cusd(), NOW)).toEqual(read)
    expect(withinTradingLimits(read, usdt(), cusd(), NOW)).toEqual(read)
  })
})
