import type { PricedRoute } from './route.ts'
import { swapOut } from './swapOut.ts'
import type { SwapEdge } from './types.ts'

/** A pool as a batch's legs fill it: the venue, and the token they put in (on its chain). */
const inflowKey = (venueId: string, from: { chain: string; address: string }): string =>
  `${venueId}|${from.chain}|${from.address.toLowerCase()}`

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

  /** `swapOut` after the inflows so far (simulateRoute's `swapAt`); 0 once the pool has nothing left to give. */
  readonly swapAt = (edge: SwapEdge, amountIn: bigint): bigint => {
    const before = this.#entered.get(inflowKey(edge.venue.id, edge.from))?.amount ?? 0n
    if (before === 0n) return swapOut(edge, amountIn)
    const out = swapOut(edge, before + amountIn) - swapOut(edge, before)
    return out > 0n ? out : 0n
  }

  /** Records a built leg's swaps (`priced` as sized): what each put into its pool. */
  add(index: number, priced: PricedRoute): void {
    for (const step of priced.steps) {
      if (step.kind !== 'swap') continue
      const key = inflowKey(step.id, step.from)
      const entered = this.#entered.get(key)
      if (entered === undefined) this.#entered.set(key, { amount: step.amountIn, by: [index] })
      else {
        entered.amount += step.amountIn
        entered.by.push(index)
      }
    }
  }

  /** The legs before whose swaps put something into a pool this route swaps in: the ones it shares a pool with. */
  sharedWith(edges: readonly SwapEdge[]): { venue: string; by: readonly number[] }[] {
    return edges.flatMap((edge) => {
      const entered = this.#entered.get(inflowKey(edge.venue.id, edge.from))
      return entered === undefined ? [] : [{ venue: edge.venue.name, by: entered.by }]
    })
  }
}
