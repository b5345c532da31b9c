import { describe, expect, it } from 'vitest'
import { createPooledRandomBytes } from '../../src/service/pooledRandomBytes.ts'

describe('createPooledRandomBytes', () => {
  it('hands out each byte of the pool once, refilling it when a request does not fit', () => {
    const random = createPooledRandomBytes(64)
    const draws = Array.from({ length: 40 }, () => random(16))
    expect(draws.every((draw) => draw.length === 16)).toBe(true)
    // 40 draws of 16 random bytes: any two equal would mean the pool handed bytes out twice.
    expect(new Set(draws.map((draw) => Buffer.from(draw).toString('hex'))).size).toBe(40)
  })

  it('answers a request larger than the pool with fresh bytes of that size', () => {
    const random = createPooledRandomBytes(8)
    const big = random(32)
    expect(big.length).toBe(32)
    expect(new Set(big).size).toBeGreaterThan(1)
  })

  it('returns copies: a later draw does not change an earlier one', () => {
    const random = createPooledRandomBytes(32)
    const first = random(16)
    const kept = Buffer.from(first).toString('hex')
    random(16)
    random(16)
    expect(Buffer.from(first).toString('hex')).toBe(kept)
  })
})
