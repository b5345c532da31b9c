import { describe, expect, it } from 'vitest'
import { holdRefusal, MAX_HELD_REFUSALS } from '../../src/http/rateLimit.ts'

// Review of issue 15: a held refusal keeps its socket and a timer for the hold, so a client ignoring Retry-After
// with many connections turned its rate into as many open sockets. At most MAX_HELD_REFUSALS wait at once.
describe('holdRefusal', () => {
  it('holds up to MAX_HELD_REFUSALS refusals at once, answers the rest at once, and holds again once they end', async () => {
    expect(holdRefusal(0)).toBeUndefined()
    const held = Array.from({ length: MAX_HELD_REFUSALS }, () => holdRefusal(50))
    expect(held.every((hold) => hold instanceof Promise)).toBe(true)
    expect(holdRefusal(50)).toBeUndefined()
    const started = Date.now()
    await Promise.all(held)
    expect(Date.now() - started).toBeGreaterThanOrEqual(40)
    const again = holdRefusal(10)
    expect(again).toBeInstanceOf(Promise)
    await again
  })
})
