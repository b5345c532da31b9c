import type { Catalogue } from '../engine/index.ts'
import { SwapOutcome } from '../schemas/intelligence.ts'
import type { CompleteSwapReturnType } from '../store/createIntelStore.ts'
import type { Store } from '../store/createStore.ts'
import { swapObservation } from './swapObservation.ts'

const TrackedOutcome = SwapOutcome.refine((value) => value.status !== 'PENDING', {
  path: ['status'],
  message: 'PENDING is not an outcome; complete the swap once it is DONE, FAILED or NOT_FOUND',
})

/**
 * What a tracker calls once it knows how one of our built swaps ended (LI.FI-style status, DONE, FAILED or
 * NOT_FOUND): the swap becomes an observation of its corridor and leaves the pending list, in one transaction.
 * A PENDING transfer has not ended: report it again when it has. Throws a ZodError for an invalid outcome.
 */
export async function completeTrackedSwap(
  deps: { store: Pick<Store, 'intel'>; catalogue: Catalogue },
  ref: string,
  outcome: SwapOutcome,
): Promise<CompleteSwapReturnType> {
  const checked = TrackedOutcome.parse(outcome)
  return deps.store.intel.completeSwap(ref, (swap) => swapObservation(deps.catalogue, swap, checked))
}
