import { SwapStatusWire, TransactionHint } from '../schemas/swapStatus.ts'
import { getSwapStatus } from '../service/getSwapStatus.ts'
import { hintSourceTransaction } from '../service/hintSourceTransaction.ts'
import { defineEndpoint } from './endpoint.ts'
import { jsonResponse, PAYLOAD_TOO_LARGE, problemResponseDoc, UNSUPPORTED_MEDIA_TYPE } from './openapiDoc.ts'

// Issue 18 item 6: the status is for whoever holds the reference (references are unguessable until mined), so it
// needs no key and shows only what the chains show; the record itself stays keyed (GET /api/v1/swap/{ref}). Both are
// under /api/v1/*, so the per-IP limit of anonymous reads counts them.

const REF_PARAMETER = {
  name: 'ref',
  in: 'path',
  required: true,
  description: 'The swapEaziRef of a swap (swp_…) or the disbursementRef of a batch (dsb_…)',
  schema: { type: 'string', pattern: '^(swp|dsb)_[0-9A-Z]{26}$' },
}

const RATE_LIMITED = problemResponseDoc("rate_limited: over the caller's per-minute limit; `Retry-After` says when to retry")

/** GET /api/v1/swap/{ref}/status: state, legs, amounts and the next step, without a key. */
export const getSwapStatusEndpoint = defineEndpoint({
  method: 'GET',
  path: '/api/v1/swap/{ref}/status',
  doc: {
    summary: "A swap's or batch's status as the chains show it, for whoever holds the reference: no key",
    operationId: 'getSwapStatus',
    description:
      'State (built, pending, done, failed, expired) with its substatus (completed, partial, refunded) and reason, every transaction with its block and an explorer link, the amounts sent and received, every transition with its time, and `next`: what to do now (sign before the deadline, wait and check again in `checkAgainSec`, use the delivered token, quote again). A batch answers every recipient in `orders`. Nothing else of the record: addresses, the transaction and the payment stay with GET /api/v1/swap/{ref} and its key.',
    security: [{}],
    parameters: [REF_PARAMETER],
    responses: {
      200: jsonResponse(SwapStatusWire, 'The status (Cache-Control: no-store)'),
      400: problemResponseDoc('invalid_request: ref is not swp_ or dsb_ and 26 characters (`errors` names the field)'),
      404: problemResponseDoc('not_found: no swap or batch is recorded under this reference'),
      429: RATE_LIMITED,
    },
  },
  handler: (deps) => async (c) =>
    c.json(await getSwapStatus(deps, { ref: c.req.param('ref') ?? '' }), 200, { 'cache-control': 'no-store' }),
})

/** POST /api/v1/swap/{ref}/transaction: the optional hint of the source transaction, checked by the tracker. */
export const hintTransactionEndpoint = defineEndpoint({
  method: 'POST',
  path: '/api/v1/swap/{ref}/transaction',
  body: TransactionHint,
  doc: {
    summary: 'Optional: the hash of the source transaction the user broadcast, checked against the swap',
    operationId: 'hintSwapTransaction',
    description:
      "The tracker finds the source transaction itself from the router's Swapped event; this only lets it look sooner. The receipt must hold the Swapped event of this reference from our router (a batch: its executeBatch). Answered 202 with the status after the check.",
    security: [{}],
    parameters: [REF_PARAMETER],
    responses: {
      202: jsonResponse(SwapStatusWire, 'Accepted: the status after the check'),
      400: problemResponseDoc('invalid_request: ref malformed, or txHash not 0x and 64 hex characters (`errors` names the field)'),
      404: problemResponseDoc('not_found: no swap or batch is recorded under this reference'),
      413: PAYLOAD_TOO_LARGE,
      415: UNSUPPORTED_MEDIA_TYPE,
      422: problemResponseDoc(
        "transaction_mismatch: the transaction's receipt holds no Swapped event of this reference from our router (`reason`: not_this_swap, or transaction_not_found when it is not mined yet). chain_not_tracked: this service reads no RPC of the swap's source chain (`chain`), so no hint can be checked here and asking again will not change that: read the transaction on the chain's block explorer",
      ),
      429: RATE_LIMITED,
      503: problemResponseDoc(
        'tracking_unavailable: the tracker is starting, its RPC failed or timed out during the check, or too many hints are being checked (nothing was decided); `Retry-After` says when to ask again',
      ),
    },
  },
  handler: (deps) => async (c, input) => {
    const ref = c.req.param('ref') ?? ''
    const { txHash } = await input.body()
    return c.json(await hintSourceTransaction(deps, { ref, txHash }), 202, { 'cache-control': 'no-store' })
  },
})
