import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import * as z from 'zod'
import { KEY_TIERS, type KeyTier } from '../schemas/keys.ts'

export { KEY_TIERS, type KeyTier }

/** DESIGN 7.14: the tiers a key can carry. */

/** What a key says about itself, signed: version, id, tier and issue time (unix seconds). */
export const ApiKeyClaims = z.strictObject({
  v: z.literal(1),
  id: z.string().regex(/^key_[0-9a-f]{24}$/),
  tier: z.enum(KEY_TIERS),
  iat: z.number().int().nonnegative(),
})
export type ApiKeyClaims = z.infer<typeof ApiKeyClaims>

const PREFIX = 'se_'
/** Longer than any key we issue; anything beyond is refused before it is decoded. */
const MAX_KEY_CHARS = 256

const mac = (secret: Uint8Array, payload: string): Buffer => createHmac('sha256', secret).update(payload).digest()

/** A fresh key id: `key_` and 12 random bytes in hex. */
export function newKeyId(random: (size: number) => Uint8Array = randomBytes): string {
  return `key_${Buffer.from(random(12)).toString('hex')}`
}

/** `se_` + base64url(claims JSON) + `.` + base64url(HMAC-SHA256 of that payload under `secret`). */
export function signApiKey(secret: Uint8Array, claims: ApiKeyClaims): string {
  const payload = Buffer.from(JSON.stringify(ApiKeyClaims.parse(claims)), 'utf8').toString('base64url')
  return `${PREFIX}${payload}.${mac(secret, payload).toString('base64url')}`
}

export type VerifyApiKeyReturnType = { ok: true; claims: ApiKeyClaims } | { ok: false; reason: 'malformed' | 'bad_signature' }

/**
 * Checks a key statelessly: its shape, then its MAC with a timing-safe compare, then its claims. Revocation is the
 * caller's second step (a denylist in the store). An altered tier or id changes the payload, so the MAC fails.
 */
export function verifyApiKey(secret: Uint8Array, key: string): VerifyApiKeyReturnType {
  if (key.length > MAX_KEY_CHARS || !key.startsWith(PREFIX)) return { ok: false, reason: 'malformed' }
  const parts = key.slice(PREFIX.length).split('.')
  const [payload, signature] = parts
  if (parts.length !== 2 || !payload || !signature || !/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]{43}$/.test(signature))
    return { ok: false, reason: 'malformed' }
  // Compared as text: base64url's last character carries 2 spare bits, so decoding first would let four spellings of
  // one MAC all pass, and a key must have exactly one form (it is what a denylist or a log names).
  const expected = Buffer.from(mac(secret, payload).toString('base64url'))
  const given = Buffer.from(signature)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' }
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return { ok: false, reason: 'malformed' }
  }
  const claims = ApiKeyClaims.safeParse(json)
  return claims.success ? { ok: true, claims: claims.data } : { ok: false, reason: 'malformed' }
}
