import { createHmac, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type DigestEncoding, hmacSha256 } from '../../src/service/hmacSha256.ts'

const hex = (text: string): Uint8Array => Uint8Array.from(Buffer.from(text, 'hex'))
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

describe('hmacSha256', () => {
  // RFC 4231 test cases 2 (short key), 6 and 7 (keys longer than a block, hashed first).
  it.each([
    [utf8('Jefe'), 'what do ya want for nothing?', '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
    [
      hex('aa'.repeat(131)),
      'Test Using Larger Than Block-Size Key - Hash Key First',
      '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    ],
    [
      hex('aa'.repeat(131)),
      'This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.',
      '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    ],
  ])('matches RFC 4231 (%#)', (key, message, expected) => {
    expect(hmacSha256(key, message, 'hex')).toBe(expected)
  })

  it('equals createHmac for any key and message, including keys swapped between calls and messages past the scratch space', () => {
    const keys = [randomBytes(32), randomBytes(64), randomBytes(65), new Uint8Array(0)].map((key) => Uint8Array.from(key))
    fc.assert(
      fc.property(
        fc.constantFrom(...keys),
        fc.oneof(fc.string(), fc.string({ unit: 'grapheme', minLength: 1000, maxLength: 2000 })),
        fc.constantFrom('base64url', 'base64', 'hex', 'binary') as fc.Arbitrary<DigestEncoding>,
        (key, message, encoding) => {
          expect(hmacSha256(key, message, encoding)).toBe(createHmac('sha256', key).update(message).digest(encoding))
        },
      ),
    )
  })

  it('notices a key changed in place', () => {
    const key = utf8('a-quote-secret-of-at-least-32-chars!')
    const before = hmacSha256(key, 'm', 'hex')
    key[0] = 0x41
    expect(hmacSha256(key, 'm', 'hex')).toBe(createHmac('sha256', key).update('m').digest('hex'))
    expect(hmacSha256(key, 'm', 'hex')).not.toBe(before)
  })
})
