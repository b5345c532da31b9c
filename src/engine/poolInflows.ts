import type { PricedRoute } from './route.ts'
import { swapOut } from './swapOut.ts'
import type { BridgeLane, SwapEdge } from './types.ts'

/** A pool as a batch's legs fill it: the venue, and the token they put in (on its chain). */
const inflowKey = (venueId: string, from: { chain: string; address: string }): string =>
  `${venueId}|${from.chain}|${from.address.toLowerCase()}`

/** A bridge lane as a batch's legs deposit on it: the bridge, its chains and the token it carries. */
const laneKey = (lane: BridgeLane): string => `${lane.bridge.id}|${lane.from.chain}>${lane.to.chain}|${lane.from.address.toLowerCase()}`

/** A leg whose deposit, with the deposits of the legs before it on the same lane, is more than the lane carries. */
export type LaneOverdrawn = { lane: BridgeLane; instantAmountIn: bigint; before: bigint; amountIn: bigint; by: readonly number[] }

/**
 * What the legs of one transaction that ran before put into each pool, so a later leg is priced on the pools it will
 * meet: the router runs a batch's orders in order (`executeBatch`), each swap on the state the one before left.
 *
 * A leg's swap gives the pool's output for everything that entered it from the same token so far, less its output
 * for what entered before. That is exact for a pool whose output depends only on what went in (the depth model, a
 * quote ladder) and less than the pool gives where its fee stays in the pool (stableswap, solidly), so a later leg is
 * never promised more than the chain will pay it. Inflows of another token into the same pool are counted as if
 * they had drawn on this leg's output token too, which only makes the later leg's price worse.
 */
export class PoolInflows {
  readonly #entered = new Map<string, { amount: bigint; by: number[] }>()
  readonly #deposited = new Map<string, { amount: bigint; by: number[] }>()

  /** `swapOut` after the inflows so far (simulateRoute's `swapAt`); 0 once the pool has nothing left to give. */
  readonly swapAt = (edge: SwapEdge, amountIn: bigint): bigint => {
    const before = this.#entered.get(inflowKey(edge.venue.id, edge.from))?.amount ?? 0n
    if (before === 0n) return swapOut(edge, amountIn)
    const out = swapOut(edge, before + amountIn) - swapOut(edge, before)
    return out > 0n ? out : 0n
  }

  /** Records a built leg's swaps and deposit (`priced` as sized): what each put into its pool or onto its lane. */
  add(index: number, priced: PricedRoute): void {
    for (const step of priced.steps) {
      if (step.kind === 'swap') addTo(this.#entered, inflowKey(step.id, step.from), step.amountIn, index)
      else if (priced.route.bridge !== undefined) addTo(this.#deposited, laneKey(priced.route.bridge), step.amountIn, index)
    }
  }

  /**
   * What a lane's relayers fill at once (an Across lane's `maxDepositInstant`, read live: `instantAmountIn`) is one
   * balance every deposit on it draws on: the legs before this one in the batch take their deposits from it first.
   * Undefined when this leg's deposit (`priced` as sized) still fits, or its lane has no such balance. Every other
   * limit is per deposit (the bridge's USD range, CCTP's burn limit per message, Across's `maxDeposit`, the largest
   * size its fees were read at) and checked on each leg alone.
   */
  overdrawnLane(priced: PricedRoute): LaneOverdrawn | undefined {
    const lane = priced.route.bridge
    const amountIn = priced.steps.find((step) => step.kind === 'bridge')?.amountIn
    if (lane?.instantAmountIn === undefined || amountIn === undefined) return undefined
    const deposited = this.#deposited.get(laneKey(lane))
    if (deposited === undefined || deposited.amount + amountIn <= lane.instantAmountIn) return undefined
    return { lane, instantAmountIn: lane.instantAmountIn, before: deposited.amount, amountIn, by: deposited.by }
  }

  /** The legs before whose swaps put something into a pool this route swaps in: the ones it shares a pool with. */
  sharedWith(edges: readonly SwapEdge[]): { venue: string; by: readonly number[] }[] {
    return edges.flatMap((edge) => {
      const entered = this.#entered.get(inflowKey(edge.venue.id, edge.from))
      return entered === undefined ? [] : [{ venue: edge.venue.name, by: entered.by }]
    })
  }
}

function addTo(totals: Map<string, { amount: bigint; by: number[] }>, key: string, amount: bigint, index: number): void {
  const total = totals.get(key)
  if (total === undefined) totals.set(key, { amount, by: [index] })
  else {
    total.amount += amount
    total.by.push(index)
  }
}
