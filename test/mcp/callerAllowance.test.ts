import { describe, expect, it } from 'vitest'
import { createCallerAllowance, limitPerCaller } from '../../src/mcp/callerAllowance.ts'
import type { PaidPostOutcome, Payer } from '../../src/mcp/payer.ts'

const HOUR = 3_600_000

/** A payer answering each post with the next outcome of `outcomes`. */
function scriptedPayer(outcomes: PaidPostOutcome['kind'][]): Payer & { posts: number } {
  const payer = {
    address: '0x0000000000000000000000000000000000000001' as const,
    dailyBudget: 1_000_000n,
    posts: 0,
    async post(): Promise<PaidPostOutcome> {
      const kind = outcomes[payer.posts++] ?? 'not_sent'
      if (kind === 'not_sent') return { kind, reason: 'scripted' }
      if (kind === 'unknown') return { kind, reason: 'scripted' }
      if (kind === 'refused') return { kind, response: { status: 402, body: undefined, headers: new Headers() } }
      if (kind === 'budget_exhausted') return { kind, spentToday: 0n, dailyBudget: 0n }
      throw new Error(`not scripted: ${kind}`)
    },
  }
  return payer
}

describe('the per-caller allowance of the server-paid /mcp build', () => {
  it('counts per caller and clock hour, and refuses past the limit until the next hour, saying when', () => {
    let now = 10 * HOUR + 5
    const allowance = createCallerAllowance(2, () => now)
    expect(allowance.take('a').ok).toBe(true)
    expect(allowance.take('a').ok).toBe(true)
    expect(allowance.take('b').ok).toBe(true)
    expect(allowance.take('a')).toEqual({ ok: false, resetsAt: new Date(11 * HOUR) })
    now = 11 * HOUR
    expect(allowance.take('a').ok).toBe(true)
  })

  it('gives the place back when the build certainly was not paid, and keeps it when the outcome is unknown', async () => {
    const allowance = createCallerAllowance(1, () => 0)
    const payer = scriptedPayer(['refused', 'not_sent', 'budget_exhausted', 'unknown'])
    const limited = limitPerCaller(payer, '203.0.113.9', allowance)
    for (const kind of ['refused', 'not_sent', 'budget_exhausted', 'unknown'])
      expect((await limited.post('/api/x402/swap', {})).kind).toBe(kind)
    expect(await limited.post('/api/x402/swap', {})).toMatchObject({ kind: 'caller_limit', perHour: 1 })
    expect(payer.posts).toBe(4)
  })
})
