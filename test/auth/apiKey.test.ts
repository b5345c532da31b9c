import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ApiKeyClaims, newKeyId, signApiKey, verifyApiKey } from '../../src/auth/apiKey.ts'

const SECRET = new TextEncoder().encode('key-secret-key-secret-key-secret!')
const OTHER = new TextEncoder().encode('another-secret-another-secret-xx!')
const claims: ApiKeyClaims = { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: 1_795_000_000 }

/** The key with its payload re-encoded from altered claims, keeping the original MAC. */
function withClaims(key: string, altered: Record<string, unknown>): string {
  const [, signature] = key.slice(3).split('.')
  return `se_${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`
}

describe('API keys', () => {
  it('signs se_ + base64url(claims) + . + base64url(HMAC) and verifies it back', () => {
    const key = signApiKey(SECRET, claims)
    expect(key).toMatch(/^se_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(JSON.parse(Buffer.from(key.slice(3).split('.')[0] ?? '', 'base64url').toString())).toEqual(claims)
    expect(verifyApiKey(SECRET, key)).toEqual({ ok: true, claims })
  })

  it('refuses an altered tier or id, and a key signed under another secret', () => {
    const key = signApiKey(SECRET, claims)
    expect(verifyApiKey(SECRET, withClaims(key, { ...claims, tier: 'pro' }))).toEqual({ ok: false, reason: 'bad_signature' })
    expect(verifyApiKey(SECRET, withClaims(key, { ...claims, id: 'key_ffffffffffffffffffffffff' }))).toEqual({
      ok: false,
      reason: 'bad_signature',
    })
    expect(verifyApiKey(OTHER, key)).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it.each([
    ['empty', ''],
    ['no prefix', 'sk_abc.def'],
    ['no signature', 'se_abc'],
    ['three parts', 'se_a.b.c'],
    ['short signature', 'se_abc.def'],
    ['not base64url', `se_a+b.${'A'.repeat(43)}`],
    ['too long', `se_${'a'.repeat(300)}.${'A'.repeat(43)}`],
  ])('calls a %s key malformed', (_name, key) => {
    expect(verifyApiKey(SECRET, key)).toEqual({ ok: false, reason: 'malformed' })
  })

  it('refuses well-signed claims of the wrong shape (unknown tier, extra member)', () => {
    const signed = (payloadJson: unknown): string => {
      const payload = Buffer.from(JSON.stringify(payloadJson)).toString('base64url')
      return `se_${payload}.${createHmac('sha256', SECRET).update(payload).digest('base64url')}`
    }
    expect(verifyApiKey(SECRET, signed({ ...claims, tier: 'gold' }))).toEqual({ ok: false, reason: 'malformed' })
    expect(verifyApiKey(SECRET, signed({ ...claims, admin: true }))).toEqual({ ok: false, reason: 'malformed' })
    expect(verifyApiKey(SECRET, signed({ ...claims, v: 2 }))).toEqual({ ok: false, reason: 'malformed' })
  })

  it('never accepts a single-character change anywhere in a key', () => {
    const key = signApiKey(SECRET, claims)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: key.length - 1 }), fc.constantFrom(...'abcXYZ019-_.'), (at, ch) => {
        fc.pre(key[at] !== ch)
        expect(verifyApiKey(SECRET, key.slice(0, at) + ch + key.slice(at + 1)).ok).toBe(false)
      }),
    )
  })

  it('makes distinct ids', () => {
    const ids = new Set(Array.from({ length: 200 }, () => newKeyId()))
    expect(ids.size).toBe(200)
    for (const id of ids) expect(id).toMatch(/^key_[0-9a-f]{24}$/)
  })
})
