import {
  type Account,
  type Address,
  type Chain,
  concat,
  encodeDeployData,
  getContractAddress,
  type Hex,
  keccak256,
  type PublicClient,
  stringToHex,
  type Transport,
  type WalletClient,
} from 'viem'
import { swapEaziRouterAbi, swapEaziRouterBytecode } from './routerArtifact.ts'

/** The deterministic deployment proxy (Arachnid), at this address on every chain we route on and in anvil. */
export const DETERMINISTIC_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C'

/** Salt of the v1 router: one salt and one set of constructor arguments give one address on every chain. */
export const ROUTER_SALT: Hex = keccak256(stringToHex('swapeazi.router.v1'))

/**
 * The owner and treasury of the default router address. 0x…dEaD holds no key: a router deployed with them can
 * never allow-list a target, so every route through it reverts and no approval to it can be spent. Operators
 * deploy with their own owner and treasury and set SWAPEAZI_ROUTER_ADDRESS to the address deploy prints.
 */
export const INERT_OWNER: Address = '0x000000000000000000000000000000000000dEaD'

export type RouterConstructor = { owner: Address; treasury: Address; salt?: Hex }

/** The router's creation code with its constructor arguments. */
export function routerInitCode(args: RouterConstructor): Hex {
  return encodeDeployData({ abi: swapEaziRouterAbi, bytecode: swapEaziRouterBytecode, args: [args.owner, args.treasury] })
}

/** Where the deterministic deployer puts the router for these arguments, on any chain. */
export function predictRouterAddress(args: RouterConstructor): Address {
  return getContractAddress({
    opcode: 'CREATE2',
    from: DETERMINISTIC_DEPLOYER,
    salt: args.salt ?? ROUTER_SALT,
    bytecode: routerInitCode(args),
  })
}

/** The default router address (inert owner and treasury): documented in docs/configuration.md, overridden by configuration. */
export const DEFAULT_ROUTER_ADDRESS: Address = predictRouterAddress({ owner: INERT_OWNER, treasury: INERT_OWNER })

export type DeployRouterParameters = RouterConstructor & {
  publicClient: PublicClient
  walletClient: WalletClient<Transport, Chain | undefined, Account>
}

export type DeployRouterReturnType = { address: Address; alreadyDeployed: boolean; transactionHash?: Hex; gasUsed?: bigint }

/**
 * Deploys the router through the deterministic deployment proxy (CREATE2), so the same arguments give the same
 * address on every chain. Does nothing when code is already there; throws when the proxy is missing or the
 * deployment does not leave the router's code at the predicted address.
 */
export async function deployRouter(parameters: DeployRouterParameters): Promise<DeployRouterReturnType> {
  const { publicClient, walletClient } = parameters
  const address = predictRouterAddress(parameters)
  const existing = await publicClient.getCode({ address })
  if (existing && existing !== '0x') return { address, alreadyDeployed: true }
  const proxy = await publicClient.getCode({ address: DETERMINISTIC_DEPLOYER })
  if (!proxy || proxy === '0x') throw new Error(`the deterministic deployment proxy ${DETERMINISTIC_DEPLOYER} is not on this chain`)
  const transactionHash = await walletClient.sendTransaction({
    account: walletClient.account,
    chain: walletClient.chain,
    to: DETERMINISTIC_DEPLOYER,
    data: concat([parameters.salt ?? ROUTER_SALT, routerInitCode(parameters)]),
  })
  const receipt = await publicClient.waitForTransactionReceipt({ hash: transactionHash })
  if (receipt.status !== 'success') throw new Error(`router deployment reverted in ${transactionHash}`)
  const code = await publicClient.getCode({ address })
  if (!code || code === '0x') throw new Error(`no code at the predicted router address ${address} after ${transactionHash}`)
  return { address, alreadyDeployed: false, transactionHash, gasUsed: receipt.gasUsed }
}
