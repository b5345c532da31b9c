import type { TrackerClient } from './trackerContext.ts'

/** How far before the source block's time a delivery is looked for: chains' clocks differ by seconds. */
const CLOCK_MARGIN_SEC = 120n

/**
 * A block of `client`'s chain no later than `timestampSec` (less a margin for clocks): where a delivery caused by a
 * transaction mined at that time can first be. Steps back from the head by the chain's block time, doubling the step
 * until a block is early enough, so it costs a few reads, not a search of the chain.
 */
export async function blockAtOrBefore(client: TrackerClient, timestampSec: bigint, blockTimeSec: number): Promise<bigint> {
  const target = timestampSec - CLOCK_MARGIN_SEC
  const head = await client.getBlock({ blockTag: 'latest' })
  if (head.timestamp <= target) return head.number
  let step = (head.timestamp - target) / BigInt(Math.max(1, Math.floor(blockTimeSec))) + 1n
  for (;;) {
    const candidate = head.number > step ? head.number - step : 0n
    if (candidate === 0n) return 0n
    const block = await client.getBlock({ blockNumber: candidate })
    if (block.timestamp <= target) return candidate
    step *= 2n
  }
}
