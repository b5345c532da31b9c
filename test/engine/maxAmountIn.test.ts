import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { E18 } from '../../src/engine/decimal.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import { MAX_UINT256, maxAmountIn, maxWholeTokens } from '../../src/engine/maxAmountIn.ts'
import type { Currency } from '../../src/schemas/catalogue.ts'

const { catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const MONEY_MD = readFileSync(new URL('../../docs/money.md', import.meta.url), 'utf8')

/** "USD (USDC, …), SGD | 10^12 whole tokens": the bound docs/money.md states for each currency (token names in brackets). */
function documentedBounds(): Map<string, bigint> {
  const bounds = new Map<string, bigint>()
  for (const [, currencies = '', exponent = ''] of MONEY_MD.matchAll(/^\s*\| ([A-Z][^|]*?)\s*\| 10\^([0-9]+)\b/gm))
    for (const [code] of currencies.replace(/\([^)]*\)/g, '').matchAll(/\b[A-Z]{3}\b/g)) bounds.set(code, 10n ** BigInt(exponent))
  return bounds
}

describe('maxWholeTokens: more than a token could ever hold (docs/money.md)', () => {
  it('is the bound docs/money.md states for every currency the catalogue lists', () => {
    const documented = documentedBounds()
    const currencies = Object.keys(catalogue.fxUsdE18) as Currency[]
    expect(new Set(documented.keys())).toEqual(new Set(currencies))
    for (const currency of currencies) expect(maxWholeTokens(catalogue, { currency }), currency).toBe(documented.get(currency))
  })

  it('is the largest power of ten worth at most USD 10^12 at the rate', () => {
    const maxUsdE18 = 10n ** 12n * E18
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 22n }), (usdE18) => {
        const whole = maxWholeTokens({ fxUsdE18: { USD: usdE18 } as Record<Currency, bigint> }, { currency: 'USD' })
        expect(10n ** BigInt(whole.toString().length - 1)).toBe(whole)
        if (whole > 1n) expect(whole * usdE18).toBeLessThanOrEqual(maxUsdE18)
        expect(whole * 10n * usdE18).toBeGreaterThan(maxUsdE18)
      }),
    )
  })

  it('ends even when a rate is 0, far inside what a uint256 holds', () => {
    expect(maxWholeTokens({ fxUsdE18: { USD: 0n } as Record<Currency, bigint> }, { currency: 'USD' })).toBe(10n ** 30n)
  })

  it('in atomic units, for every token, fits a uint256 with room for 50 of them', () => {
    for (const token of catalogue.tokens.values()) {
      if (!isEvmToken(token)) continue
      const atomic = maxAmountIn(catalogue, token)
      expect(atomic, token.key).toBe(maxWholeTokens(catalogue, token) * 10n ** BigInt(token.decimals))
      expect(atomic * 50n, token.key).toBeLessThan(MAX_UINT256)
    }
  })
})
