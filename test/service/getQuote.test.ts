import { describe, expect, it } from 'vitest'
import { findRoutes, formatAtomic, isEvmToken, pow10 } from '../../src/engine/index.ts'
import type { QuoteParams } from '../../src/schemas/quote.ts'
import { buildSwapTransaction } from '../../src/service/buildSwapTransaction.ts'
import { realCostUsdOf } from '../../src/service/formatQuote.ts'
import { getQuote } from '../../src/service/getQuote.ts'
import { listCorridors } from '../../src/service/listCorridors.ts'
import { ServiceError } from '../../src/service/serviceError.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { decimalToUnits, FROM_ADDRESS, NOW_MS, testDeps } from '../http/testApp.ts'

const deps = testDeps()
const swapEaziRef = newSwapRef(NOW_MS, () => new Uint8Array(16))

const params = (overrides: Partial<QuoteParams>): QuoteParams => ({
  fromChain: 'POL',
  toChain: 'POL',
  fromToken: 'USDC',
  toToken: 'ZARP',
  fromAmount: '1000',
  fromAddress: FROM_ADDRESS,
  slippage: 0.005,
  ...overrides,
})

function refusalOf(run: () => unknown): ServiceError {
  try {
    run()
  } catch (error) {
    if (error instanceof ServiceError) return error
    throw error
  }
  throw new Error('not refused')
}

describe('getQuote at dust amounts: what is promised is what the fee leaves, and nothing is refused', () => {
  it('refuses an amount the fee (rounded up) takes whole, as the batch does, naming the smallest that works', () => {
    const refusal = refusalOf(() => getQuote(deps, params({ fromAmount: '0.000001' })))
    expect(refusal.code).toBe('amount_out_of_range')
    expect(refusal.message).toMatchInlineSnapshot(
      `"0.000001 USDC cannot be routed to ZARP on POL within the 0.5% all-in fee: the fee, 0.000001 USDC (rounded up to a whole atomic unit), leaves nothing to deliver. Send between 0.000002 and 4522.613136 USDC."`,
    )
    expect(refusal.detail).toEqual({
      field: 'fromAmount',
      limit: 'fee',
      viableRange: { min: '0.000002', max: '4522.613136', token: 'USDC' },
    })
  })

  it('refuses an amount whose minimum rounds to 0 at the slippage asked, naming the least whose minimum does not', () => {
    const dust = params({ fromChain: 'BNB', toChain: 'BNB', toToken: 'USDT', fromAmount: '0.000000000000000002' })
    const refusal = refusalOf(() => getQuote(deps, dust))
    expect(refusal.message).toMatch(
      /^0\.000000000000000002 USDC cannot be routed to USDT on BNB within the 0\.5% all-in fee: after the fee, 0\.000000000000000001 USDC, it would deliver 0\.000000000000000001 USDT, and at the slippage asked the least it could promise \(toAmountMin\) rounds to 0\. Send between 0\.000000000000000003 and /,
    )
    expect(refusal.detail).toMatchObject({ limit: 'fee', viableRange: { min: '0.000000000000000003' } })
    // The smallest named is quoted, with a minimum of a unit; at no slippage, 2 wei already promises 1.
    const least = getQuote(deps, { ...dust, fromAmount: '0.000000000000000003' })
    expect(least.kind === 'quote' && least.quote.toAmountMin).toBe('0.000000000000000001')
    const noSlippage = getQuote(deps, { ...dust, slippage: 0 })
    expect(noSlippage.kind === 'quote' && noSlippage.quote.toAmountMin).toBe('0.000000000000000001')
  })

  it('at the smallest amount, promises the value of what the fee leaves, and the build delivers it from what it runs', () => {
    const least = params({ fromAmount: '0.000002' })
    const built = buildSwapTransaction(deps, { params: least, swapEaziRef })
    const zarp = deps.catalogue.tokens.get('POL:ZARP')
    const usdc = deps.catalogue.tokens.get('POL:USDC')
    if (!zarp || !usdc) throw new Error('catalogue lacks POL USDC or ZARP')
    // Fee 1 unit of 2; the promise is 1 unit of USDC at the oracle rate, floored (not 1.99 units').
    expect(built.quote.fee.amount).toBe('0.000001')
    const toAmount = decimalToUnits(built.quote.toAmount, zarp.decimals)
    expect(toAmount).toBe((1n * usdc.priceUsdE18 * pow10(zarp.decimals)) / (zarp.priceUsdE18 * pow10(usdc.decimals)))
    // The build runs the whole input through the route (the venue's own fee takes more than a unit's worth), keeps
    // no more than the quoted fee, and the route delivers at least the promise.
    const { routedAmount, margin, sized, order } = built.build
    expect(routedAmount + margin).toBe(2n)
    expect(routedAmount > 0n && margin <= 1n && order.fee === margin).toBe(true)
    expect(sized.amountOut >= toAmount).toBe(true)
    expect(order.minOut).toBe(decimalToUnits(built.quote.toAmountMin, zarp.decimals))
  })

  it("says a route's fixed costs (bridge fees, destination gas) exceed the fee for a route that crosses chains", () => {
    const refusal = refusalOf(() => getQuote(deps, params({ fromChain: 'ETH', toChain: 'BAS', toToken: 'EURC', fromAmount: '1.6' })))
    expect(refusal.detail).toMatchObject({ limit: 'fee', viableRange: { min: '1.700377' } })
    expect(refusal.message).toMatch(
      /: at this size the route's fixed costs \(bridge fees, destination gas\) exceed what the fee earns\. Send between /,
    )
  })
})

describe('the amounts the corridor listing and a refusal advertise are the amounts a quote takes', () => {
  it("every listed leg's least amount is quoted at the default slippage, and one atomic unit less is refused for its size", () => {
    let legs = 0
    for (const corridor of listCorridors(deps).corridors)
      for (const byChain of corridor.byChain)
        for (const leg of byChain.legs) {
          const range = leg.viableRange
          if (range === null) throw new Error('a listed leg without its range')
          const from = [...deps.catalogue.tokens.values()].find((t) => t.chain === leg.fromChain && t.symbol === corridor.from)
          if (from === undefined) throw new Error(`no ${corridor.from} on ${leg.fromChain}`)
          const at = (fromAmount: string) =>
            params({ fromChain: leg.fromChain, toChain: leg.toChain, fromToken: corridor.from, toToken: corridor.to, fromAmount })
          const name = `${corridor.from}@${leg.fromChain}->${corridor.to}@${leg.toChain} at ${range.min}`
          expect(() => getQuote(deps, at(range.min)), name).not.toThrow()
          const below = decimalToUnits(range.min, from.decimals) - 1n
          const refusal = refusalOf(() => getQuote(deps, at(formatAtomic(below, from.decimals))))
          expect(refusal.code, name).toBe('amount_out_of_range')
          expect((refusal.detail as { viableRange?: { min: string } }).viableRange?.min, name).toBe(range.min)
          legs++
        }
    expect(legs).toBeGreaterThan(50)
  })
})

describe("a quote's real cost as shown", () => {
  it('is the sum of its items as shown, each rounded up to the micro-USD, at dust and at large amounts', () => {
    let checked = 0
    let withGain = 0
    for (const [fromChain, toChain, fromToken, toToken] of [
      ['ETH', 'ETH', 'USDC', 'USDT'],
      ['ETH', 'GNO', 'USDC', 'GBPe'],
      ['BAS', 'BAS', 'USDC', 'EURC'],
      ['BAS', 'POL', 'USDC', 'EURe'],
      ['POL', 'POL', 'USDC', 'ZARP'],
    ] as const)
      for (const fromAmount of ['1215.557', '10', '3.333333', '50000', '250000']) {
        let quote: ReturnType<typeof getQuote>
        try {
          quote = getQuote(deps, params({ fromChain, toChain, fromToken, toToken, fromAmount }))
        } catch {
          continue
        }
        if (quote.kind !== 'quote') continue
        const { realCost } = quote.quote.route
        const name = `${fromToken}@${fromChain}->${toToken}@${toChain} ${fromAmount}`
        const items = realCost.items.reduce((sum, item) => sum + signedMicro(item.usd), 0n)
        expect(signedMicro(realCost.usd), name).toBe(items)
        // Never less than the exact cost, gains (negative items, a pool paying over the oracle) included.
        const priced = routesOf(fromChain, toChain, fromToken, toToken, fromAmount).find((each) => each.route.id === quote.quote.route.id)
        expect(signedMicro(realCost.usd) * 10n ** 12n >= (priced?.realCostUsdE18 ?? 0n), name).toBe(true)
        if (realCost.items.some((item) => item.usd.startsWith('-'))) withGain++
        checked++
      }
    expect(checked).toBeGreaterThan(10)
    expect(withGain).toBeGreaterThan(0)
  })
})

/** A shown USD amount in micro-USD, negative ones too. */
function signedMicro(text: string): bigint {
  return text.startsWith('-') ? -decimalToUnits(text.slice(1), 6) : decimalToUnits(text, 6)
}

/** The viable routes the engine prices for a request (their exact costs). */
function routesOf(fromChain: string, toChain: string, fromToken: string, toToken: string, fromAmount: string) {
  const from = deps.catalogue.tokensByLowerKey.get(`${fromChain}:${fromToken.toLowerCase()}`)
  const to = deps.catalogue.tokensByLowerKey.get(`${toChain}:${toToken.toLowerCase()}`)
  if (from === undefined || to === undefined || !isEvmToken(from) || !isEvmToken(to)) throw new Error('token not listed')
  const found = findRoutes(deps.catalogue, { from, to, amountIn: decimalToUnits(fromAmount, from.decimals), slippageE18: 5n * 10n ** 15n })
  return found.kind === 'routes' ? found.viable : []
}

describe('realCostUsdOf', () => {
  it('rounds gains toward +∞ too, so the shown total is never under the exact one (+1, -0.1, -0.1 µUSD: 0.8)', () => {
    const item = (usdE18: bigint) => ({ kind: 'price_impact' as const, label: 'x', usdE18 })
    const shown = realCostUsdOf({ costs: [item(10n ** 12n), item(-(10n ** 11n)), item(-(10n ** 11n))], realCostUsdE18: 8n * 10n ** 11n })
    expect(shown).toEqual({ usd: '0.000001', items: ['0.000001', '0', '0'] })
  })

  // Review of issue 15: with no items, a net gain was rounded away from zero (-1.5 µUSD shown as -0.000002).
  it('rounds a total with no items toward +∞ as well: a gain of 1.5 µUSD shows as -0.000001, a cost of 1.5 as 0.000002', () => {
    expect(realCostUsdOf({ costs: [], realCostUsdE18: -15n * 10n ** 11n })).toEqual({ usd: '-0.000001', items: [] })
    expect(realCostUsdOf({ costs: [], realCostUsdE18: 15n * 10n ** 11n })).toEqual({ usd: '0.000002', items: [] })
    expect(realCostUsdOf({ costs: [], realCostUsdE18: 0n })).toEqual({ usd: '0', items: [] })
  })
})
