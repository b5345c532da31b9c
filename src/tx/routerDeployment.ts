import { type Address, getAddress, getContractAddress } from 'viem'

/** Where the router and its executor live on one chain. */
export type RouterDeployment = { router: Address; executor: Address }

/**
 * Deployments already derived, by the router address as configured. Every build asks for its chain's deployment and
 * the derivation hashes twice (the checksum, then the RLP of sender and nonce), while the configured routers are a
 * handful of fixed addresses; the answer for an address never changes.
 */
const derived = new Map<string, RouterDeployment>()
/** More distinct routers than any configuration names: past it, the map starts again rather than grow. */
const MAX_DERIVED = 256

/**
 * The router deploys its executor with CREATE in its constructor, as its first contract creation (nonce 1,
 * EIP-161), so the executor's address follows from the router's.
 */
export function routerDeployment(router: Address): RouterDeployment {
  const known = derived.get(router)
  if (known !== undefined) return known
  const checksummed = getAddress(router)
  const deployment = Object.freeze({ router: checksummed, executor: getContractAddress({ from: checksummed, nonce: 1n }) })
  if (derived.size >= MAX_DERIVED) derived.clear()
  derived.set(router, deployment)
  return deployment
}
