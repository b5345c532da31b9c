import { type Address, type Hex, hexToBigInt } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { Simulation, Simulators } from '../tx/simulateTransaction.ts'
import type { BuildSwapTransactionReturnType } from './buildSwapTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/** Simulations an unpaid caller (one IP) may cause a minute: the 402 path costs nothing, so it must not flood the RPC. */
export const SIMULATIONS_PER_CALLER_MINUTE = 20
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
}

/** A built swap as the pre-flight takes it. */
export function swapTransactionOf(built: BuildSwapTransactionReturnType): PreflightTransaction {
  return {
    chain: built.quote.fromChain,
    transactionRequest: built.build.transactionRequest,
    approval: built.build.approval,
    label: `${built.quote.route.id} for at least ${built.quote.toAmountMin} ${built.quote.toToken}`,
  }
}

export type PreflightBuildParameters = {
  built: PreflightTransaction
  /** The normalised request (paidRequestKey): with the chain's last block read, the cache key. */
  requestKey: string
  /** An unpaid caller's IP subject: simulations it causes are limited per minute. */
  caller?: string
}

/**
 * Pre-flight (DESIGN 5, issue 17 item 7): with an RPC for the source chain, the built transaction is simulated
 * before any 402 is issued or keyed swap answered (`eth_call` with the sender given the input's balance and
 * allowance, simulateTransaction.ts). A revert is 422 `simulation_failed` with the decoded reason, and nothing is
 * charged. Outcomes are kept per block read and request; a simulation that cannot conclude (the token's layout not
 * found, the RPC down) lets the build through and is logged. Cross-chain routes simulate the source-chain leg.
 */
export async function preflightBuild(deps: ServiceDeps, parameters: PreflightBuildParameters): Promise<void> {
  const { built, requestKey, caller } = parameters
  const simulators = deps.simulators
  const { chain } = built
  const simulate = simulators?.[chain]
  if (simulators === undefined || simulate === undefined) return
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
    if (caller !== undefined) admitCaller(deps, state, caller)
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
    return
  }
  if (!outcome.ok)
    throw new ServiceError(
      'simulation_failed',
      `Not built, and nothing was charged: the transaction would revert on ${chain} at its current state (${outcome.reason}). The pools moved since the market was read; quote again, or try a smaller amount or a larger slippage.`,
      { chain, reason: outcome.reason },
    )
}

function admitCaller(deps: ServiceDeps, state: PreflightState, caller: string): void {
  const minute = Math.floor(deps.clock() / 60_000)
  const seen = state.callers.get(caller)
  const count = seen?.minute === minute ? seen.count + 1 : 1
  if (seen?.minute !== minute && state.callers.size > 10_000) state.callers.clear()
  state.callers.set(caller, { minute, count })
  if (count > SIMULATIONS_PER_CALLER_MINUTE) {
    const retryAfterSec = 60 - Math.floor((deps.clock() % 60_000) / 1000)
    throw new ServiceError(
      'rate_limited',
      `Too many unpaid swap requests from this address this minute (each is simulated on chain before the 402): at most ${SIMULATIONS_PER_CALLER_MINUTE}. Retry in ${retryAfterSec} s, or pay with the first 402's challenge.`,
      { limit: SIMULATIONS_PER_CALLER_MINUTE, policy: 'preflight', retryAfterSec },
    )
  }
}
