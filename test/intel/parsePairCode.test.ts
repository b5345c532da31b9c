import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PAIR_CODES, parsePairCode } from '../../src/intel/parsePairCode.ts'

describe('parsePairCode', () => {
  it.each([
    ['USD-BAS', { code: 'USD-BAS', from: { kind: 'currency', code: 'USD' }, to: { kind: 'chain', code: 'BAS' } }],
    ['bas-trx', { code: 'BAS-TRX', from: { kind: 'chain', code: 'BAS' }, to: { kind: 'chain', code: 'TRX' } }],
    ['Eur-zar', { code: 'EUR-ZAR', from: { kind: 'currency', code: 'EUR' }, to: { kind: 'currency', code: 'ZAR' } }],
    ['cel-KES', { code: 'CEL-KES', from: { kind: 'chain', code: 'CEL' }, to: { kind: 'currency', code: 'KES' } }],
    ['ETH-ETH', { code: 'ETH-ETH', from: { kind: 'chain', code: 'ETH' }, to: { kind: 'chain', code: 'ETH' } }],
  ])('reads %s case-insensitively, source first', (text, pair) => {
    expect(parsePairCode(text)).toEqual({ ok: true, pair })
  })

  it.each([
    ['USD', '"USD" is not two codes joined by one hyphen, such as USD-BAS or BAS-TRX'],
    ['USD-BAS-ARB', '"USD-BAS-ARB" is not two codes joined by one hyphen, such as USD-BAS or BAS-TRX'],
    ['-BAS', '"-BAS" is not two codes joined by one hyphen, such as USD-BAS or BAS-TRX'],
    ['USD_BAS', '"USD_BAS" is not two codes joined by one hyphen, such as USD-BAS or BAS-TRX'],
    ['USDC-BAS', '"USDC" is not a chain or currency code'],
    ['BAS-AVAX', '"AVAX" is not a chain or currency code'],
    ['XXX-YYY', '"XXX" and "YYY" are not chain or currency codes'],
    ['', '"" is not two codes joined by one hyphen, such as USD-BAS or BAS-TRX'],
  ])('refuses %j with a message naming the problem', (text, message) => {
    expect(parsePairCode(text)).toEqual({ ok: false, message })
  })

  it('accepts every pair of listed codes in any letter case, and nothing else of the <A>-<B> shape', () => {
    const codes = [...PAIR_CODES.chains, ...PAIR_CODES.currencies]
    const recase = (code: string, mask: number): string => [...code].map((ch, i) => ((mask >> i) & 1 ? ch.toLowerCase() : ch)).join('')
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.constantFrom(...codes), fc.nat(7), fc.nat(7), (a, b, maskA, maskB) => {
        const parsed = parsePairCode(`${recase(a, maskA)}-${recase(b, maskB)}`)
        expect(parsed).toMatchObject({ ok: true, pair: { code: `${a}-${b}` } })
      }),
    )
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const parsed = parsePairCode(`${a}-${b}`)
        const isListed = (code: string): boolean => codes.includes(code.toUpperCase() as (typeof codes)[number])
        expect(parsed.ok).toBe(!a.includes('-') && !b.includes('-') && isListed(a) && isListed(b))
      }),
    )
  })
})
