import type { Address } from 'viem'
import type { TrackerClient } from './trackerContext.ts'

/**
 * The blocks of [fromBlock, toBlock] in which any of `senders` sent a transaction, found from their nonces
 * (eth_getTransactionCount at a block) by bisecting only the ranges in which a nonce moved: a range in which no sender
 * sent costs two reads per sender, where reading its blocks costs one full block per block. Undefined when that is no
 * cheaper (more senders than blocks) or a node cannot answer a nonce at those blocks (pruned state): read every block.
 */
export async function blocksWithSenders(
  client: TrackerClient,
  senders: readonly Address[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<bigint[] | undefined> {
  if (BigInt(senders.length * 2) >= toBlock - fromBlock + 1n) return undefined
  const found = new Set<bigint>()
  try {
    for (const sender of senders) {
      const nonceAt = (blockNumber: bigint): Promise<number> =>
        blockNumber < 0n ? Promise.resolve(0) : client.getTransactionCount({ address: sender, blockNumber })
      const bisect = async (low: bigint, high: bigint, before: number, after: number): Promise<void> => {
        if (before === after) return
        if (low === high) {
          found.add(low)
          return
        }
        const middle = (low + high) / 2n
        const atMiddle = await nonceAt(middle)
        await bisect(low, middle, before, atMiddle)
        await bisect(middle + 1n, high, atMiddle, after)
      }
      const [before, after] = await Promise.all([nonceAt(fromBlock - 1n), nonceAt(toBlock)])
      await bisect(fromBlock, toBlock, before, after)
    }
  } catch {
    return undefined
  }
  return [...found].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}
