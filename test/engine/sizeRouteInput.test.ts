import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { findRoutes } from '../../src/engine/findRoutes.ts'
import type { CandidateRoute, PricedRoute } from '../../src/engine/route.ts'
import { simulateRoute } from '../../src/engine/simulateRoute.ts'
import { sizeRouteInput } from '../../src/engine/sizeRouteInput.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import type { Token } from '../../src/engine/types.ts'

const { catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)

function token(key: string): Token {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`no token ${key}`)
  return found
}

type Case = { route: CandidateRoute; amountIn: bigint; toAmount: bigint }

function viable(fromKey: string, toKey: string, whole: bigint): Case[] {
  const from = token(fromKey)
  const amountIn = whole * 10n ** BigInt(from.decimals)
  const result = findRoutes(catalogue, { from, to: token(toKey), amountIn, slippageE18: 0n })
  if (result.kind !== 'routes') throw new Error(`${fromKey} → ${toKey}: ${result.kind}`)
  return result.viable.map((p: PricedRoute) => ({ route: p.route, amountIn, toAmount: result.amounts.toAmount }))
}

const out = (route: CandidateRoute, amountIn: bigint): bigint => simulateRoute(catalogue, route, amountIn).amountOut

/** The least input whose simulated output reaches `toAmount`, by plain bisection (output grows with input). */
function leastInput({ route, amountIn, toAmount }: Case): bigint {
  let low = 0n
  let high = amountIn
  while (high - low > 1n) {
    const middle = (low + high) / 2n
    if (out(route, middle) >= toAmount) high = middle
    else low = middle
  }
  return high
}

/** Every viable route of every pair of user-facing EVM tokens, at 50 and 1,000 units. */
function sweep(): Case[] {
  const tokens = [...catalogue.tokens.values()].filter(isEvmToken).filter((t) => !t.isHub)
  const cases: Case[] = []
  for (const from of tokens)
    for (const to of tokens) {
      if (from.key === to.key) continue
      for (const whole of [50n, 1000n]) {
        const amountIn = whole * 10n ** BigInt(from.decimals)
        const result = findRoutes(catalogue, { from, to, amountIn, slippageE18: 0n })
        if (result.kind === 'routes')
          for (const p of result.viable) cases.push({ route: p.route, amountIn, toAmount: result.amounts.toAmount })
      }
    }
  return cases
}

describe('sizeRouteInput', () => {
  const all = sweep()

  it('never asks for more than the input and always delivers toAmount (every viable route)', () => {
    expect(all.length).toBeGreaterThan(5000)
    for (const c of all) {
      const sized = sizeRouteInput(catalogue, c.route, c.amountIn, c.toAmount)
      expect(sized <= c.amountIn, c.route.id).toBe(true)
      expect(out(c.route, sized) >= c.toAmount, c.route.id).toBe(true)
    }
  })

  it.each([
    ['ETH:USDC', 'ETH:USDT'],
    ['BAS:USDC', 'POL:USDC'],
    ['ETH:USDC', 'ARB:USDT'],
    ['OPT:USDT', 'ARB:USDC'],
  ])('%s → %s: finds the least input exactly (same decimals, same price along the route)', (fromKey, toKey) => {
    const cases = viable(fromKey, toKey, 1000n)
    expect(cases.length).toBeGreaterThan(0)
    for (const c of cases) {
      const sized = sizeRouteInput(catalogue, c.route, c.amountIn, c.toAmount)
      expect(sized, c.route.id).toBeLessThan(c.amountIn)
      expect(out(c.route, sized) >= c.toAmount, c.route.id).toBe(true)
      expect(out(c.route, sized - 1n) < c.toAmount, c.route.id).toBe(true)
    }
  })

  it('returns the whole input when the route cannot deliver toAmount', () => {
    const [c] = viable('BAS:USDC', 'POL:USDC', 1000n)
    if (!c) throw new Error('no route')
    expect(sizeRouteInput(catalogue, c.route, c.amountIn, c.amountIn * 2n)).toBe(c.amountIn)
  })

  // Where the route's output is a step function of its input (18-decimal DAI through 6-decimal USDT/USDC), a secant
  // step alone crawls inside one flat step; 49.7719 DAI suffices and must not be sized as the whole 50 DAI.
  it('ETH DAI → POL DAI (50 DAI through USDT, CCTP fast): sizes within 1 bp of the least input', () => {
    const c = viable('ETH:DAI', 'POL:DAI', 50n).find(
      (v) =>
        v.route.id === 'eth-curve-3pool:DAI>USDT|eth-univ3-usdc-usdt-100:USDT>USDC|cctp-v2-fast:ETH>POL|pol-univ3-dai-usdc-100:USDC>DAI',
    )
    if (!c) throw new Error('route not viable')
    const least = leastInput(c)
    expect(least).toBeLessThan(49_780_000_000_000_000_000n)
    const sized = sizeRouteInput(catalogue, c.route, c.amountIn, c.toAmount)
    expect((sized - least) * 10_000n <= c.amountIn).toBe(true)
  })

  // Across the catalogue, at 50 and 1,000 units, no viable route is sized more than 1 bp above its least input.
  it('sizes every viable route within 1 bp of its least input', () => {
    const tooLarge = all.filter((c) => (sizeRouteInput(catalogue, c.route, c.amountIn, c.toAmount) - leastInput(c)) * 10_000n > c.amountIn)
    expect(tooLarge.map((c) => c.route.id)).toEqual([])
  })

  it('sizes routes that keep decimals and price within one atomic unit of the least input', () => {
    // Documented tolerance: a route whose tokens share decimals and price has a near-affine output; the secant
    // search lands on the least input or one unit above it.
    const flat = all.filter((c) => {
      const tokens = [c.route.from, c.route.to, ...c.route.sourceSwaps.map((e) => e.to), ...c.route.destinationSwaps.map((e) => e.from)]
      return tokens.every((t) => t.decimals === c.route.from.decimals && t.priceUsdE18 === c.route.from.priceUsdE18)
    })
    expect(flat.length).toBeGreaterThan(500)
    for (const c of flat) {
      const sized = sizeRouteInput(catalogue, c.route, c.amountIn, c.toAmount)
      expect(sized - leastInput(c), c.route.id).toBeLessThanOrEqual(1n)
    }
  })
})
