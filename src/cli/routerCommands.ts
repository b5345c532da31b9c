import { parseArgs } from 'node:util'
import type { Writable } from 'node:stream'
import { type Address, createPublicClient, createWalletClient, defineChain, http, isAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadCatalogue } from '../catalogue/loadCatalogue.ts'
import type { Config } from '../config.ts'
import { deployRouter, INERT_OWNER } from '../contracts/deployRouter.ts'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import { CHAIN_CODES, type ChainCode } from '../schemas/catalogue.ts'
import { routerTargets } from '../tx/routerTargets.ts'

export const ROUTER_USAGE = `Usage:
  swapeazi router deploy --rpc-url URL --owner 0x... --treasury 0x... [--salt 0x...]
      Deploys SwapEaziRouter through the CREATE2 deterministic deployment proxy (same arguments, same address on
      every chain) with the key in SWAPEAZI_DEPLOYER_PRIVATE_KEY, and prints its address.
  swapeazi router allow --rpc-url URL --router 0x... --chain CODE
      Allow-lists on that router every venue, bridge and delivery contract the catalogue uses on chain CODE,
      signed by the router's owner (SWAPEAZI_DEPLOYER_PRIVATE_KEY).`

type Clients = { publicClient: ReturnType<typeof createPublicClient>; walletClient: ReturnType<typeof createWalletClient> }

async function connect(config: Config, rpcUrl: string): Promise<Clients & { account: ReturnType<typeof privateKeyToAccount> }> {
  if (!config.deployerPrivateKey) throw new Error('set SWAPEAZI_DEPLOYER_PRIVATE_KEY to the key that signs the transaction')
  const account = privateKeyToAccount(config.deployerPrivateKey)
  const probe = createPublicClient({ transport: http(rpcUrl) })
  const chainId = await probe.getChainId()
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'native', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  return {
    account,
    publicClient: createPublicClient({ chain, transport: http(rpcUrl) }),
    walletClient: createWalletClient({ account, chain, transport: http(rpcUrl) }),
  }
}

function addressFlag(values: Record<string, unknown>, name: string): Address {
  const value = values[name]
  if (typeof value !== 'string' || !isAddress(value, { strict: false }))
    throw new Error(`--${name} must be an address (0x followed by 40 hex characters)`)
  return value
}

function stringFlag(values: Record<string, unknown>, name: string): string {
  const value = values[name]
  if (typeof value !== 'string' || value === '') throw new Error(`--${name} is required`)
  return value
}

/** `swapeazi router <deploy|allow>`: operator commands; write results to stdout, diagnostics to stderr. */
export async function runRouterCommand(config: Config, argv: readonly string[], out: Writable): Promise<void> {
  const [sub, ...rest] = argv
  const { values } = parseArgs({
    args: [...rest],
    options: {
      'rpc-url': { type: 'string' },
      owner: { type: 'string' },
      treasury: { type: 'string' },
      salt: { type: 'string' },
      router: { type: 'string' },
      chain: { type: 'string' },
    },
    strict: true,
  })
  if (sub === 'deploy') {
    const owner = addressFlag(values, 'owner')
    const treasury = addressFlag(values, 'treasury')
    if (owner.toLowerCase() === INERT_OWNER.toLowerCase() || treasury.toLowerCase() === INERT_OWNER.toLowerCase())
      throw new Error('owner and treasury must be addresses you control, not the inert default')
    const salt = values.salt
    if (salt !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(salt)) throw new Error('--salt must be 32 bytes of hex')
    const { publicClient, walletClient } = await connect(config, stringFlag(values, 'rpc-url'))
    const result = await deployRouter({
      publicClient: publicClient as never,
      walletClient: walletClient as never,
      owner,
      treasury,
      ...(salt === undefined ? {} : { salt: salt as `0x${string}` }),
    })
    out.write(
      `${JSON.stringify({ router: result.address, alreadyDeployed: result.alreadyDeployed, transactionHash: result.transactionHash, gasUsed: result.gasUsed?.toString() })}\n`,
    )
    return
  }
  if (sub === 'allow') {
    const router = addressFlag(values, 'router')
    const chain = stringFlag(values, 'chain').toUpperCase()
    if (!(CHAIN_CODES as readonly string[]).includes(chain)) throw new Error(`--chain must be one of ${CHAIN_CODES.join(', ')}`)
    const { catalogue } = loadCatalogue(config.manifestDir)
    const { account, publicClient, walletClient } = await connect(config, stringFlag(values, 'rpc-url'))
    for (const target of routerTargets(catalogue, chain as ChainCode)) {
      const allowed = await publicClient.readContract({
        address: router,
        abi: swapEaziRouterAbi,
        functionName: 'isAllowedTarget',
        args: [target.address],
      })
      if (allowed) continue
      const hash = await walletClient.writeContract({
        account,
        chain: walletClient.chain,
        address: router,
        abi: swapEaziRouterAbi,
        functionName: 'setTarget',
        args: [target.address, true],
      })
      const receipt = await publicClient.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`setTarget(${target.address}) reverted in ${hash}`)
      out.write(`${JSON.stringify({ allowed: target.address, why: target.why, transactionHash: hash })}\n`)
    }
    return
  }
  throw new Error(`unknown router command "${sub ?? ''}"\n\n${ROUTER_USAGE}`)
}
