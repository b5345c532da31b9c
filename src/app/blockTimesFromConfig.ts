import { createPublicClient, http } from 'viem'
import type { Config } from '../config.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS } from '../market/createChainReader.ts'
import type { ChainCode } from '../schemas/catalogue.ts'

/**
 * Unix seconds of a block on a chain of SWAPEAZI_RPC_URLS, for observeCompletedSwap's duration (source block to
 * delivery block, as the chains date them); undefined when no chain has an RPC. A chain without one rejects, and the
 * observation falls back to the tracker's transition times.
 */
export function blockTimesFromConfig(
  rpcUrls: Config['market']['rpcUrls'],
): ((chain: ChainCode, blockNumber: bigint) => Promise<number>) | undefined {
  const entries = Object.entries(rpcUrls) as [ChainCode, string][]
  if (entries.length === 0) return undefined
  const clients = new Map(entries.map(([chain, url]) => [chain, createPublicClient({ transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS) })]))
  return async (chain, blockNumber) => {
    const client = clients.get(chain)
    if (client === undefined) throw new Error(`no RPC for ${chain}`)
    return Number((await client.getBlock({ blockNumber })).timestamp)
  }
}
