import { describe, expect, it } from 'vitest'
import { BUILT_CHECK_AGAIN_SEC, isTrackedBy, type NextStepParameters, nextStep, type SourceTracking } from '../../src/service/nextStep.ts'

// A built order's next step by who follows its source chain: each says only what is true of its case, and what to do.

const DEADLINE_MS = Date.parse('2026-11-20T12:30:00.000Z')
const base: NextStepParameters = {
  kind: 'batch',
  state: 'built',
  substatus: null,
  reason: null,
  sourceTracking: 'here',
  fromChain: 'BAS',
  explorerUrl: 'https://basescan.org',
  deadlineMs: DEADLINE_MS,
  received: null,
  asked: { chain: 'BAS', token: 'USDC' },
  nowMs: DEADLINE_MS - 60_000,
}
const step = (sourceTracking: SourceTracking, overrides: Partial<NextStepParameters> = {}) =>
  nextStep({ ...base, sourceTracking, ...overrides })
const SIGN =
  'Sign and broadcast the batch transactionRequest (executeBatch) before 2026-11-20T12:30:00.000Z (approve the token first if the approval says so); after that the router refuses it and nothing moves.'

// Audit of issue 15: past the deadline, "no transaction seen: quote again" was said before the tracker had read a
// final block past it, while a transaction mined just before the deadline could still turn pending: paid twice.
describe('nextStep for a built order past its deadline, by how far the tracker has read', () => {
  const past = { nowMs: DEADLINE_MS + 30_000 }
  it('waits while the tracker reads, behind the deadline: not built again yet', () => {
    for (const tracking of ['here', 'elsewhere'] as const) {
      const next = step(tracking, { ...past, sourceReadToMs: DEADLINE_MS - 120_000 })
      expect(next).toMatchObject({ action: 'wait', checkAgainSec: BUILT_CHECK_AGAIN_SEC, deadline: null })
      expect(next.message).toContain('has read final blocks of BAS up to 2026-11-20T12:28:00.000Z, before it')
      expect(next.message).toContain('Do not build it again yet')
    }
  })

  it('says the status cannot tell when the tracker has read nothing, or nothing lately: check the explorer', () => {
    const none = step('here', { ...past, sourceReadToMs: null })
    expect(none.action).toBe('quote_again')
    expect(none.message).toContain(
      'The tracker has read no final block of BAS yet, so this status cannot show yet whether the transaction ran',
    )
    expect(none.message).toContain('https://basescan.org')
    const stale = step('here', { ...past, sourceReadToMs: DEADLINE_MS - 20 * 60_000 })
    expect(stale.action).toBe('quote_again')
    expect(stale.message).toContain('up to 2026-11-20T12:10:00.000Z, 21 minutes ago')
  })

  it('once the tracker has read past the deadline, nothing ran: quote again, as before', () => {
    const next = step('here', { ...past, sourceReadToMs: DEADLINE_MS + 1_000 })
    expect(next.action).toBe('quote_again')
    expect(next.message).toContain('has passed with no transaction seen')
  })
})

describe('nextStep for a built order', () => {
  it('is tracked only where a tracker is known to follow the order', () => {
    expect((['here', 'elsewhere', 'unseen', 'never'] as const).map(isTrackedBy)).toEqual([true, true, false, false])
  })

  it('before the deadline: signs, and says what this status will show of it by who follows its chain', () => {
    expect(step('here')).toEqual({
      action: 'sign_and_broadcast',
      message: SIGN,
      checkAgainSec: BUILT_CHECK_AGAIN_SEC,
      deadline: '2026-11-20T12:30:00.000Z',
    })
    expect(step('elsewhere')).toMatchObject({ action: 'sign_and_broadcast', checkAgainSec: BUILT_CHECK_AGAIN_SEC })
    expect(step('elsewhere').message).toBe(
      `${SIGN} This service does not read BAS, but a tracker elsewhere (\`swapeazi track\` on the same store) was seen scanning it in the last 10 minutes: this status updates once the transaction is mined, while that tracker runs; if it has not a few minutes after, read the transaction on the block explorer (https://basescan.org) by the hash the wallet gave.`,
    )
    expect(step('unseen')).toMatchObject({ action: 'sign_and_broadcast', checkAgainSec: null })
    expect(step('unseen').message).toBe(
      `${SIGN} This service does not read BAS and has seen no tracker scan it in the last 10 minutes: this status updates once the transaction is mined only if a \`swapeazi track\` process with BAS's RPC runs on the same store; otherwise it stays built, so once it is broadcast read the transaction on the block explorer (https://basescan.org) by the hash the wallet gave.`,
    )
    // Nothing follows a batch of plain transfers only: no tracker, here or beside it, will move it.
    expect(step('never')).toMatchObject({ action: 'sign_and_broadcast', checkAgainSec: null })
    expect(step('never').message).toBe(
      `${SIGN} No tracker follows this order (a batch of plain transfers only holds no swap or bridge order for one to move), so this status stays built whatever happens on chain: once it is broadcast, check the transaction on the block explorer (https://basescan.org) by the hash the wallet gave.`,
    )
    expect(step('never').message).not.toMatch(/does not read|swapeazi track|will update|updates/)
  })

  it('after the deadline: builds again, and where this status cannot tell whether it ran, says where to look', () => {
    const after = { nowMs: DEADLINE_MS + 1 }
    expect(step('here', after)).toEqual({
      action: 'quote_again',
      message:
        'The deadline (2026-11-20T12:30:00.000Z) has passed with no transaction seen; if it was never broadcast, nothing moved: get a new quote and build again. The tracker will mark it expired.',
      checkAgainSec: BUILT_CHECK_AGAIN_SEC,
      deadline: null,
    })
    expect(step('elsewhere', after)).toMatchObject({ action: 'quote_again', checkAgainSec: BUILT_CHECK_AGAIN_SEC })
    expect(step('elsewhere', after).message).toBe(
      'The deadline (2026-11-20T12:30:00.000Z) has passed with no transaction seen by the tracker scanning BAS; if it was never broadcast, nothing moved: get a new quote and build again. That tracker will mark it expired.',
    )
    expect(step('unseen', after)).toMatchObject({ action: 'quote_again', checkAgainSec: null })
    expect(step('unseen', after).message).toBe(
      'The deadline (2026-11-20T12:30:00.000Z) has passed. This service does not read BAS and has seen no tracker scan it in the last 10 minutes, so this status cannot show whether the transaction ran: check it on the block explorer (https://basescan.org) by the hash the wallet gave; if it was never mined, nothing moved and it can no longer run: get a new quote and build again.',
    )
    expect(step('never', after)).toMatchObject({ action: 'quote_again', checkAgainSec: null })
    expect(step('never', after).message).toBe(
      'The deadline (2026-11-20T12:30:00.000Z) has passed. No tracker follows this order (a batch of plain transfers only holds no swap or bridge order for one to move), so this status stays built whether or not the transaction ran: check it on the block explorer (https://basescan.org) by the hash the wallet gave; if it was never mined, nothing moved and it can no longer run: get a new quote and build again.',
    )
  })

  it('names the chain where it has no explorer to link', () => {
    expect(step('never', { explorerUrl: null, fromChain: 'CEL' }).message).toContain(
      'check the transaction on a CEL block explorer by the hash',
    )
    expect(step('unseen', { explorerUrl: null, fromChain: 'CEL' }).message).toContain(
      'read the transaction on a CEL block explorer by the hash',
    )
  })

  it('asks a failed order that can be sent again to read again only where a tracker is known to follow it', () => {
    const failed = { state: 'failed' as const, reason: 'the source transaction reverted' }
    expect(step('here', failed).checkAgainSec).toBe(BUILT_CHECK_AGAIN_SEC)
    expect(step('elsewhere', failed).checkAgainSec).toBe(BUILT_CHECK_AGAIN_SEC)
    expect(step('unseen', failed).checkAgainSec).toBeNull()
  })
})
