import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Address } from '../../src/schemas/address.ts'
import { QuoteClaims, signQuoteId, verifyQuoteId } from '../../src/service/quoteToken.ts'

const secret = new TextEncoder().encode('a-quote-secret-of-at-least-32-chars!')
const claims: QuoteClaims = QuoteClaims.parse({
  fromChain: 'ETH',
  toChain: 'POL',
  fromToken: 'USDC',
  toToken: 'USDC',
  fromAmount: '1000000000',
  fromAddress: '0x1111111111111111111111111111111111111111',
  toAddress: '0x2222222222222222222222222222222222222222',
  slippageE18: '5000000000000000',
  routeId: 'cctp-v2-fast:ETH>POL',
  toAmount: '995000000',
  toAmountMin: '990025000',
  asOf: '2026-11-20T00:00:00Z',
  market: 'ETH:rpc:21000000,POL:snapshot',
  exp: 1_800_000_060,
})
const beforeExpiry = 1_800_000_000_000

describe('quote tokens', () => {
  it('round-trips the claims while unexpired', () => {
    const token = signQuoteId(secret, claims)
    expect(token.startsWith('q1.')).toBe(true)
    expect(verifyQuoteId(secret, token, beforeExpiry)).toEqual({ ok: true, claims })
  })

  it('expires at exp', () => {
    const token = signQuoteId(secret, claims)
    expect(verifyQuoteId(secret, token, claims.exp * 1000 - 1).ok).toBe(true)
    expect(verifyQuoteId(secret, token, claims.exp * 1000)).toEqual({ ok: false, reason: 'expired' })
  })

  it('rejects altered claims, a foreign key and a truncated MAC', () => {
    const token = signQuoteId(secret, claims)
    const [, payload, mac] = token.split('.') as [string, string, string]
    const raised = Buffer.from(JSON.stringify({ ...claims, toAmount: '999000000' })).toString('base64url')
    expect(verifyQuoteId(secret, `q1.${raised}.${mac}`, beforeExpiry)).toEqual({ ok: false, reason: 'bad_signature' })
    const other = new TextEncoder().encode('another-secret-of-at-least-32-chars!!')
    expect(verifyQuoteId(other, token, beforeExpiry)).toEqual({ ok: false, reason: 'bad_signature' })
    expect(verifyQuoteId(secret, `q1.${payload}.${mac.slice(0, -2)}`, beforeExpiry)).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it('rejects malformed tokens', () => {
    for (const token of ['', 'q1.', 'q2.a.b', 'q1.onlyonepart', 'q1.a.b.c'])
      expect(verifyQuoteId(secret, token, beforeExpiry)).toEqual({ ok: false, reason: 'malformed' })
  })
})

describe('the signed payload', () => {
  const payloadOf = (token: string): string => Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')

  // Any code point, plus the characters JSON escapes or that trip encoders: quotes, backslashes, controls, U+2028,
  // lone surrogates.
  const text = fc.string({
    unit: fc.oneof(
      fc.constantFrom('"', '\\', '\n', '\u0000', '\u007f', '\u2028', '\ud800', '\udfff', 'é'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    maxLength: 40,
  })
  // The type asks for 0x and then anything: the arbitrary text follows the prefix.
  const address = text.map((rest): Address => `0x${rest}`)
  const anyClaims: fc.Arbitrary<QuoteClaims> = fc.record({
    fromChain: text,
    toChain: text,
    fromToken: text,
    toToken: text,
    fromAmount: text,
    fromAddress: address,
    toAddress: fc.option(address, { nil: null }),
    slippageE18: text,
    routeId: text,
    toAmount: text,
    toAmountMin: text,
    asOf: text,
    market: text,
    exp: fc.integer(),
  })

  it('is JSON.stringify(claims), byte for byte, for any claims (quotes, backslashes, control and non-ASCII characters included)', () => {
    fc.assert(fc.property(anyClaims, (c) => payloadOf(signQuoteId(secret, c)) === JSON.stringify(c)))
    expect(payloadOf(signQuoteId(secret, claims))).toBe(JSON.stringify(claims))
  })

  it('spells out every claim of the schema, in its order', () => {
    expect(Object.keys(JSON.parse(payloadOf(signQuoteId(secret, claims))) as object)).toEqual(Object.keys(QuoteClaims.shape))
  })
})
