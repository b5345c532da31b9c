import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { blocksWithSenders } from '../../src/lifecycle/blocksWithSenders.ts'
import type { TrackerClient } from '../../src/lifecycle/trackerContext.ts'
import { type AnvilInstance, sendAndWait, startAnvil } from '../chain/anvil.ts'

let anvil: AnvilInstance
beforeAll(async () => {
  anvil = await startAnvil()
}, 60_000)
afterAll(async () => anvil?.stop())

describe('blocksWithSenders: the blocks in which given senders sent, from their nonces', () => {
  it('finds exactly those blocks, and none in a range where nobody sent', async () => {
    const [, a, b, c] = anvil.accounts
    const client = anvil.publicClient as unknown as TrackerClient
    const send = async (from: typeof a) => (await sendAndWait(anvil, from!, { to: anvil.accounts[9]!.address, value: 1n })).blockNumber
    await anvil.testClient.mine({ blocks: 5 })
    const start = (await anvil.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const sent: bigint[] = []
    sent.push(await send(a))
    await anvil.testClient.mine({ blocks: 7 })
    sent.push(await send(b))
    sent.push(await send(a))
    await anvil.testClient.mine({ blocks: 9 })
    // Someone else's transaction is no sender's.
    await send(c)
    await anvil.testClient.mine({ blocks: 4 })
    const end = await anvil.publicClient.getBlockNumber({ cacheTime: 0 })
    expect(await blocksWithSenders(client, [a!.address, b!.address], start, end)).toEqual(sent)
    expect(await blocksWithSenders(client, [a!.address, b!.address], sent[2]! + 1n, end)).toEqual([])
    // Not cheaper than reading the blocks: undefined, the caller reads them all.
    expect(await blocksWithSenders(client, [a!.address, b!.address], start, start + 2n)).toBeUndefined()
  })
})
