// Builds swaps as the service does (the same buildRoute paid and keyed swaps end in, recorded as a keyed swap), has a
// test wallet sign and broadcast exactly the answered transactions, and runs trackers over the anvil chains.
import { type Address, type TransactionReceipt, erc20Abi } from 'viem'
import pino from 'pino'
import type { Catalogue } from '../../src/engine/index.ts'
import { createTracker, type CreateTrackerParameters, type Tracker } from '../../src/lifecycle/createTracker.ts'
import type { TrackerClient } from '../../src/lifecycle/trackerContext.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { QuoteParams } from '../../src/schemas/quote.ts'
import type { SwapResult } from '../../src/schemas/swap.ts'
import { buildRoute, type BuildSwapTransactionReturnType } from '../../src/service/buildSwapTransaction.ts'
import { formatSwapResult } from '../../src/service/formatSwapResult.ts'
import { routeQuoteRequest } from '../../src/service/getQuote.ts'
import { swapRecordOf } from '../../src/service/swapRecordOf.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import type { Store } from '../../src/store/createStore.ts'
import type { AnvilInstance } from '../chain/anvil.ts'
import type { CatalogueOnChains } from '../chain/deployCatalogue.ts'
import { type PlannedSwap, routerOnWorld, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { mintTo, sendRequest } from '../chain/safetyHelpers.ts'
import { testDeps } from '../http/testApp.ts'

/** Blocks a block waits before the trackers in these tests treat it as final. */
export const DEPTH = 2

export type Built = {
  result: SwapResult
  built: BuildSwapTransactionReturnType
  /** The route and build as test/chain/routeExecution.ts's relay() takes them. */
  plan: PlannedSwap
  sender: AnvilInstance['accounts'][number]
}

/**
 * Quotes `whole` units of `fromKey` to `toKey` as the service does, builds the viable route `pick` names through the
 * service's buildRoute (the route a quoteId carries is built the same way), records it as a keyed swap and returns
 * the SwapResult the service answers.
 */
export async function buildRecorded(
  world: CatalogueOnChains,
  store: Store,
  swap: { from: string; to: string; whole: string; pick: (routeId: string) => boolean; sender: number; recipient: Address },
): Promise<Built> {
  const [fromChain, fromToken] = swap.from.split(':') as [ChainCode, string]
  const [toChain, toToken] = swap.to.split(':') as [ChainCode, string]
  const source = setupOf(world, fromChain)
  const block = await source.instance.publicClient.getBlock()
  const sender = source.instance.accounts[swap.sender]!
  const deps = testDeps({
    catalogue: world.catalogue,
    files: world.files,
    routerOn: routerOnWorld(world),
    clock: () => Number(block.timestamp) * 1000,
    store,
  })
  const params = QuoteParams.parse({
    fromChain,
    toChain,
    fromToken,
    toToken,
    fromAmount: swap.whole,
    fromAddress: sender.address,
    toAddress: swap.recipient,
    slippage: 0.005,
  })
  const routed = routeQuoteRequest(deps, params)
  if ('kind' in routed) throw new Error(`${swap.from} → ${swap.to}: ${routed.kind}`)
  const priced = routed.found.viable.find((route) => swap.pick(route.route.id))
  if (priced === undefined)
    throw new Error(`${swap.from} → ${swap.to}: no viable route matches; ${routed.found.viable.map((route) => route.route.id).join(', ')}`)
  const built = buildRoute(deps, { request: routed.request, amounts: routed.found.amounts, priced, swapEaziRef: newSwapRef(deps.clock()) })
  await store.recordKeyedSwap({ ...swapRecordOf(built, 'api_key', new Date(deps.clock())), keyId: 'key_tracker_test' })
  return {
    result: formatSwapResult(built, null),
    built,
    plan: {
      priced,
      build: built.build,
      toAmount: routed.found.amounts.toAmount,
      toAmountMin: routed.found.amounts.toAmountMin,
      sender,
      recipient: swap.recipient,
    },
    sender,
  }
}

/** The sender gets the input, then signs and broadcasts the answered approval (unless told not to) and transaction. */
export async function broadcast(world: CatalogueOnChains, built: Built, options: { approve?: boolean } = {}): Promise<TransactionReceipt> {
  const chain = built.result.fromChain as ChainCode
  const { instance } = setupOf(world, chain)
  const token = tokenOf(world, `${chain}:${built.result.fromToken}`)
  const amount = BigInt(built.result.approval.amount)
  await mintTo(instance, token.address, built.sender.address, amount)
  if (options.approve !== false) {
    const approval = await sendRequest(instance, built.sender, built.result.approval.transactionRequest as never)
    if (approval.status !== 'success') throw new Error('approval reverted')
  }
  return sendRequest(instance, built.sender, built.result.transactionRequest as never)
}

/** Mines `blocks` empty blocks on `chain`: what a block needs to become final at DEPTH. */
export async function mine(world: CatalogueOnChains, chain: ChainCode, blocks = DEPTH): Promise<void> {
  await setupOf(world, chain).instance.testClient.mine({ blocks })
}

/** The recipient's balance of a token on a chain. */
export function balance(world: CatalogueOnChains, chain: ChainCode, token: Address, owner: Address): Promise<bigint> {
  return setupOf(world, chain).instance.publicClient.readContract({
    address: token,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  })
}

/** The `fromBlock` of every eth_getLogs a client was asked, by the router's events (what a restart resumed from). */
export type RecordingClient = TrackerClient & { fromBlocks: bigint[] }

export function recordingClient(client: TrackerClient): RecordingClient {
  const fromBlocks: bigint[] = []
  return Object.assign(Object.create(null) as object, {
    getBlockNumber: client.getBlockNumber.bind(client),
    getBlock: client.getBlock.bind(client),
    getTransactionReceipt: client.getTransactionReceipt.bind(client),
    getTransaction: client.getTransaction.bind(client),
    getTransactionCount: client.getTransactionCount.bind(client),
    call: client.call.bind(client),
    getLogs: ((parameters: Parameters<TrackerClient['getLogs']>[0]) => {
      if (
        parameters !== undefined &&
        'event' in parameters &&
        parameters.event?.name === 'Swapped' &&
        typeof parameters.fromBlock === 'bigint'
      )
        fromBlocks.push(parameters.fromBlock)
      return client.getLogs(parameters as never)
    }) as TrackerClient['getLogs'],
    fromBlocks,
  }) as RecordingClient
}

/** A tracker over the world's chains and `store`, polled by the test (never started) unless it starts it. */
export function trackerOn(
  world: CatalogueOnChains,
  store: Store,
  options: Omit<Partial<CreateTrackerParameters>, 'clients'> & { clients?: Partial<Record<ChainCode, TrackerClient | undefined>> } = {},
): Tracker {
  const clients: Partial<Record<ChainCode, TrackerClient>> = {}
  for (const [chain, setup] of world.chains) clients[chain] = setup.instance.publicClient as unknown as TrackerClient
  // A chain given as undefined is one this tracker has no RPC for.
  for (const [chain, client] of Object.entries(options.clients ?? {}) as [ChainCode, TrackerClient | undefined][])
    if (client === undefined) delete clients[chain]
    else clients[chain] = client
  return createTracker({
    store,
    catalogue: (): Catalogue => world.catalogue,
    routerOn: routerOnWorld(world),
    clock: Date.now,
    log: pino({ level: 'silent' }),
    confirmations: { BAS: DEPTH, POL: DEPTH },
    pollMs: 100,
    // One name for every tracker a test makes on a store: each is the same replica, restarted.
    holder: 'tracker-test',
    ...options,
    clients,
  })
}
