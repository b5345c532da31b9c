// Runs a built route on the anvil chains of `deployCatalogueOnChains` and relays its bridge message to the
// destination chain the way each bridge's own executor would.
import { type Address, erc20Abi, getAddress, type Hex, hexToBigInt, type TransactionReceipt } from 'viem'
import { findRoutes, isEvmToken, type PricedRoute, sizeRoute, type Token } from '../../src/engine/index.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { swapEaziExecutorAbi } from '../../src/contracts/routerArtifact.ts'
import type { BuildRouteTransactionReturnType } from '../../src/tx/buildRouteTransaction.ts'
import { type RouterDeployment, routerDeployment } from '../../src/tx/routerDeployment.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { attestCctpMessage, cctpMessageFromDepositForBurn, type DepositForBurnLog } from './cctpMessage.ts'
import type { CatalogueOnChains, ChainSetup } from './deployCatalogue.ts'
import { standInAbi, standInEvents } from './standIns.ts'
import { builtRoute } from '../support/builtRoute.ts'

export const SLIPPAGE_E18 = 5n * 10n ** 15n

export function setupOf(world: CatalogueOnChains, chain: ChainCode): ChainSetup {
  const setup = world.chains.get(chain)
  if (!setup) throw new Error(`chain ${chain} was not deployed`)
  return setup
}

/** A router of the operator's own on the chains a world does not run (never the inert default, whose swaps are refused). */
const ELSEWHERE = routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e')

/**
 * The service's routerOn for a world: the router deployed on each of its chains, and on the chains it does not run a
 * router of the operator's own elsewhere, as a configuration naming a router everywhere gives.
 */
export function routerOnWorld(world: CatalogueOnChains): (chain: ChainCode) => RouterDeployment {
  return (chain) => world.chains.get(chain)?.router ?? ELSEWHERE
}

export function tokenOf(world: CatalogueOnChains, key: string): Token {
  const token = world.catalogue.tokens.get(key)
  if (!token || !isEvmToken(token)) throw new Error(`token ${key} not in the catalogue`)
  return token
}

export async function balanceOf(instance: AnvilInstance, token: Token | Address, owner: Address): Promise<bigint> {
  const address = typeof token === 'string' ? token : token.address
  return instance.publicClient.readContract({ address, abi: erc20Abi, functionName: 'balanceOf', args: [owner] })
}

export type PlannedSwap = {
  priced: PricedRoute
  build: BuildRouteTransactionReturnType
  toAmount: bigint
  toAmountMin: bigint
  sender: AnvilInstance['accounts'][number]
  recipient: Address
}

/** Who signs, who receives and the swap reference, when a test names its own (batch legs do). */
export type PlanSwapOptions = { sender?: AnvilInstance['accounts'][number]; recipient?: Address; ref?: Hex }

/**
 * Finds the viable route whose id satisfies `pick` and builds its transaction for `units` whole input tokens, signed
 * by the source chain's account 2 for account 3 unless `options` names others.
 */
export async function planSwap(
  world: CatalogueOnChains,
  fromKey: string,
  toKey: string,
  units: bigint,
  pick: (routeId: string) => boolean,
  options: PlanSwapOptions = {},
): Promise<PlannedSwap> {
  const from = tokenOf(world, fromKey)
  const to = tokenOf(world, toKey)
  const amountIn = units * 10n ** BigInt(from.decimals)
  const found = findRoutes(world.catalogue, { from, to, amountIn, slippageE18: SLIPPAGE_E18 })
  if (found.kind !== 'routes') throw new Error(`${fromKey} → ${toKey}: ${found.kind}`)
  const priced = found.viable.find((route) => pick(route.route.id))
  if (!priced) throw new Error(`${fromKey} → ${toKey}: no viable route matches; viable: ${found.viable.map((r) => r.route.id).join(', ')}`)
  const source = setupOf(world, from.chain)
  const block = await source.instance.publicClient.getBlock()
  const sender = options.sender ?? source.instance.accounts[2]!
  const recipient = options.recipient ?? source.instance.accounts[3]!.address
  const build = builtRoute({
    catalogue: world.catalogue,
    routerOn: (chain) => setupOf(world, chain).router,
    sized: sizeRoute(world.catalogue, priced.route, amountIn, found.amounts.toAmount)!,
    amounts: found.amounts,
    slippageE18: SLIPPAGE_E18,
    sender: sender.address,
    recipient,
    ref: options.ref ?? '0x7377705f3031484b5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a0000',
    nowSec: Number(block.timestamp),
  })
  return { priced, build, toAmount: found.amounts.toAmount, toAmountMin: found.amounts.toAmountMin, sender, recipient }
}

/** Mints the input to the sender, sends the approval the builder returned, then the swap transaction. */
export async function executeSwap(world: CatalogueOnChains, plan: PlannedSwap): Promise<TransactionReceipt> {
  const source = setupOf(world, plan.priced.route.from.chain)
  const { instance } = source
  await writeContractAndWait(instance, instance.accounts[0]!, {
    address: plan.priced.route.from.address,
    abi: standInAbi('TestToken'),
    functionName: 'mint',
    args: [plan.sender.address, plan.build.order.amountIn],
  })
  const wallet = instance.walletClient(plan.sender)
  const send = async (request: { to: Address; data: Hex; value: Hex; gas: Hex }): Promise<TransactionReceipt> => {
    const hash = await wallet.sendTransaction({
      to: request.to,
      data: request.data,
      value: hexToBigInt(request.value),
      gas: hexToBigInt(request.gas),
    })
    return instance.publicClient.waitForTransactionReceipt({ hash })
  }
  const approval = await send(plan.build.approvalTransactionRequest)
  if (approval.status !== 'success') throw new Error('approval reverted')
  return send(plan.build.transactionRequest)
}

/** Delivers a source receipt's bridge deposit on the destination chain, as the bridge's relayer or executor would. */
export async function relay(world: CatalogueOnChains, plan: PlannedSwap, receipt: TransactionReceipt): Promise<TransactionReceipt> {
  const lane = plan.priced.route.bridge
  if (!lane) throw new Error('nothing to relay on a same-chain route')
  const destination = setupOf(world, lane.to.chain)
  const relayer = destination.instance.accounts[5]!
  const deliveredBy = lane.deliveredBy as Address
  switch (lane.bridge.protocol) {
    case 'cctp-v2': {
      const [log] = standInEvents('TokenMessengerV2StandIn', receipt.logs, { eventName: 'DepositForBurn' })
      if (!log) throw new Error('no DepositForBurn')
      const args = log.args as DepositForBurnLog['args']
      // Circle keeps the most the burn allows: the delivery the quote promised.
      const message = cctpMessageFromDepositForBurn(
        { address: log.address, args, transactionHash: receipt.transactionHash, logIndex: log.logIndex },
        {
          sourceDomain: endpointDomain(world, lane.bridge.id, lane.from.chain),
          feeExecuted: args.maxFee,
        },
      )
      // Signed by the test attester, whom the stand-in transmitter trusts as Circle's trusts its own.
      const attestation = await attestCctpMessage(message)
      if (args.hookData !== '0x')
        return writeContractAndWait(destination.instance, relayer, {
          address: destination.router.executor,
          abi: swapEaziExecutorAbi as never,
          functionName: 'relayCctp',
          args: [deliveredBy, message, attestation],
        })
      return writeContractAndWait(destination.instance, relayer, {
        address: deliveredBy,
        abi: standInAbi('MessageTransmitterV2StandIn'),
        functionName: 'receiveMessage',
        args: [message, attestation],
      })
    }
    case 'across': {
      const [log] = standInEvents('SpokePoolStandIn', receipt.logs, { eventName: 'FundsDeposited' })
      if (!log) throw new Error('no FundsDeposited')
      const outputToken = getAddress(`0x${(log.args.outputToken as Hex).slice(26)}`)
      const recipient = getAddress(`0x${(log.args.recipient as Hex).slice(26)}`)
      const outputAmount = log.args.outputAmount as bigint
      await writeContractAndWait(destination.instance, destination.instance.accounts[0]!, {
        address: outputToken,
        abi: standInAbi('TestToken'),
        functionName: 'mint',
        args: [relayer.address, outputAmount],
      })
      await writeContractAndWait(destination.instance, relayer, {
        address: outputToken,
        abi: erc20Abi,
        functionName: 'approve',
        args: [deliveredBy, outputAmount],
      })
      return writeContractAndWait(destination.instance, relayer, {
        address: deliveredBy,
        abi: standInAbi('SpokePoolStandIn'),
        functionName: 'fillRelay',
        args: [outputToken, outputAmount, recipient, log.args.message as Hex],
      })
    }
    default: {
      const [sent] = standInEvents('StargateOftStandIn', receipt.logs, { eventName: 'SendRecorded' })
      const [oft] = standInEvents('StargateOftStandIn', receipt.logs, { eventName: 'OFTSent' })
      if (!sent || !oft) throw new Error('no OFT send')
      const param = sent.args.sendParam as { to: Hex; composeMsg: Hex }
      const received = oft.args.amountReceivedLD as bigint
      // LayerZero credits the shared-decimals amount in the destination token's own decimals.
      const amountLD = (received * 10n ** BigInt(lane.to.decimals)) / 10n ** BigInt(lane.from.decimals)
      return writeContractAndWait(destination.instance, relayer, {
        address: deliveredBy,
        abi: standInAbi('LayerZeroEndpointStandIn'),
        functionName: 'deliver',
        args: [
          lane.destinationContract as Address,
          lane.to.address,
          getAddress(`0x${param.to.slice(26)}`),
          amountLD,
          lane.destinationDomain ?? 0,
          `0x${plan.build.order.recipient.slice(2).padStart(64, '0')}`,
          param.composeMsg,
        ],
      })
    }
  }
}

function endpointDomain(world: CatalogueOnChains, bridgeId: string, chain: ChainCode): number {
  const bridge = world.files.bridges.bridges.find((entry) => entry.id === bridgeId)
  const domain = bridge?.endpoints.find((endpoint) => endpoint.chain === chain)?.domain
  if (domain === undefined) throw new Error(`${bridgeId} has no domain on ${chain}`)
  return domain
}
