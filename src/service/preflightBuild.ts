import { type Address, encodeFunctionData, type Hex, hexToBigInt, numberToHex } from 'viem'
import { swapEaziExecutorAbi } from '../contracts/routerArtifact.ts'
import { formatAtomic } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { Simulation, Simulators } from '../tx/simulateTransaction.ts'
import type { BuildSwapTransactionReturnType } from './buildSwapTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/** Simulations an unpaid caller (one IP) may cause a minute: the 402 path costs nothing, so it must not flood the RPC. */
export const SIMULATIONS_PER_CALLER_MINUTE = 20
/**
 * Simulations one caller's payment-bearing requests may cause a minute. A payment's signature is checked before its
 * simulation, but signing costs nothing and is checked without the chain, so these are limited too, more loosely.
 */
export const PAID_SIMULATIONS_PER_CALLER_MINUTE = 120
/** Callers whose simulations are counted at once; past it, the least telling are forgotten (`makeRoomForCaller`). */
export const MAX_COUNTED_CALLERS = 10_000
/** Outcomes kept per block; a new block empties them. */
const CACHE_MAX_ENTRIES = 2048

type PreflightState = {
  block: Map<ChainCode, string>
  outcomes: Map<string, Simulation>
  callers: Map<string, { minute: number; count: number }>
}
const states = new WeakMap<object, PreflightState>()

function stateOf(simulators: Simulators): PreflightState {
  let state = states.get(simulators)
  if (state === undefined) {
    state = { block: new Map(), outcomes: new Map(), callers: new Map() }
    states.set(simulators, state)
  }
  return state
}

/** A built transaction as the pre-flight takes it: the chain, the call, and the token it pulls from the sender. */
export type PreflightTransaction = {
  chain: ChainCode
  transactionRequest: { from: Address; to: Address; data: Hex; value: Hex }
  approval: { token: Address; amount: bigint; spender: Address }
  /** What was built (the route and its minimum, or the batch): part of the cache key, and the log's. */
  label: string
  /**
   * A cross-chain route's destination leg: our executor's `runDestination` of the built order, called by the
   * executor itself on the destination chain holding the amount the bridge is expected to deliver.
   */
  destinations?: readonly DestinationLeg[]
}

/** A destination leg as the pre-flight takes it: the order's simulation, and how to name what arrives for it. */
export type DestinationLeg = PreflightTransaction & {
  tokenSymbol: string
  decimals: number
  /** A batch's recipient index, where the leg is one of several. */
  index?: number
}

/** A built swap as the pre-flight takes it: the source transaction and, after a bridge, the destination order. */
export function swapTransactionOf(built: BuildSwapTransactionReturnType, routerOn: ServiceDeps['routerOn']): PreflightTransaction {
  const label = `${built.quote.route.id} for at least ${built.quote.toAmountMin} ${built.quote.toToken}`
  const destination = destinationLegOf(built, routerOn, label)
  return {
    chain: built.quote.fromChain,
    transactionRequest: built.build.transactionRequest,
    approval: built.build.approval,
    label,
    ...(destination === undefined ? {} : { destinations: [destination] }),
  }
}

/**
 * A built route's destination leg, when it swaps on arrival: our executor's `runDestination` of the built order,
 * called by the executor on the destination chain holding what the bridge is expected to deliver.
 */
export function destinationLegOf(
  built: Pick<BuildSwapTransactionReturnType, 'build'>,
  routerOn: ServiceDeps['routerOn'],
  label: string,
  index?: number,
): DestinationLeg | undefined {
  const order = built.build.destinationOrder
  const lane = built.build.sized.route.bridge
  const bridged = built.build.sized.steps.find((step) => step.kind === 'bridge')?.amountOut
  if (order === undefined || lane === undefined || bridged === undefined) return undefined
  const executor = routerOn(lane.to.chain).executor
  return {
    chain: lane.to.chain,
    transactionRequest: {
      from: executor,
      to: executor,
      data: encodeFunctionData({ abi: swapEaziExecutorAbi, functionName: 'runDestination', args: [order] }),
      value: numberToHex(0n),
    },
    approval: { token: order.token, amount: bridged, spender: executor },
    label: `${label}: destination leg`,
    tokenSymbol: lane.to.symbol,
    decimals: lane.to.decimals,
    ...(index === undefined ? {} : { index }),
  }
}

export type PreflightBuildParameters = {
  built: PreflightTransaction
  /** The normalised request (paidRequestKey): with the chain's last block read, the cache key. */
  requestKey: string
  /** The caller's IP subject: simulations it causes are limited per minute. */
  caller?: string
  /** The request carries a payment whose signature was checked: its caller gets the looser limit. */
  isPaid?: boolean
}

/**
 * Pre-flight (DESIGN 5, issue 17 item 7): with an RPC for the source chain, the built transaction is simulated
 * before any 402 is issued or keyed swap answered (`eth_call` with the sender given the input's balance and
 * allowance, simulateTransaction.ts). A revert is 422 `simulation_failed` with the decoded reason, and nothing is
 * charged. Outcomes are kept per block read and request; a simulation that cannot conclude (the token's layout not
 * found, the RPC down) lets the build through and is logged. A route that swaps on arrival simulates its destination
 * leg too, where that chain has a simulator (`destinations`).
 */
export async function preflightBuild(deps: ServiceDeps, parameters: PreflightBuildParameters): Promise<void> {
  const { built } = parameters
  const source = await simulateOnce(deps, parameters, built)
  if (source !== undefined && !source.ok)
    throw new ServiceError(
      'simulation_failed',
      `Not built, and nothing was charged: the transaction would revert on ${built.chain} at its current state (${source.reason}). The pools moved since the market was read; quote again, or try a smaller amount or a larger slippage.`,
      { chain: built.chain, reason: source.reason },
    )
  for (const destination of built.destinations ?? []) {
    const leg = await simulateOnce(deps, parameters, destination)
    if (leg === undefined || leg.ok) continue
    const forRecipient = destination.index === undefined ? '' : ` for recipients[${destination.index}]`
    throw new ServiceError(
      'simulation_failed',
      `Not built, and nothing was charged: on ${destination.chain}, the destination swap${forRecipient} of the ${formatAtomic(destination.approval.amount, destination.decimals)} ${destination.tokenSymbol} the bridge is expected to deliver would not meet the minimum at the chain's current state (${leg.reason}), so the executor would deliver the bridged ${destination.tokenSymbol} instead. Quote again, or try a smaller amount or a larger slippage.`,
      {
        chain: destination.chain,
        reason: leg.reason,
        leg: 'destination',
        ...(destination.index === undefined ? {} : { field: `recipients[${destination.index}]` }),
      },
    )
  }
}

/**
 * One transaction's simulation on its chain, from the per-block cache or the RPC: undefined when the chain has no
 * simulator or the simulation could not conclude (logged; the build goes through).
 */
async function simulateOnce(
  deps: ServiceDeps,
  parameters: PreflightBuildParameters,
  built: PreflightTransaction,
): Promise<Exclude<Simulation, { ok: 'unknown' }> | undefined> {
  const { requestKey, caller } = parameters
  const simulators = deps.simulators
  const { chain } = built
  const simulate = simulators?.[chain]
  if (simulators === undefined || simulate === undefined) return undefined
  const state = stateOf(simulators)
  const block = deps.market?.status().chains.find((status) => status.chain === chain)?.block
  if (block !== undefined && state.block.get(chain) !== block) {
    state.block.set(chain, block)
    for (const key of state.outcomes.keys()) if (key.startsWith(`${chain}:`)) state.outcomes.delete(key)
  }
  // What was built, not only what was asked: a keyed swap builds its quote's route, and minimums move with the market.
  const key = `${chain}:${block}:${requestKey}:${built.label}`
  let outcome = block === undefined ? undefined : state.outcomes.get(key)
  if (outcome === undefined) {
    if (caller !== undefined) admitCaller(deps, state, caller, parameters.isPaid === true)
    const { transactionRequest: tx, approval } = built
    outcome = await simulate({
      from: tx.from,
      to: tx.to,
      data: tx.data,
      value: hexToBigInt(tx.value),
      input: { token: approval.token, amount: approval.amount, spender: approval.spender },
    })
    // An inconclusive simulation (an RPC blip) is not kept: the next request tries again.
    if (block !== undefined && outcome.ok !== 'unknown' && state.outcomes.size < CACHE_MAX_ENTRIES) state.outcomes.set(key, outcome)
  }
  if (outcome.ok === 'unknown') {
    deps.log.warn({ event: 'simulation_inconclusive', chain, why: outcome.why, route: built.label }, 'simulation_inconclusive')
    return undefined
  }
  return outcome
}

/**
 * Keeps the callers' counts bounded without forgetting the ones that matter: counts of past minutes go first; if
 * every caller counted is of this minute, the half with the fewest simulations (the oldest first among equals) is
 * forgotten, which gives each of them at most that many simulations again. Forgetting everyone at once would let one
 * client that cycles subjects reset every other caller's count.
 */
function makeRoomForCaller(callers: PreflightState['callers'], minute: number): void {
  if (callers.size < MAX_COUNTED_CALLERS) return
  for (const [subject, seen] of callers) if (seen.minute !== minute) callers.delete(subject)
  if (callers.size < MAX_COUNTED_CALLERS) return
  const fewestFirst = [...callers].sort(([, a], [, b]) => a.count - b.count)
  for (const [subject] of fewestFirst.slice(0, Math.ceil(fewestFirst.length / 2))) callers.delete(subject)
}

function admitCaller(deps: ServiceDeps, state: PreflightState, caller: string, isPaid: boolean): void {
  const minute = Math.floor(deps.clock() / 60_000)
  const subject = isPaid ? `paid:${caller}` : caller
  const limit = isPaid ? PAID_SIMULATIONS_PER_CALLER_MINUTE : SIMULATIONS_PER_CALLER_MINUTE
  const seen = state.callers.get(subject)
  const count = seen?.minute === minute ? seen.count + 1 : 1
  if (seen === undefined) makeRoomForCaller(state.callers, minute)
  state.callers.set(subject, { minute, count })
  if (count > limit) {
    const retryAfterSec = 60 - Math.floor((deps.clock() % 60_000) / 1000)
    throw new ServiceError(
      'rate_limited',
      isPaid
        ? `Too many paid or keyed swap requests from this ${caller.startsWith('key:') ? 'API key' : 'address'} this minute (each is simulated on chain before it is charged or recorded): at most ${limit}. Nothing was charged; retry in ${retryAfterSec} s${caller.startsWith('key:') ? '' : ' with the same payment'}.`
        : `Too many unpaid swap requests from this address this minute (each is simulated on chain before the 402): at most ${limit}. Retry in ${retryAfterSec} s, or pay with the first 402's challenge.`,
      { limit, policy: isPaid ? 'preflight-paid' : 'preflight', retryAfterSec },
    )
  }
}
