import type { Hex } from 'viem'
import { ChainCode } from '../schemas/catalogue.ts'
import type { SwapStatusWire } from '../schemas/swapStatus.ts'
import { checkTrackedRef, type GetSwapStatusDeps, getSwapStatus, unknownRef } from './getSwapStatus.ts'
import { ServiceError } from './serviceError.ts'

/** When to ask again after 503 tracking_unavailable: an operator adds an RPC by configuration and a restart. */
export const TRACKING_RETRY_AFTER_SEC = 300

/** The source chain of a recorded swap or batch; undefined when nothing is recorded under `ref`. */
async function sourceChainOf(deps: GetSwapStatusDeps, ref: string): Promise<ChainCode | undefined> {
  const recorded = ref.startsWith('swp_') ? await deps.store.getSwap(ref) : await deps.store.disbursements.getDisbursement(ref)
  return recorded === undefined ? undefined : ChainCode.parse(recorded.fromChain)
}

/** When to ask again after the source chain's RPC failed during the check: a short outage or a rate limit. */
export const RPC_RETRY_AFTER_SEC = 30
/** When to ask again after the hint checks in flight were at their cap (src/lifecycle/hintGate.ts). */
export const BUSY_RETRY_AFTER_SEC = 5

function trackingUnavailable(chain: ChainCode): ServiceError {
  return new ServiceError(
    'tracking_unavailable',
    `No RPC follows ${chain} on this service, so the transaction cannot be checked; the swap still runs on chain. Read it on the block explorer, or ask again later.`,
    { chain, retryAfterSec: TRACKING_RETRY_AFTER_SEC },
  )
}

/**
 * POST /api/v1/swap/{ref}/transaction: the optional hint of the source transaction (the tracker finds it anyway).
 * The tracker checks that its receipt holds the router's Swapped event for the reference; the answer is the status
 * after the check. 404 for an unknown reference, 422 transaction_mismatch for a transaction that is not this swap's,
 * 503 tracking_unavailable when no RPC reads the swap's source chain.
 */
export async function hintSourceTransaction(deps: GetSwapStatusDeps, parameters: { ref: string; txHash: Hex }): Promise<SwapStatusWire> {
  const { ref, txHash } = parameters
  checkTrackedRef(ref)
  const chain = await sourceChainOf(deps, ref)
  if (chain === undefined) throw unknownRef(ref)
  const { tracking } = deps
  if (tracking === undefined || !tracking.follows(chain)) throw trackingUnavailable(chain)
  const checked = await tracking.hintSourceTransaction(ref, txHash)
  if (!checked.ok) {
    if (checked.reason === 'unknown_ref') throw unknownRef(ref)
    if (checked.reason === 'chain_not_tracked') throw trackingUnavailable(chain)
    if (checked.reason === 'busy')
      throw new ServiceError(
        'tracking_unavailable',
        `Too many transaction hints are being checked on this service right now, so ${txHash} was not checked. Ask again in ${BUSY_RETRY_AFTER_SEC} s, or just read the status: the tracker finds the transaction without a hint.`,
        { chain, retryAfterSec: BUSY_RETRY_AFTER_SEC },
      )
    if (checked.reason === 'rpc_unavailable')
      throw new ServiceError(
        'tracking_unavailable',
        `The RPC this service reads ${chain} through failed or timed out while checking ${txHash}, so nothing was decided. Ask again in ${RPC_RETRY_AFTER_SEC} s, or just read the status: the tracker finds the transaction without a hint.`,
        { chain, retryAfterSec: RPC_RETRY_AFTER_SEC },
      )
    const notMined =
      checked.reason === 'transaction_not_found'
        ? ' If it was only just broadcast, send the hint again once it is mined, or just read the status.'
        : ''
    throw new ServiceError(
      'transaction_mismatch',
      `Transaction ${txHash} on ${chain} is not the source of ${ref}: ${checked.detail}.${notMined} Send the hash of the transaction that transactionRequest became, on ${chain}.`,
      { ref, txHash, chain, reason: checked.reason, field: 'txHash' },
    )
  }
  return getSwapStatus(deps, { ref })
}
