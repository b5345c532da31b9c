import { createPublicClient } from 'viem'
import type { Config } from '../config.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { createTransactionSimulator, type Simulators } from '../tx/simulateTransaction.ts'
import { type ChainIdChecks, checkedRpcTransport } from './chainIdCheck.ts'

/**
 * A pre-flight simulator per chain with an RPC URL (preflightBuild.ts), over its own viem client. A client simulates
 * only once its RPC has answered the chain's own id: on an RPC of another chain the simulation is inconclusive (the
 * build is judged by nothing it said), never a verdict read off the wrong chain.
 */
export function simulatorsFromConfig(config: Config, chainIds: ChainIdChecks): Simulators {
  const simulators: Simulators = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][])
    simulators[chain] = createTransactionSimulator(createPublicClient({ transport: checkedRpcTransport(chainIds, chain, url) }))
  return simulators
}
