import { randomFillSync } from 'node:crypto'

/**
 * A source of random bytes from the same CSPRNG as `randomBytes`, drawn `poolSize` bytes at a time: each call of
 * `randomBytes(16)` costs about 8 µs (a job through Node's crypto binding), a copy out of the pool about 1. Every byte
 * is handed out once; the pool lives in the closure, so each caller that makes one has its own.
 */
export function createPooledRandomBytes(poolSize = 4096): (size: number) => Uint8Array {
  const pool = new Uint8Array(poolSize)
  let at = poolSize
  return (size) => {
    if (size > poolSize) return randomFillSync(new Uint8Array(size))
    if (at + size > poolSize) {
      randomFillSync(pool)
      at = 0
    }
    at += size
    return pool.slice(at - size, at)
  }
}
