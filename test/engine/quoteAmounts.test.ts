import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { quoteAmounts, smallestQuotableAmount } from '../../src/engine/quoteAmounts.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import type { Token } from '../../src/engine/types.ts'

const { catalogue, files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)

function token(key: string): Token {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`no token ${key}`)
  return found
}

// ---- Independent model: rational arithmetic on the manifest's decimal strings, no fixed point. ----

type Ratio = { n: bigint; d: bigint }

/** "1.16" → 116/100, read straight from the manifest text. */
function ratio(text: string): Ratio {
  const [whole = '0', fraction = ''] = text.split('.')
  return { n: BigInt(whole + fraction), d: 10n ** BigInt(fraction.length) }
}

/** USD per whole token: fx[currency] × tokenPrices[symbol] (default 1), as a ratio. */
function priceOf(t: Token): Ratio {
  const fxText = files.market.fx[t.currency]?.usd
  if (fxText === undefined) throw new Error(`no fx for ${t.currency}`)
  const fx = ratio(fxText)
  const relative = files.market.tokenPrices[t.symbol]
  const r = relative ? ratio(relative.ratio) : { n: 1n, d: 1n }
  return { n: fx.n * r.n, d: fx.d * r.d }
}

/** The spec's fee, 0.5%, as a ratio kept apart from the catalogue's bps figure. */
const KEEP = { n: 995n, d: 1000n }
const FEE = { n: 5n, d: 1000n }

function expectedFee(amountIn: bigint): bigint {
  const exact = amountIn * FEE.n
  return exact % FEE.d === 0n ? exact / FEE.d : exact / FEE.d + 1n
}

/**
 * floor( (amountIn − fee)/10^fd × pf / pt × 10^td ): what is left once the fee (0.5%, rounded up to a whole atomic
 * unit) is taken, converted in one rational and floored once.
 */
function expectedToAmount(from: Token, to: Token, amountIn: bigint): bigint {
  const pf = priceOf(from)
  const pt = priceOf(to)
  const numerator = (amountIn - expectedFee(amountIn)) * pf.n * pt.d * 10n ** BigInt(to.decimals)
  const denominator = 10n ** BigInt(from.decimals) * pf.d * pt.n
  return numerator / denominator
}

const E18 = 10n ** 18n
const SLIPPAGE_HALF_PERCENT = 5n * 10n ** 15n

describe('quoteAmounts: worked examples', () => {
  it('uses the spec fee of 0.5%', () => {
    expect(catalogue.pricing.feeBps).toBe(50n)
  })

  it('6 → 6: 1,000 USDC into USDT on Ethereum', () => {
    // 1000 × 0.995 = 995 USDT; fee 1000 × 0.005 = 5 USDC; min 995 × 0.995 = 990.025 USDT.
    const q = quoteAmounts(catalogue, token('ETH:USDC'), token('ETH:USDT'), 1_000_000_000n, SLIPPAGE_HALF_PERCENT)
    expect(q).toEqual({ toAmount: 995_000_000n, toAmountMin: 990_025_000n, feeAmount: 5_000_000n })
  })

  it('6 → 18: ETH USDC into BNB USDT', () => {
    // 1 USDC (10^6 units) → 0.995 USDT with 18 decimals.
    const q = quoteAmounts(catalogue, token('ETH:USDC'), token('BNB:USDT'), 1_000_000n, 0n)
    expect(q.toAmount).toBe(995n * 10n ** 15n)
    expect(q.feeAmount).toBe(5_000n)
  })

  it('18 → 6: BNB USDC into ETH USDC, flooring below one destination unit', () => {
    // 1 USDC (10^18 units) → 0.995 USDC = 995000 units.
    expect(quoteAmounts(catalogue, token('BNB:USDC'), token('ETH:USDC'), 10n ** 18n, 0n).toAmount).toBe(995_000n)
    // 0.000001005025126 × 0.995 = 0.00000100000000037 → 1 unit.
    expect(quoteAmounts(catalogue, token('BNB:USDC'), token('ETH:USDC'), 1_005_025_126_000n, 0n).toAmount).toBe(1n)
    // 0.000001 × 0.995 is less than one unit: 0.
    expect(quoteAmounts(catalogue, token('BNB:USDC'), token('ETH:USDC'), 10n ** 12n, 0n).toAmount).toBe(0n)
    // The fee on 10^18 + 1 units is 5·10^15 + 0.005 → rounds up.
    expect(quoteAmounts(catalogue, token('BNB:USDC'), token('ETH:USDC'), 10n ** 18n + 1n, 0n).feeAmount).toBe(5n * 10n ** 15n + 1n)
  })

  it("FX: 1,000 USDC into EURe at the snapshot's EUR rate", () => {
    expect(files.market.fx.EUR?.usd).toBe('1.16')
    // 1000 × 0.995 / 1.16 = 857.758620689655172413793… EURe, floored at 18 places.
    const q = quoteAmounts(catalogue, token('ETH:USDC'), token('GNO:EURe'), 1_000_000_000n, 0n)
    expect(q.toAmount).toBe(857_758_620_689_655_172_413n)
    expect(q.toAmountMin).toBe(q.toAmount)
  })

  it('FX between two foreign currencies: 250 EURC into GBPe', () => {
    // 250 × 1.16 / 1.33 × 0.995 = 216.954887218045112781954… GBPe.
    expect(quoteAmounts(catalogue, token('ETH:EURC'), token('ETH:GBPe'), 250_000_000n, 0n).toAmount).toBe(216_954_887_218_045_112_781n)
  })

  it('USDC into cKES at the KES rate, and tokens priced off their currency (USDe, sUSDe)', () => {
    // 1000 × 0.995 / 0.00774 = 128552.971576227390180878… cKES.
    expect(quoteAmounts(catalogue, token('ARB:USDC'), token('CEL:cKES'), 1_000_000_000n, 0n).toAmount).toBe(
      128_552_971_576_227_390_180_878n,
    )
    // 1 USDe at 0.9995 USD → 0.9945025 USDC → 994502 units.
    expect(quoteAmounts(catalogue, token('ETH:USDe'), token('ETH:USDC'), E18, 0n).toAmount).toBe(994_502n)
    // 1 sUSDe at 1.19 USD → 1.184050 USDC.
    expect(quoteAmounts(catalogue, token('ARB:sUSDe'), token('ARB:USDC'), E18, 0n).toAmount).toBe(1_184_050n)
  })
})

describe('quoteAmounts: rounding edges', () => {
  const usdc = token('ETH:USDC')
  const usdt = token('ETH:USDT')

  it('1 atomic unit: promises 0, charges 1', () => {
    expect(quoteAmounts(catalogue, usdc, usdt, 1n, SLIPPAGE_HALF_PERCENT)).toEqual({ toAmount: 0n, toAmountMin: 0n, feeAmount: 1n })
  })

  it('amounts where × 0.995 is not an integer round the promise down and the fee up', () => {
    // 201 × 0.995 = 199.995 → 199; fee 1.005 → 2.
    expect(quoteAmounts(catalogue, usdc, usdt, 201n, 0n)).toEqual({ toAmount: 199n, toAmountMin: 199n, feeAmount: 2n })
    // 200 × 0.995 = 199 exactly; fee 1 exactly.
    expect(quoteAmounts(catalogue, usdc, usdt, 200n, 0n)).toEqual({ toAmount: 199n, toAmountMin: 199n, feeAmount: 1n })
    // 399 × 0.995 = 397.005 → 397; fee 1.995 → 2.
    expect(quoteAmounts(catalogue, usdc, usdt, 399n, 0n)).toEqual({ toAmount: 397n, toAmountMin: 397n, feeAmount: 2n })
  })

  it('promises the value of what the fee leaves in whole source units, never a fraction of a unit no route can run', () => {
    // 201 units of USDC (6 decimals) into BNB USDT (18): the fee is 2 units, so 199 units are promised, not 199.995.
    expect(quoteAmounts(catalogue, usdc, token('BNB:USDT'), 201n, 0n)).toEqual({
      toAmount: 199n * 10n ** 12n,
      toAmountMin: 199n * 10n ** 12n,
      feeAmount: 2n,
    })
    // 1 unit of USDC into ZARP (18 decimals): the fee takes the unit, so nothing is promised (not 99.5% of it).
    expect(quoteAmounts(catalogue, token('POL:USDC'), token('POL:ZARP'), 1n, 0n)).toEqual({ toAmount: 0n, toAmountMin: 0n, feeAmount: 1n })
  })

  it('smallestQuotableAmount: the least input whose minimum is at least one unit at the slippage asked', () => {
    const bnbUsdc = token('BNB:USDC')
    const bnbUsdt = token('BNB:USDT')
    // 2 wei: the fee takes 1, 1 is promised; at no slippage that is the minimum too.
    expect(smallestQuotableAmount(catalogue, bnbUsdc, bnbUsdt, 0n, 10n ** 24n)).toBe(2n)
    // At 0.5% a promise of 1 wei floors to a minimum of 0; 3 wei promises 2, minimum 1.
    expect(smallestQuotableAmount(catalogue, bnbUsdc, bnbUsdt, SLIPPAGE_HALF_PERCENT, 10n ** 24n)).toBe(3n)
    expect(quoteAmounts(catalogue, bnbUsdc, bnbUsdt, 2n, SLIPPAGE_HALF_PERCENT).toAmountMin).toBe(0n)
    expect(quoteAmounts(catalogue, bnbUsdc, bnbUsdt, 3n, SLIPPAGE_HALF_PERCENT).toAmountMin).toBe(1n)
    // 1 USDC into cKES (worth far less than a dollar) at 18 decimals: 2 units suffice; a ceiling below that, none.
    expect(smallestQuotableAmount(catalogue, token('CEL:USDC'), token('CEL:cKES'), SLIPPAGE_HALF_PERCENT, 10n ** 12n)).toBe(2n)
    expect(smallestQuotableAmount(catalogue, usdc, usdt, SLIPPAGE_HALF_PERCENT, 2n)).toBeUndefined()
  })

  it('slippage 0 keeps the minimum at toAmount; 0.1 floors 90% of it', () => {
    expect(quoteAmounts(catalogue, usdc, usdt, 201n, 0n).toAmountMin).toBe(199n)
    // 0.9 × 199 = 179.1 → 179.
    expect(quoteAmounts(catalogue, usdc, usdt, 201n, 10n ** 17n).toAmountMin).toBe(179n)
    // 0.9 × 995000000 = 895500000 exactly.
    expect(quoteAmounts(catalogue, usdc, usdt, 1_000_000_000n, 10n ** 17n).toAmountMin).toBe(895_500_000n)
  })
})

describe('quoteAmounts: properties against the rational model', () => {
  const tokens = [...catalogue.tokens.values()].filter(isEvmToken)
  const arbitraryToken = fc.constantFrom(...tokens)
  const arbitraryAmount = fc.bigInt({ min: 0n, max: 10n ** 30n })
  const arbitrarySlippage = fc.bigInt({ min: 0n, max: 10n ** 17n })

  it('matches the spec formula exactly, with a floored minimum and a ceiled fee', () => {
    fc.assert(
      fc.property(arbitraryToken, arbitraryToken, arbitraryAmount, arbitrarySlippage, (from, to, amountIn, slippageE18) => {
        const q = quoteAmounts(catalogue, from, to, amountIn, slippageE18)
        expect(q.toAmount).toBe(expectedToAmount(from, to, amountIn))
        expect(q.feeAmount).toBe(expectedFee(amountIn))
        // toAmountMin = floor(toAmount × (1 − s)): the largest m with m ≤ toAmount × (1 − s).
        expect(q.toAmountMin * E18 <= q.toAmount * (E18 - slippageE18)).toBe(true)
        expect((q.toAmountMin + 1n) * E18 > q.toAmount * (E18 - slippageE18)).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('never promises more than 99.5% of the input value, nor less than one unit below what the fee leaves; fee ≥ exact 0.5%', () => {
    fc.assert(
      fc.property(arbitraryToken, arbitraryToken, arbitraryAmount, arbitrarySlippage, (from, to, amountIn, slippageE18) => {
        const q = quoteAmounts(catalogue, from, to, amountIn, slippageE18)
        expect(q.toAmountMin <= q.toAmount).toBe(true)
        const pf = priceOf(from)
        const pt = priceOf(to)
        // value(x of to) ≤ 0.995 · value(amountIn of from), cross-multiplied over all denominators.
        const valueOut = (x: bigint): bigint => x * pt.n * pf.d * KEEP.d * 10n ** BigInt(from.decimals)
        const valueCap = amountIn * pf.n * pt.d * KEEP.n * 10n ** BigInt(to.decimals)
        expect(valueOut(q.toAmount) <= valueCap).toBe(true)
        // value(toAmount + 1 of to) > value(amountIn − fee of from): a unit more would promise more than is left.
        const valueLeft = (amountIn - q.feeAmount) * pf.n * pt.d * 10n ** BigInt(to.decimals)
        expect(q.toAmount + 1n > 0n && (q.toAmount + 1n) * pt.n * pf.d * 10n ** BigInt(from.decimals) > valueLeft).toBe(true)
        // fee·1000 ≥ 5·amountIn, and one unit less would fall short.
        expect(q.feeAmount * FEE.d >= amountIn * FEE.n).toBe(true)
        if (q.feeAmount > 0n) expect((q.feeAmount - 1n) * FEE.d < amountIn * FEE.n).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('is monotone in the input amount', () => {
    fc.assert(
      fc.property(arbitraryToken, arbitraryToken, arbitraryAmount, arbitraryAmount, (from, to, a, b) => {
        const [low, high] = a <= b ? [a, b] : [b, a]
        const ql = quoteAmounts(catalogue, from, to, low, SLIPPAGE_HALF_PERCENT)
        const qh = quoteAmounts(catalogue, from, to, high, SLIPPAGE_HALF_PERCENT)
        expect(ql.toAmount <= qh.toAmount && ql.toAmountMin <= qh.toAmountMin && ql.feeAmount <= qh.feeAmount).toBe(true)
      }),
    )
  })
})
