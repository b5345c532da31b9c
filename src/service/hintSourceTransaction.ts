import type { Hex } from 'viem'
import { ChainCode } from '../schemas/catalogue.ts'
import type { SwapStatusWire } from '../schemas/swapStatus.ts'
import { canonicalTrackedRef, type GetSwapStatusDeps, getSwapStatus, unknownRef } from './getSwapStatus.ts'
import { ServiceError } from './serviceError.ts'

/** The source chain of a recorded swap or batch; undefined when nothing is recorded under `ref`. */
async function sourceChainOf(deps: GetSwapStatusDeps, ref: string): Promise<ChainCode | undefined> {
  const recorded = ref.startsWith('swp_') ? await deps.store.getSwap(ref) : await deps.store.disbursements.getDisbursement(ref)
  return recorded === undefined ? undefined : ChainCode.parse(recorded.fromChain)
}

/** When to ask again after the source chain's RPC failed during the check: a short outage or a rate limit. */
export const RPC_RETRY_AFTER_SEC = 30
/** When to ask again after the hint checks in flight were at their cap (src/lifecycle/hintGate.ts). */
export const BUSY_RETRY_AFTER_SEC = 5
/** When to ask again while the service's tracker is still being built (its first moments after it listens). */
export const STARTING_RETRY_AFTER_SEC = 5

/**
 * 422 chain_not_tracked: this service reads no RPC of the swap's source chain, so no hint can be checked here, and
 * asking again does not change that (only the operator's configuration does): no Retry-After.
 */
function chainNotTracked(chain: ChainCode, txHash: Hex, doNotSign?: string): ServiceError {
  const cannot = `This service reads no RPC of ${chain}, so it cannot check ${txHash}, and sending the hint again here will not change that.`
  return new ServiceError(
    'chain_not_tracked',
    doNotSign === undefined
      ? `${cannot} The swap runs on chain all the same: read the transaction on a ${chain} block explorer. If a \`swapeazi track\` process with ${chain}'s RPC runs on this service's store, it finds the transaction without a hint and the status updates.`
      : `${cannot} And this swap could never run: ${doNotSign.replace(/^Do not sign these transactions: /, '')}`,
    { chain, txHash, field: 'txHash' },
  )
}

/** The status's do_not_sign message, where the swap's transaction depends on the inert default router. */
async function doNotSignOfRef(deps: GetSwapStatusDeps, ref: string): Promise<string | undefined> {
  const { next } = await getSwapStatus(deps, { ref })
  return next.action === 'do_not_sign' ? next.message : undefined
}

/**
 * POST /api/v1/swap/{ref}/transaction: the optional hint of the source transaction (the tracker finds it anyway).
 * The tracker checks that its receipt holds the router's Swapped event for the reference; the answer is the status
 * after the check. 404 for an unknown reference, 422 transaction_mismatch for a transaction that is not this swap's,
 * 422 chain_not_tracked when this service reads no RPC of the swap's source chain, 503 tracking_unavailable when its
 * RPC or tracker could not check it just now.
 */
export async function hintSourceTransaction(deps: GetSwapStatusDeps, parameters: { ref: string; txHash: Hex }): Promise<SwapStatusWire> {
  const { txHash } = parameters
  const ref = canonicalTrackedRef(parameters.ref)
  const chain = await sourceChainOf(deps, ref)
  if (chain === undefined) throw unknownRef(ref)
  const { tracking } = deps
  if (tracking === undefined || !tracking.follows(chain)) throw chainNotTracked(chain, txHash, await doNotSignOfRef(deps, ref))
  const checked = await tracking.hintSourceTransaction(ref, txHash)
  if (!checked.ok) {
    if (checked.reason === 'unknown_ref') throw unknownRef(ref)
    if (checked.reason === 'chain_not_tracked') throw chainNotTracked(chain, txHash, await doNotSignOfRef(deps, ref))
    if (checked.reason === 'not_started')
      throw new ServiceError(
        'tracking_unavailable',
        `This service has only just started and its tracker is not ready, so ${txHash} was not checked. Ask again in ${STARTING_RETRY_AFTER_SEC} s, or just read the status: the tracker finds the transaction without a hint.`,
        { chain, retryAfterSec: STARTING_RETRY_AFTER_SEC },
      )
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
