import { type Address, getAddress, getContractAddress } from 'viem'

/** Where the router and its executor live on one chain. */
export type RouterDeployment = { router: Address; executor: Address }

/**
 * The router deploys its executor with CREATE in its constructor, as its first contract creation (nonce 1,
 * EIP-161), so the executor's address follows from the router's.
 */
export function routerDeployment(router: Address): RouterDeployment {
  const checksummed = getAddress(router)
  return { router: checksummed, executor: getContractAddress({ from: checksummed, nonce: 1n }) }
}
