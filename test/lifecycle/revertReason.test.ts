import { HttpRequestError, RpcRequestError } from 'viem'
import { describe, expect, it } from 'vitest'
import { revertReason } from '../../src/lifecycle/revertReason.ts'
import type { TrackerClient } from '../../src/lifecycle/trackerContext.ts'

// Why a source transaction reverted, from its replay: a node's own error is no reason, and a transport failure is no
// answer at all (review of today's change).

const tx = {
  from: '0x00000000000000000000000000000000000000a1',
  to: '0x00000000000000000000000000000000000000b2',
  input: '0x',
  value: 0n,
  gas: 100_000n,
} as const
const failingWith = (error: Error): TrackerClient =>
  ({
    call: async () => {
      throw error
    },
  }) as unknown as TrackerClient

describe('revertReason', () => {
  it("says a node's own error (a pruned node's missing trie node) is not the reason, and does not call it expired", async () => {
    const error = new RpcRequestError({ body: {}, error: { code: -32000, message: 'missing trie node abc' }, url: 'http://node.example' })
    expect(await revertReason(failingWith(error), tx, 100n)).toEqual({
      text: 'reverted (the reason could not be replayed: missing trie node abc)',
      isExpired: false,
    })
  })

  it('rejects when the replay never reached the node, so nothing is recorded from it', async () => {
    const error = new HttpRequestError({ url: 'http://node.example/v2/KEY', details: 'fetch failed' })
    await expect(revertReason(failingWith(error), tx, 100n)).rejects.toBe(error)
  })
})
