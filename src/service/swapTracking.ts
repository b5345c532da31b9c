import type { Hex } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'

/**
 * What a hinted source transaction came to, as the tracker's `hintSourceTransaction` (src/lifecycle) answers: checked,
 * with the records as they are now (`isFinal` false: mined, not yet at the confirmation depth), or refused with a
 * stable reason and a sentence.
 */
export type HintSourceTransactionReturnType =
  | { ok: true; isFinal: boolean }
  | {
      ok: false
      /** `rpc_unavailable`: the chain's RPC failed or timed out while checking; `busy`: too many hints were being checked to check this one. Nothing was decided. */
      reason: 'invalid_hash' | 'unknown_ref' | 'chain_not_tracked' | 'transaction_not_found' | 'not_this_swap' | 'rpc_unavailable' | 'busy'
      detail: string
    }

/**
 * What the status endpoints and `track_swap` need of the tracker beyond its records in the store (store.lifecycle):
 * which chains it follows (those with an RPC), and the hint of a source transaction. The tracker (src/lifecycle)
 * provides it; absent, every swap reads as untracked and a hint is 503 tracking_unavailable.
 */
export type SwapTracking = {
  /** Whether a tracker follows swaps whose source is on `chain` (an RPC is configured for it). */
  follows(chain: ChainCode): boolean
  /** Checks that `txHash`'s receipt holds the router's `Swapped` event for `ref`, and records it as the source. */
  hintSourceTransaction(ref: string, txHash: Hex): Promise<HintSourceTransactionReturnType>
}

/** What `trackingOf` reads of a tracker (src/lifecycle/createTracker.ts's Tracker fits). */
export type TrackerLike = {
  /** The chains it follows: those with an RPC. */
  chains: readonly ChainCode[]
  hintSourceTransaction(ref: string, txHash: string): Promise<HintSourceTransactionReturnType>
}

/**
 * The tracking the status endpoints read, over a tracker: a replica that does not poll (SWAPEAZI_TRACKER off, the
 * tracker run apart by `swapeazi track`) still builds one where RPCs are configured, so its status says the swap is
 * tracked and its hints are checked.
 */
export function trackingOf(tracker: TrackerLike): SwapTracking {
  return {
    follows: (chain) => tracker.chains.includes(chain),
    hintSourceTransaction: (ref, txHash) => tracker.hintSourceTransaction(ref, txHash),
  }
}

/**
 * The tracking of a tracker built after the app (serve builds it once it listens): until then, and where none is
 * built (no RPC), nothing is followed and a hint answers chain_not_tracked.
 */
export function deferredTracking(current: () => TrackerLike | undefined): SwapTracking {
  return {
    follows: (chain) => current()?.chains.includes(chain) ?? false,
    hintSourceTransaction: async (ref, txHash) =>
      current()?.hintSourceTransaction(ref, txHash) ?? {
        ok: false,
        reason: 'chain_not_tracked',
        detail: 'no tracker runs on this service yet',
      },
  }
}
