import type { PublicClient } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'

/**
 * Unix seconds of a block, read over the tracker's own clients, for observeCompletedSwap's duration (source block to
 * delivery block, as the chains date them). A chain without a client rejects, and the observation falls back to the
 * tracker's transition times, which lag each chain by its own confirmation depth.
 */
export function blockTimesOf(
  clients: Partial<Record<ChainCode, Pick<PublicClient, 'getBlock'>>>,
): (chain: ChainCode, blockNumber: bigint) => Promise<number> {
  return async (chain, blockNumber) => {
    const client = clients[chain]
    if (client === undefined) throw new Error(`no RPC for ${chain}`)
    return Number((await client.getBlock({ blockNumber })).timestamp)
  }
}
