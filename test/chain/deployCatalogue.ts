// Puts the catalogue of one or more chains on anvil: stand-ins for every token, venue and bridge contract the
// catalogue names there, our router deployed through the CREATE2 proxy and allow-listed exactly as
// `swapeazi router allow` would, and catalogue files rewritten to point at what was deployed.
import { type Address, getAddress, type Hex } from 'viem'
import { type Catalogue, type CatalogueFiles, compileCatalogue, isEvmToken, pow10, type Token } from '../../src/engine/index.ts'
import { deployRouter } from '../../src/contracts/deployRouter.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { type ChainCode, isEvmTokenEntry } from '../../src/schemas/catalogue.ts'
import { type RouterDeployment, routerDeployment } from '../../src/tx/routerDeployment.ts'
import { routerTargets } from '../../src/tx/routerTargets.ts'
import { type AnvilInstance, startAnvil, writeContractAndWait } from './anvil.ts'
import { TEST_CCTP_ATTESTER } from './cctpMessage.ts'
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

  // Tokens a Balancer venue names by another address (params.vaultAsset: the Monerium v1 front the pools hold, which
  // shares balance and allowance with the v2 token the catalogue lists), by symbol.
  const fronts = new Map<string, Address>()
  for (const venue of original.venues.venues) {
    const front = venue.params?.vaultAsset
    const pooled = venue.tokens[1]
    if (venue.chain === chain && venue.protocol === 'balancer-v2' && typeof front === 'string' && pooled !== undefined)
      fronts.set(pooled, front as Address)
  }

  // Tokens: USDT-like reset tokens where the catalogue says so, a Monerium v2 ledger and its v1 front where a venue
  // names the front, EIP-2612/3009 tokens otherwise.
  for (const token of original.tokens.tokens.filter((entry) => entry.chain === chain)) {
    const front = fronts.get(token.symbol)
    if (front !== undefined) {
      const ledger = await deployStandIn(instance, deployer, 'MoneriumTokenStandIn', [token.symbol, token.symbol, token.decimals])
      const frontAddress = await deployStandIn(instance, deployer, 'MoneriumFrontStandIn', [ledger])
      await writeContractAndWait(instance, deployer, {
        address: ledger,
        abi: standInAbi('MoneriumTokenStandIn'),
        functionName: 'setFrontend',
        args: [frontAddress],
      })
      replaced.set(token.address.toLowerCase(), ledger)
      replaced.set(front.toLowerCase(), frontAddress)
      continue
    }
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

  // Hub assets of Balancer paths (sDAI on Gnosis): in no venue's token list, so deployed here.
  for (const venue of files.venues.venues.filter((entry) => entry.chain === chain && entry.protocol === 'balancer-v2')) {
    const hub = venue.params?.hubAsset
    if (typeof hub === 'string' && !replaced.has(hub.toLowerCase()))
      replaced.set(
        hub.toLowerCase(),
        await deployStandIn(instance, deployer, 'TestToken', ['Balancer hub asset', 'HUB', HUB_TOKEN.decimals, '1']),
      )
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
    if (venue.protocol === 'balancer-v2') await setUpBalancerPath(instance, address, venue, { swap, tokenAddress, tokenOn })
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
          address = await deployStandIn(instance, deployer, 'MessageTransmitterV2StandIn', [
            endpoint.domain ?? 0,
            token,
            TEST_CCTP_ATTESTER,
          ])
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

/** A stand-in price for a Balancer hub asset (sDAI): only the product of a path's two rates matters. */
const HUB_TOKEN = { priceUsdE18: 10n ** 18n, decimals: 18 }

/**
 * A Balancer venue's two pools on the Vault stand-in (test/chain/contracts/VenueStandIns.sol): its real pool ids,
 * each registered with the assets the real pool holds (`poolId`: the hub and the front the catalogue names in
 * `vaultAsset`; `hubPoolId`: the hub and tokens[0]), a stand-in token for the hub asset, and the rates of every step
 * at the oracle, so the two steps together pay the oracle rate of the venue's pair (less rounding).
 */
async function setUpBalancerPath(
  instance: AnvilInstance,
  vault: Address,
  venue: CatalogueFiles['venues']['venues'][number],
  lookup: { swap(real: string): Address; tokenAddress(symbol: string): Address; tokenOn(symbol: string): Token },
): Promise<void> {
  const deployer = instance.accounts[0]!
  const params = venue.params ?? {}
  const [outer, pooled] = venue.tokens
  const { poolId, hubPoolId, hubAsset, vaultAsset } = params
  if (outer === undefined || pooled === undefined) throw new Error(`${venue.id}: a Balancer venue joins two tokens`)
  if (typeof poolId !== 'string' || typeof hubPoolId !== 'string' || typeof hubAsset !== 'string' || typeof vaultAsset !== 'string')
    throw new Error(`${venue.id}: a Balancer venue needs poolId, hubPoolId, hubAsset and vaultAsset`)
  const hub = lookup.swap(hubAsset)
  const front = lookup.swap(vaultAsset)
  const register = (id: string, tokens: Address[]) =>
    writeContractAndWait(instance, deployer, {
      address: vault,
      abi: standInAbi('BalancerVaultStandIn'),
      functionName: 'registerPool',
      args: [id as Hex, tokens],
    })
  await register(poolId, [front, hub])
  await register(hubPoolId, [lookup.tokenAddress(outer), hub])
  const setRate = (tokenIn: Address, tokenOut: Address, numerator: bigint, denominator: bigint) =>
    writeContractAndWait(instance, deployer, {
      address: vault,
      abi: standInAbi('BalancerVaultStandIn'),
      functionName: 'setRate',
      args: [tokenIn, tokenOut, numerator, denominator],
    })
  for (const [asset, token] of [
    [lookup.tokenAddress(outer), lookup.tokenOn(outer)],
    [front, lookup.tokenOn(pooled)],
  ] as const) {
    await setRate(asset, hub, token.priceUsdE18 * pow10(HUB_TOKEN.decimals), HUB_TOKEN.priceUsdE18 * pow10(token.decimals))
    await setRate(hub, asset, HUB_TOKEN.priceUsdE18 * pow10(token.decimals), token.priceUsdE18 * pow10(HUB_TOKEN.decimals))
  }
  await mint(instance, hub, vault, RESERVE_UNITS * pow10(HUB_TOKEN.decimals))
}

/** Rewrites every address of `chain` in the files through the stand-in map. */
function patchFiles(files: CatalogueFiles, setup: ChainSetup): void {
  const swap = (real: Address): Address => setup.replaced.get(real.toLowerCase()) ?? real
  for (const token of files.tokens.tokens) if (isEvmTokenEntry(token) && token.chain === setup.chain) token.address = swap(token.address)
  for (const venue of files.venues.venues)
    if (venue.chain === setup.chain) {
      venue.contract = swap(venue.contract)
      // Addresses among a venue's parameters (a Balancer hub asset, a Monerium v1 front) point at their stand-ins too.
      for (const [name, value] of Object.entries(venue.params ?? {}))
        if (typeof value === 'string' && setup.replaced.has(value.toLowerCase())) venue.params![name] = swap(value as Address)
    }
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
