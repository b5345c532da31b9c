import { getAddress } from 'viem'
import type { SwapRecordWire } from '../schemas/swap.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/**
 * GET /api/v1/swap/{ref}: a swap's record and status. A swap built under a key is visible to that key only; a paid
 * swap to any valid key that holds its reference (the reference is only ever given to the payer). Anything else is
 * 404, so a reference that belongs to someone else is indistinguishable from one that does not exist.
 */
export async function getSwapRecord(deps: Pick<ServiceDeps, 'store'>, parameters: { ref: string; keyId: string }): Promise<SwapRecordWire> {
  const { keyId } = parameters
  // The ULID in any case, as the build answered it in upper case.
  const ref = /^swp_[0-9a-z]{26}$/i.test(parameters.ref) ? `swp_${parameters.ref.slice(4).toUpperCase()}` : parameters.ref
  const notFound = new ServiceError(
    'not_found',
    `No swap ${ref} is visible to this key. Swap references look like swp_ and 26 characters, as POST /api/v1/swap answered them.`,
    {
      ref,
    },
  )
  // A batch's reference: its record is not kept by this route, its orders' states are (say where, not only "swp_").
  if (/^dsb_[0-9a-z]{26}$/i.test(ref))
    throw new ServiceError(
      'not_found',
      `${ref} is a batch disbursement's reference, not a swap's: read where each of its orders stands at GET /api/v1/swap/${ref}/status (no key needed). This route returns the record of one swap (swp_ and 26 characters).`,
      { ref },
    )
  if (!/^swp_[0-9A-Z]{26}$/.test(ref)) throw notFound
  const swap = await deps.store.getSwap(ref)
  if (swap === undefined || (swap.keyId !== null && swap.keyId !== keyId)) throw notFound
  // A paid swap is recorded with its payment's reservation, before the money moves: its transaction is shown once the
  // payment is settled, never to a key holding the reference of a payment still being settled, or never made.
  if (swap.channel === 'x402' && swap.payment !== null) {
    const payment = await deps.store.getPayment(swap.payment.payer, swap.payment.nonce)
    if (payment?.status !== 'settled' || payment.swapRef !== swap.ref) throw notFound
  }
  return {
    swapEaziRef: swap.ref,
    status: swap.status,
    channel: swap.channel,
    createdAt: swap.createdAt,
    fromChain: swap.fromChain,
    toChain: swap.toChain,
    fromToken: swap.fromToken,
    toToken: swap.toToken,
    fromAmount: swap.fromAmount,
    toAmount: swap.toAmount,
    toAmountMin: swap.toAmountMin,
    fromAddress: getAddress(swap.fromAddress),
    toAddress: getAddress(swap.toAddress),
    transactionRequest: swap.transactionRequest as TransactionRequest,
  }
}
