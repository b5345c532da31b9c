import { getAddress } from 'viem'
import { DEFAULT_ROUTER_ADDRESS } from '../contracts/deployRouter.ts'

/**
 * The first next step of a swap or batch whose transaction targets SwapEazi's inert default router, which is deployed
 * nowhere (docs/router-contract.md): a service whose operator has not set a router of its own builds transactions
 * that swap and send nothing, and the answer must say so before anyone signs. None otherwise.
 */
export function inertRouterSteps(router: string): string[] {
  if (getAddress(router) !== DEFAULT_ROUTER_ADDRESS) return []
  return [
    `Do not sign these transactions: they call ${DEFAULT_ROUTER_ADDRESS}, SwapEazi's inert default router, which is deployed nowhere, because this service's operator has not set a router of its own. They would swap and send nothing, and the sender would pay their gas. Use a SwapEazi service that runs its own router.`,
  ]
}
