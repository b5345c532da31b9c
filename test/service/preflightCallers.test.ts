import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import type { ServiceDeps } from '../../src/service/deps.ts'
import {
  MAX_COUNTED_CALLERS,
  type PreflightTransaction,
  preflightBuild,
  SIMULATIONS_PER_CALLER_MINUTE,
} from '../../src/service/preflightBuild.ts'
import { ServiceError } from '../../src/service/serviceError.ts'
import type { Simulators } from '../../src/tx/simulateTransaction.ts'

// Review of issue 15, defect 3: the pre-flight's per-caller counts are bounded, and a client that cycles subjects
// past the bound must not reset the counts of the callers already limited (it used to empty them all).
const ADDRESS = '0x1111111111111111111111111111111111111111'
const built: PreflightTransaction = {
  chain: 'ETH',
  transactionRequest: { from: ADDRESS, to: ADDRESS, data: '0x', value: '0x0' },
  approval: { token: ADDRESS, amount: 1n, spender: ADDRESS },
  label: 'test build',
}

function preflight(nowMs: { value: number }) {
  let simulations = 0
  const simulators: Simulators = {
    ETH: async () => {
      simulations += 1
      return { ok: true }
    },
  }
  const deps = { simulators, clock: () => nowMs.value, log: pino({ level: 'silent' }) } as unknown as ServiceDeps
  const run = async (caller: string): Promise<number | 'rate_limited'> => {
    try {
      await preflightBuild(deps, { built, requestKey: 'same request', caller })
      return 200
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'rate_limited') return 'rate_limited'
      throw error
    }
  }
  return { run, simulations: () => simulations }
}

describe('the pre-flight per-caller limit', () => {
  it(`keeps a limited caller limited while another cycles more than ${MAX_COUNTED_CALLERS} subjects in the minute`, async () => {
    const nowMs = { value: Date.parse('2026-11-20T12:00:00Z') }
    const { run, simulations } = preflight(nowMs)
    for (let i = 0; i < SIMULATIONS_PER_CALLER_MINUTE; i++) expect(await run('heavy')).toBe(200)
    expect(await run('heavy')).toBe('rate_limited')
    for (let i = 0; i < MAX_COUNTED_CALLERS * 2 + 10; i++) expect(await run(`cycled-${i}`)).toBe(200)
    expect(await run('heavy')).toBe('rate_limited')
    expect(simulations()).toBe(SIMULATIONS_PER_CALLER_MINUTE + MAX_COUNTED_CALLERS * 2 + 10)
    // The next minute starts afresh, for it too.
    nowMs.value += 60_000
    expect(await run('heavy')).toBe(200)
  })

  it('forgets the counts of past minutes first', async () => {
    const nowMs = { value: Date.parse('2026-11-20T12:00:00Z') }
    const { run } = preflight(nowMs)
    for (let i = 0; i < MAX_COUNTED_CALLERS; i++) await run(`last-minute-${i}`)
    nowMs.value += 60_000
    for (let i = 0; i <= SIMULATIONS_PER_CALLER_MINUTE; i++) await run('heavy')
    for (let i = 0; i < MAX_COUNTED_CALLERS - 1; i++) expect(await run(`cycled-${i}`)).toBe(200)
    expect(await run('heavy')).toBe('rate_limited')
  })
})
