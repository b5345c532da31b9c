// The stuck submissions a relayer keeps in the store (keptSubmissions.ts): a store that fails is reported and the
// relayer goes on from what it last knew, never stopping a relay over its own bookkeeping.
import { describe, expect, it } from 'vitest'
import { keptSubmissions } from '../../src/lifecycle/keptSubmissions.ts'
import type { SubmissionStore } from '../../src/store/createSubmissionStore.ts'

const fees = { maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }
const hash = `0x${'1'.padStart(64, '0')}` as const

describe('keptSubmissions', () => {
  it('with a store that fails, logs each failure and chooses from what this process last knew', async () => {
    const warned: string[] = []
    const failing: SubmissionStore = {
      list: async () => {
        throw new Error('connection refused')
      },
      put: async () => {
        throw new Error('connection refused')
      },
      remove: async () => {
        throw new Error('connection refused')
      },
    }
    const kept = keptSubmissions(failing, 'cctp:relayer:POL:0xbeef', { warn: (fields) => void warned.push(String(fields['event'])) })
    const choice = await kept.choose('m1', 5, 5)
    expect(choice).toEqual({ nonce: 5 })
    await kept.sent(choice, 'm1', { hashes: [hash], fees, feeCeiling: 500n })
    await kept.settle(choice, 'm1', { kind: 'not_mined', hashes: [hash], fees, feeCeiling: 500n })
    // The store could not be read: the stuck relay this process kept is still taken over at its nonce.
    expect(await kept.choose('m1', 5, 6)).toMatchObject({ nonce: 5, replacing: { fees, hashes: [hash], feeCeiling: 500n } })
    // Two reads and two writes, each reported.
    expect(warned).toEqual(Array(4).fill('relay_submission_store_failed'))
  })

  it('without a store, keeps them in memory for the process', async () => {
    const kept = keptSubmissions(undefined, 'cctp:relayer:POL:0xbeef', { warn: () => {} })
    const choice = await kept.choose('m1', 5, 5)
    await kept.settle(choice, 'm1', { kind: 'not_mined', hashes: [hash], fees, feeCeiling: 500n })
    expect(await kept.choose('m2', 5, 6)).toMatchObject({ nonce: 5, replacing: { fees, hashes: [hash] } })
    // Mined since: forgotten, and the next goes at the pending count.
    expect(await kept.choose('m2', 6, 6)).toEqual({ nonce: 6 })
  })
})
