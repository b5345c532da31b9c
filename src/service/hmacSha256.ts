import * as crypto from 'node:crypto'

/** SHA-256's block size: RFC 2104 pads the key to one block. */
const BLOCK_BYTES = 64
const DIGEST_BYTES = 32
/** Room for the message after the inner pad; longer messages take a slower path that allocates. */
const SCRATCH_BYTES = 4096

/** Text encodings of a digest; `binary` is latin1, one character per byte. */
export type DigestEncoding = 'base64url' | 'base64' | 'hex' | 'binary'

type Pads = { key: Uint8Array; inner: Buffer; outer: Buffer }

/**
 * One-shot SHA-256 as text. Node ≥ 20.12 has `crypto.hash`, which builds no Hash object; asked for text rather than
 * a Buffer it also allocates no backing store, which is most of its cost on small inputs. Older Node falls back to
 * createHash.
 */
const sha256: (data: Uint8Array, encoding: DigestEncoding) => string =
  typeof crypto.hash === 'function'
    ? (data, encoding) => crypto.hash('sha256', data, encoding)
    : (data, encoding) => crypto.createHash('sha256').update(data).digest(encoding)

let cached: Pads | undefined

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The key's inner and outer pads (K ⊕ ipad, K ⊕ opad), each in a buffer with room for what is hashed after it;
 * kept for the last key used (the service signs with one), compared by value so a key changed in place is noticed.
 */
function padsFor(key: Uint8Array): Pads {
  if (cached && (cached.key === key || sameBytes(cached.key, key))) return cached
  const block = key.length > BLOCK_BYTES ? Buffer.from(sha256(key, 'binary'), 'latin1') : key
  const inner = Buffer.alloc(BLOCK_BYTES + SCRATCH_BYTES)
  const outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES)
  for (let i = 0; i < BLOCK_BYTES; i++) {
    const k = block[i] ?? 0
    inner[i] = k ^ 0x36
    outer[i] = k ^ 0x5c
  }
  cached = { key: Uint8Array.from(key), inner, outer }
  return cached
}

/**
 * HMAC-SHA256 (RFC 2104) of a string's UTF-8 bytes, as text: the same value as
 * `createHmac('sha256', key).update(message).digest(encoding)`, computed as two one-shot hashes over pads prepared
 * once per key. Per call it builds no Hmac object (and its native handle) and no Buffer; the quote path signs
 * every answer, and those allocations were most of what signing cost.
 */
export function hmacSha256(key: Uint8Array, message: string, encoding: DigestEncoding): string {
  const pads = padsFor(key)
  let innerDigest: string
  // A UTF-16 code unit is at most 3 UTF-8 bytes, so this much text always fits the scratch space.
  if (message.length * 3 <= SCRATCH_BYTES) {
    const length = pads.inner.write(message, BLOCK_BYTES, 'utf8')
    innerDigest = sha256(pads.inner.subarray(0, BLOCK_BYTES + length), 'binary')
  } else {
    innerDigest = sha256(Buffer.concat([pads.inner.subarray(0, BLOCK_BYTES), Buffer.from(message, 'utf8')]), 'binary')
  }
  pads.outer.write(innerDigest, BLOCK_BYTES, 'latin1')
  return sha256(pads.outer, encoding)
}
