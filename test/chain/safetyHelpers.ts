// Shared checks of the chain tests: sending the builder's transaction requests as a wallet would, reading what the
// venue stand-ins recorded for each hop, and making sure our router and executor keep nothing.
import {
  type Address,
  BaseError,
  decodeErrorResult,
  decodeFunctionData,
  getAddress,
  type Hex,
  hexToBigInt,
  isHex,
  type Log,
  type TransactionReceipt,
} from 'viem'
import { expect } from 'vitest'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { isEvmToken, type SwapEdge } from '../../src/engine/index.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { balancerVaultAbi } from '../../src/tx/abis.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import type { CatalogueOnChains } from './deployCatalogue.ts'
import { balanceOf, SLIPPAGE_E18, setupOf } from './routeExecution.ts'
import { type StandInName, standInAbi, standInEvents } from './standIns.ts'

type Account = AnvilInstance['accounts'][number]
export type Request = { to: Address; data: Hex; value: Hex; gas?: Hex }

/** Sends a builder transaction request as a wallet would, with the gas limit it carries; the receipt may be reverted. */
export async function sendRequest(instance: AnvilInstance, account: Account, request: Request): Promise<TransactionReceipt> {
  const hash = await instance.walletClient(account).sendTransaction({
    to: request.to,
    data: request.data,
    value: hexToBigInt(request.value),
    ...(request.gas === undefined ? {} : { gas: hexToBigInt(request.gas) }),
  })
  return instance.publicClient.waitForTransactionReceipt({ hash })
}

/**
 * Sends a request without a gas limit, so viem estimates it first: a transaction that would revert throws before it
 * is sent, with the revert reason in the error message (for `rejects.toThrow(/reason/)`).
 */
export function sendEstimated(instance: AnvilInstance, account: Account, request: Request): Promise<TransactionReceipt> {
  const { gas: _gas, ...rest } = request
  return sendRequest(instance, account, rest)
}

/**
 * The router's custom error (name and arguments) that `request` from `account` reverts with, in the state and block
 * of `blockNumber` (default the latest): a wallet's estimate shows a custom error only as its selector.
 */
export async function routerErrorOf(
  instance: AnvilInstance,
  account: Account,
  request: Request,
  blockNumber?: bigint,
): Promise<{ errorName: string; args: readonly unknown[] | undefined }> {
  try {
    await instance.publicClient.call({
      account,
      to: request.to,
      data: request.data,
      value: hexToBigInt(request.value),
      ...(blockNumber === undefined ? {} : { blockNumber }),
    })
  } catch (error) {
    // The node's revert data rides on the JSON-RPC error viem wraps (`data`), whatever viem made of it above.
    const withData = error instanceof BaseError ? error.walk((cause) => isHex((cause as { data?: unknown }).data)) : undefined
    const data = (withData as { data?: unknown } | undefined)?.data
    if (!isHex(data)) throw error
    const { errorName, args } = decodeErrorResult({ abi: swapEaziRouterAbi, data })
    return { errorName, args }
  }
  throw new Error(`the call to ${request.to} did not revert`)
}

/** Unix seconds of the chain's latest block: the `nowSec` a build there uses. */
export async function latestTimestamp(instance: AnvilInstance): Promise<bigint> {
  return (await instance.publicClient.getBlock()).timestamp
}

/**
 * Moves time to `timestamp` on every chain of `world` alike: the next block of `sendingOn` is mined at exactly
 * `timestamp` (by whatever the test sends next there), and every other chain mines an empty block at it. A chain left
 * behind would see later builds' destination deadlines as far off; one ahead would see them expired.
 */
export async function moveTimeTo(world: CatalogueOnChains, timestamp: bigint, sendingOn?: ChainCode): Promise<void> {
  for (const [chain, setup] of world.chains) {
    await setup.instance.testClient.setNextBlockTimestamp({ timestamp })
    if (chain !== sendingOn) await setup.instance.testClient.mine({ blocks: 1 })
  }
}

/** Mints `amount` of a stand-in token (TestToken or ResetApprovalToken: both have an open `mint`) to `to`. */
export async function mintTo(instance: AnvilInstance, token: Address, to: Address, amount: bigint): Promise<void> {
  await writeContractAndWait(instance, instance.accounts[0]!, {
    address: token,
    abi: standInAbi('TestToken'),
    functionName: 'mint',
    args: [to, amount],
  })
}

/** Every token of `chain` held by the router or the executor: must be none after any transaction. */
export async function expectRouterEmpty(world: CatalogueOnChains, chain: ChainCode): Promise<void> {
  const setup = setupOf(world, chain)
  for (const token of world.catalogue.tokens.values()) {
    if (token.chain !== chain || !isEvmToken(token)) continue
    for (const holder of [setup.router.router, setup.router.executor])
      expect(await balanceOf(setup.instance, token, holder), `${token.key} held by ${holder}`).toBe(0n)
  }
}

/** The minimum output the builder writes into a hop's calldata: the step estimate less the slippage, rounded down. */
export const hopMinimum = (estimate: bigint): bigint => (estimate * (10n ** 18n - SLIPPAGE_E18)) / 10n ** 18n

/** What a venue stand-in recorded for one swap, whatever its protocol's event looks like. */
export type VenueHop = {
  /** Who paid the input (msg.sender, or Balancer's funds.sender). */
  payer: Address
  /** Who was paid the output. */
  recipient: Address
  tokenIn: Address
  tokenOut: Address
  amountIn: bigint
  minOut: bigint
  amountOut: bigint
}

type HopReader = { standIn: StandInName; event: string; read(args: Record<string, unknown>, edge: SwapEdge): VenueHop }

const curveLike = (standIn: StandInName): HopReader => ({
  standIn,
  event: 'ExchangeCalled',
  // Curve and PancakeSwap StableSwap pay msg.sender; the coins are indices into the pool's own coin list.
  read: (args, edge) => ({
    payer: args.sender as Address,
    recipient: args.sender as Address,
    tokenIn: edge.venue.tokens[Number(args.i)]!.address,
    tokenOut: edge.venue.tokens[Number(args.j)]!.address,
    amountIn: args.dx as bigint,
    minOut: args.min_dy as bigint,
    amountOut: args.dy as bigint,
  }),
})

const v3: HopReader = {
  standIn: 'UniswapV3RouterStandIn',
  event: 'ExactInputSingleCalled',
  read: (args) => {
    const params = args.params as { tokenIn: Address; tokenOut: Address; recipient: Address; amountIn: bigint; amountOutMinimum: bigint }
    expect(params.recipient, 'exactInputSingle recipient').toBe(args.paidTo)
    return {
      payer: args.sender as Address,
      recipient: args.paidTo as Address,
      tokenIn: params.tokenIn,
      tokenOut: params.tokenOut,
      amountIn: params.amountIn,
      minOut: params.amountOutMinimum,
      amountOut: args.amountOut as bigint,
    }
  },
}

const solidly: HopReader = {
  standIn: 'SolidlyRouterStandIn',
  event: 'SwapExactTokensForTokensCalled',
  read: (args) => {
    const routes = args.routes as readonly { from: Address; to: Address }[]
    const amounts = args.amounts as readonly bigint[]
    expect(routes, 'one Solidly hop per call').toHaveLength(1)
    return {
      payer: args.sender as Address,
      recipient: args.to as Address,
      tokenIn: routes[0]!.from,
      tokenOut: routes[0]!.to,
      amountIn: args.amountIn as bigint,
      minOut: args.amountOutMin as bigint,
      amountOut: amounts[amounts.length - 1]!,
    }
  },
}

const HOP_READERS: Record<string, HopReader> = {
  'uniswap-v3': v3,
  'pancakeswap-v3': v3,
  curve: curveLike('CurvePoolStandIn'),
  'curve-ng': curveLike('CurvePoolStandIn'),
  'pancakeswap-stable': curveLike('PancakeStableSwapStandIn'),
  aerodrome: solidly,
  velodrome: solidly,
  'balancer-v2': {
    standIn: 'BalancerVaultStandIn',
    event: 'BatchSwapCalled',
    // The Vault records the whole call: a batchSwap of one venue edge, the input first and the output last. The
    // Monerium token goes by its v1 front there (params.vaultAsset), the same ledger as the catalogue's v2 token.
    read: (args, edge) => {
      const { args: call } = decodeFunctionData({ abi: balancerVaultAbi, data: args.data as Hex })
      const [kind, swaps, assets, funds, limits] = call
      const deltas = args.assetDeltas as readonly bigint[]
      expect(kind, 'Balancer GIVEN_IN').toBe(0)
      expect(getAddress(funds.sender), 'Balancer funds.sender is the caller').toBe(getAddress(args.caller as Address))
      const front = edge.venue.params.vaultAsset
      const catalogueToken = (asset: Address): Address =>
        typeof front === 'string' && getAddress(asset) === getAddress(front) ? edge.venue.tokens[1]!.address : asset
      return {
        payer: funds.sender,
        recipient: funds.recipient,
        tokenIn: catalogueToken(assets[0]!),
        tokenOut: catalogueToken(assets.at(-1)!),
        amountIn: swaps[0]!.amount,
        minOut: -limits.at(-1)!,
        amountOut: -deltas.at(-1)!,
      }
    },
  },
  mento: {
    standIn: 'MentoBrokerStandIn',
    event: 'SwapInCalled',
    // The Broker pays msg.sender (the trader).
    read: (args) => ({
      payer: args.trader as Address,
      recipient: args.trader as Address,
      tokenIn: args.tokenIn as Address,
      tokenOut: args.tokenOut as Address,
      amountIn: args.amountIn as bigint,
      minOut: args.amountOutMin as bigint,
      amountOut: args.amountOut as bigint,
    }),
  },
}

/**
 * The stand-in events of `edges`, in order: hop k is the n-th event of its venue contract where n counts the earlier
 * hops on the same contract (two Mento hops go through one Broker, two Balancer hops through one Vault).
 */
export function venueHops(logs: readonly Log[], edges: readonly SwapEdge[]): VenueHop[] {
  const used = new Map<string, number>()
  return edges.map((edge) => {
    const reader = HOP_READERS[edge.venue.protocol]
    if (!reader) throw new Error(`no stand-in event reader for ${edge.venue.protocol}`)
    const address = getAddress(edge.venue.contract)
    const key = `${address}:${reader.event}`
    const index = used.get(key) ?? 0
    used.set(key, index + 1)
    const events = standInEvents(reader.standIn, logs, { address, eventName: reader.event })
    const event = events[index]
    if (!event) throw new Error(`${edge.venue.id}: expected a ${reader.event} event #${index + 1} from ${address}, found ${events.length}`)
    return reader.read(event.args, edge)
  })
}

/**
 * Checks each hop against the calldata the builder wrote: the venue was paid by and paid `executor`, in the edge's
 * tokens; the first hop spent `firstAmountIn` and each later hop exactly the previous hop's output (the executor's
 * balance, patched in on chain); each hop's minimum is its step estimate less the slippage.
 */
export function expectHops(
  hops: readonly VenueHop[],
  edges: readonly SwapEdge[],
  estimates: readonly bigint[],
  executor: Address,
  firstAmountIn: bigint,
): void {
  expect(hops).toHaveLength(edges.length)
  hops.forEach((hop, k) => {
    const edge = edges[k]!
    const at = `hop ${k} (${edge.venue.id})`
    expect(getAddress(hop.payer), `${at} payer`).toBe(getAddress(executor))
    expect(getAddress(hop.recipient), `${at} recipient`).toBe(getAddress(executor))
    expect(getAddress(hop.tokenIn), `${at} tokenIn`).toBe(getAddress(edge.from.address))
    expect(getAddress(hop.tokenOut), `${at} tokenOut`).toBe(getAddress(edge.to.address))
    expect(hop.amountIn, `${at} amountIn`).toBe(k === 0 ? firstAmountIn : hops[k - 1]!.amountOut)
    expect(hop.minOut, `${at} minimum`).toBe(hopMinimum(estimates[k]!))
    expect(hop.minOut > 0n, `${at} minimum is positive`).toBe(true)
    expect(hop.amountOut >= hop.minOut, `${at} output ${hop.amountOut} ≥ minimum ${hop.minOut}`).toBe(true)
  })
}
