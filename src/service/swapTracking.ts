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
      /**
       * `rpc_unavailable`: the chain's RPC failed or timed out while checking; `busy`: too many hints were being checked
       * to check this one; `not_started`: the tracker is still being built. Nothing was decided.
       */
      reason:
        | 'invalid_hash'
        | 'unknown_ref'
        | 'chain_not_tracked'
        | 'transaction_not_found'
        | 'not_this_swap'
        | 'rpc_unavailable'
        | 'busy'
        | 'not_started'
      detail: string
    }

/**
 * What the status endpoints and `track_swap` need of the tracker beyond its records in the store (store.lifecycle):
 * which chains it follows (those with an RPC), and the hint of a source transaction. The tracker (src/lifecycle)
 * provides it; absent, every swap reads as untracked and a hint is 503 tracking_unavailable.
 */
export type SwapTracking = {
  /**
   * Whether this service's tracker follows `chain` (an RPC is configured for it here), whether or not it is built yet
   * or polls (SWAPEAZI_TRACKER=off leaves the polling to `swapeazi track`).
   */
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

export type DeferredTrackingParameters = {
  /** The chains with an RPC in the configuration (SWAPEAZI_RPC_URLS): the tracker built from it follows each. */
  chains: readonly ChainCode[]
  /** False for a chain whose RPC was found serving another chain (src/app/chainIdCheck.ts): it is not followed. */
  isUsable?: (chain: ChainCode) => boolean
  /** The tracker once it is built; undefined before. */
  current: () => TrackerLike | undefined
}

/**
 * The tracking of a tracker built after the app (serve builds it once it listens). Which chains are followed is
 * answered from the configuration, not from whether the tracker exists yet: until it does, a swap on a configured
 * chain is still one its tracker will follow, and a hint answers `not_started` (ask again in a few seconds).
 */
export function deferredTracking(parameters: DeferredTrackingParameters): SwapTracking {
  const { chains, isUsable = () => true, current } = parameters
  return {
    follows: (chain) => chains.includes(chain) && isUsable(chain),
    hintSourceTransaction: async (ref, txHash) =>
      current()?.hintSourceTransaction(ref, txHash) ?? {
        ok: false,
        reason: 'not_started',
        detail: 'the tracker of this service is still starting',
      },
  }
}
