// Puts the catalogue of one or more chains on anvil: stand-ins for every token, venue and bridge contract the
// catalogue names there, our router deployed through the CREATE2 proxy and allow-listed exactly as
// `swapeazi router allow` would, and catalogue files rewritten to point at what was deployed.
import { type Address, getAddress, keccak256, stringToHex } from 'viem'
import { type Catalogue, type CatalogueFiles, compileCatalogue, isEvmToken, pow10, type Token } from '../../src/engine/index.ts'
import { deployRouter } from '../../src/contracts/deployRouter.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { type ChainCode, isEvmTokenEntry } from '../../src/schemas/catalogue.ts'
import { type RouterDeployment, routerDeployment } from '../../src/tx/routerDeployment.ts'
import { routerTargets } from '../../src/tx/routerTargets.ts'
import { type AnvilInstance, startAnvil, writeContractAndWait } from './anvil.ts'
import { deployStandIn, standInAbi } from './standIns.ts'

/** Reserves minted to every venue and delivery contract: far more than any test moves. */
const RESERVE_UNITS = 100_000_000n

export type ChainSetup = {
  chain: ChainCode
  instance: AnvilInstance
  router: RouterDeployment
  owner: AnvilInstance['accounts'][number]
  treasury: Address
  /** Real catalogue address (lowercase) → the stand-in deployed for it on this chain. */
  replaced: Map<string, Address>
}

export type CatalogueOnChains = {
  files: CatalogueFiles
  catalogue: Catalogue
  chains: Map<ChainCode, ChainSetup>
  stop(): Promise<void>
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
const tokenAbi = () => standInAbi('TestToken')

async function mint(instance: AnvilInstance, token: Address, to: Address, amount: bigint): Promise<void> {
  await writeContractAndWait(instance, instance.accounts[0]!, { address: token, abi: tokenAbi(), functionName: 'mint', args: [to, amount] })
}

/** Deploys stand-ins for `chain`'s part of the catalogue on `instance` and rewrites `files` to point at them. */
async function deployChain(
  instance: AnvilInstance,
  files: CatalogueFiles,
  original: CatalogueFiles,
  chain: ChainCode,
): Promise<ChainSetup> {
  // Prices and decimals as the engine compiles them from the real catalogue: the stand-ins pay the oracle rate.
  const real = compileCatalogue(original)
  const tokenOn = (symbol: string): Token => {
    const token = real.tokens.get(`${chain}:${symbol}`)
    if (!token || !isEvmToken(token)) throw new Error(`${symbol} is not on ${chain}`)
    return token
  }
  const [deployer] = instance.accounts
  if (!deployer) throw new Error('anvil has no accounts')
  const replaced = new Map<string, Address>()
  const swap = (real: string): Address => {
    const stand = replaced.get(real.toLowerCase())
    if (!stand) throw new Error(`no stand-in for ${real} on ${chain}`)
    return stand
  }

  // Tokens: USDT-like reset tokens where the catalogue says so, EIP-2612/3009 tokens otherwise.
  for (const token of original.tokens.tokens.filter((entry) => entry.chain === chain)) {
    const address = token.approvalReset
      ? await deployStandIn(instance, deployer, 'ResetApprovalToken', [token.symbol, token.symbol, token.decimals])
      : await deployStandIn(instance, deployer, 'TestToken', [token.symbol, token.symbol, token.decimals, '2'])
    replaced.set(token.address.toLowerCase(), address)
  }
  const tokenAddress = (symbol: string): Address => {
    const entry = original.tokens.tokens.find((token) => token.chain === chain && token.symbol === symbol)
    if (!entry) throw new Error(`${symbol} is not on ${chain}`)
    return swap(entry.address)
  }

  // Venues: one stand-in per contract address; pools get their coins, routers are shared by their pools.
  for (const venue of files.venues.venues.filter((entry) => entry.chain === chain)) {
    const key = venue.contract.toLowerCase()
    let address = replaced.get(key)
    if (!address) {
      const coins = venue.tokens.map(tokenAddress)
      switch (venue.protocol) {
        case 'uniswap-v3':
        case 'pancakeswap-v3':
          address = await deployStandIn(instance, deployer, 'UniswapV3RouterStandIn', [])
          break
        case 'curve':
        case 'curve-ng':
          address = await deployStandIn(instance, deployer, 'CurvePoolStandIn', [coins])
          break
        case 'pancakeswap-stable':
          address = await deployStandIn(instance, deployer, 'PancakeStableSwapStandIn', [coins])
          break
        case 'aerodrome':
        case 'velodrome':
          address = await deployStandIn(instance, deployer, 'SolidlyRouterStandIn', [])
          break
        case 'balancer-v2':
          address = await deployStandIn(instance, deployer, 'BalancerVaultStandIn', [])
          break
        case 'mento':
          address = await deployStandIn(instance, deployer, 'MentoBrokerStandIn', [])
          break
        default:
          throw new Error(`no stand-in for venue protocol ${venue.protocol}`)
      }
      replaced.set(key, address)
    }
    // A pool id the real catalogue lacks (Gnosis Balancer) is made up here: the stand-in accepts any.
    if (venue.protocol === 'balancer-v2' && venue.params?.poolId === undefined)
      venue.params = { ...venue.params, poolId: keccak256(stringToHex(venue.id)) }
    // Every direction at the oracle rate: out = in × price(in) × 10^dec(out) / (price(out) × 10^dec(in)).
    for (const inSymbol of venue.tokens) {
      for (const outSymbol of venue.tokens) {
        if (inSymbol === outSymbol) continue
        const tokenIn = tokenOn(inSymbol)
        const tokenOut = tokenOn(outSymbol)
        await writeContractAndWait(instance, deployer, {
          address,
          abi: standInAbi('UniswapV3RouterStandIn'),
          functionName: 'setRate',
          args: [
            tokenAddress(inSymbol),
            tokenAddress(outSymbol),
            tokenIn.priceUsdE18 * pow10(tokenOut.decimals),
            tokenOut.priceUsdE18 * pow10(tokenIn.decimals),
          ],
        })
      }
      await mint(instance, tokenAddress(inSymbol), address, RESERVE_UNITS * pow10(tokenOn(inSymbol).decimals))
    }
  }

  // Bridges: deposit contracts and the contracts that deliver on arrival.
  for (const bridge of files.bridges.bridges) {
    for (const endpoint of bridge.endpoints.filter((entry) => entry.chain === chain)) {
      const token = tokenAddress(endpoint.token)
      if (endpoint.contract && !replaced.has(endpoint.contract.toLowerCase())) {
        let address: Address
        if (bridge.protocol === 'cctp-v2')
          address = await deployStandIn(instance, deployer, 'TokenMessengerV2StandIn', [endpoint.domain ?? 0])
        else if (bridge.protocol === 'across') address = await deployStandIn(instance, deployer, 'SpokePoolStandIn', [])
        else
          address = await deployStandIn(instance, deployer, 'StargateOftStandIn', [
            token,
            BigInt(bridge.feePpm.bySource[chain] ?? bridge.feePpm.default),
          ])
        replaced.set(endpoint.contract.toLowerCase(), address)
      }
      if (endpoint.deliveredBy && !replaced.has(endpoint.deliveredBy.toLowerCase())) {
        let address: Address
        if (bridge.protocol === 'cctp-v2')
          address = await deployStandIn(instance, deployer, 'MessageTransmitterV2StandIn', [endpoint.domain ?? 0, token])
        else if (bridge.protocol === 'across') address = swap(endpoint.deliveredBy)
        else address = await deployStandIn(instance, deployer, 'LayerZeroEndpointStandIn', [])
        replaced.set(endpoint.deliveredBy.toLowerCase(), address)
      }
    }
  }

  const owner = instance.accounts[1]!
  const treasury = instance.accounts[9]!.address
  const deployed = await deployRouter({
    publicClient: instance.publicClient as never,
    walletClient: instance.walletClient(deployer) as never,
    owner: owner.address,
    treasury,
  })
  return { chain, instance, router: routerDeployment(deployed.address), owner, treasury, replaced }
}

/** Rewrites every address of `chain` in the files through the stand-in map. */
function patchFiles(files: CatalogueFiles, setup: ChainSetup): void {
  const swap = (real: Address): Address => setup.replaced.get(real.toLowerCase()) ?? real
  for (const token of files.tokens.tokens) if (isEvmTokenEntry(token) && token.chain === setup.chain) token.address = swap(token.address)
  for (const venue of files.venues.venues) if (venue.chain === setup.chain) venue.contract = swap(venue.contract)
  for (const bridge of files.bridges.bridges)
    for (const endpoint of bridge.endpoints)
      if (endpoint.chain === setup.chain) {
        if (endpoint.contract) endpoint.contract = swap(endpoint.contract)
        if (endpoint.deliveredBy) endpoint.deliveredBy = swap(endpoint.deliveredBy)
      }
}

/**
 * Starts one anvil per chain (with the catalogue's chain id), deploys the catalogue's stand-ins and our router on
 * each, allow-lists every target the patched catalogue names there, and returns the patched catalogue.
 */
export async function deployCatalogueOnChains(original: CatalogueFiles, chains: readonly ChainCode[]): Promise<CatalogueOnChains> {
  const files = clone(original)
  const setups = new Map<ChainCode, ChainSetup>()
  const instances: AnvilInstance[] = []
  try {
    for (const chain of chains) {
      const chainId = original.chains.chains.find((entry) => entry.id === chain)?.chainId
      if (chainId === undefined) throw new Error(`chain ${chain} is not in the catalogue`)
      const instance = await startAnvil({ chainId })
      instances.push(instance)
      setups.set(chain, await deployChain(instance, files, original, chain))
    }
    for (const setup of setups.values()) patchFiles(files, setup)
    const catalogue = compileCatalogue(files)
    for (const setup of setups.values()) {
      for (const target of routerTargets(catalogue, setup.chain)) {
        await writeContractAndWait(setup.instance, setup.owner, {
          address: setup.router.router,
          abi: swapEaziRouterAbi as never,
          functionName: 'setTarget',
          args: [getAddress(target.address), true],
        })
      }
    }
    return { files, catalogue, chains: setups, stop: async () => void (await Promise.all(instances.map((instance) => instance.stop()))) }
  } catch (error) {
    await Promise.all(instances.map((instance) => instance.stop()))
    throw error
  }
}
