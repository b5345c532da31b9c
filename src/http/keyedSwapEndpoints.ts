import { DisbursementResult, DisburseRequest } from '../schemas/disburse.ts'
import { KeyedSwapRequest, SwapRecordWire, SwapResult } from '../schemas/swap.ts'
import { disburse } from '../service/disburse.ts'
import { getSwapRecord } from '../service/getSwapRecord.ts'
import { swapWithQuote } from '../service/swapWithQuote.ts'
import { requireApiKey } from './appEnv.ts'
import { defineEndpoint } from './endpoint.ts'
import {
  ADDRESS_SCREENED,
  jsonResponse,
  KEY_ERRORS,
  MARKET_UNAVAILABLE,
  PAYLOAD_TOO_LARGE,
  problemResponseDoc,
  UNSUPPORTED_MEDIA_TYPE,
} from './openapiDoc.ts'

// Spec endpoints 10 and 11 and the swap record: each needs a key (401 `invalid_key`), checked before the body; the
// rate-limit middleware verified it, from x-swapeazi-key or a Bearer token.

/** POST /api/v1/swap: a quote the service signed becomes a transaction for a key holder (no per-call fee). */
export const swapWithKey = defineEndpoint({
  method: 'POST',
  path: '/api/v1/swap',
  body: KeyedSwapRequest,
  doc: {
    summary: 'Keyed swap: a signed quote (quoteId) becomes an unsigned transaction; no per-call fee',
    operationId: 'swapWithKey',
    security: [{ apiKey: [] }],
    responses: {
      200: jsonResponse(SwapResult, 'The built swap, recorded under the key (agentCallFee null)'),
      400: problemResponseDoc(
        'invalid_request (body, or a toAddress the quote does not allow), or invalid_quote (altered or foreign quoteId)',
      ),
      403: ADDRESS_SCREENED,
      422: problemResponseDoc(
        'quote_expired (expired, route no longer viable, or prices moved: quote again), or simulation_failed (with an RPC for the source chain, the built transaction reverts on its live state: `reason` is the decoded revert)',
      ),
      503: MARKET_UNAVAILABLE,
      ...KEY_ERRORS,
    },
  },
  handler: (deps) => async (c, input) => {
    const claims = requireApiKey(c)
    const body = await input.body()
    return c.json(await swapWithQuote(deps, { quoteId: body.quoteId, toAddress: body.toAddress, keyId: claims.id }))
  },
})

/** GET /api/v1/swap/{ref}: a swap's record (keyed swaps only to the key that built them). */
export const getSwap = defineEndpoint({
  method: 'GET',
  path: '/api/v1/swap/{ref}',
  doc: {
    summary: "A swap's record and status (keyed swaps: only to the key that built them)",
    operationId: 'getSwap',
    security: [{ apiKey: [] }],
    parameters: [{ name: 'ref', in: 'path', required: true, schema: { type: 'string', pattern: '^swp_[0-9A-Z]{26}$' } }],
    responses: {
      200: jsonResponse(SwapRecordWire, 'The swap'),
      404: problemResponseDoc('not_found: no such swap visible to this key'),
      ...KEY_ERRORS,
    },
  },
  handler: (deps) => async (c) => {
    const claims = requireApiKey(c)
    return c.json(await getSwapRecord(deps, { ref: c.req.param('ref') ?? '', keyId: claims.id }))
  },
})

/** POST /api/v1/batch/disburse: the built, recorded disbursement (403 screening, 422 a recipient that cannot be served). */
export const disburseEndpoint = defineEndpoint({
  method: 'POST',
  path: '/api/v1/batch/disburse',
  body: DisburseRequest,
  doc: {
    summary: 'Batch disbursement: one source token pays 1 to 50 recipients (transfers, swaps, bridges) in one router transaction',
    operationId: 'disburse',
    description:
      "Each recipient's `amount` is in the source token, fee included, and is priced as a quote of that amount (0.5% all-in); a recipient of the source token on the source chain gets a plain transfer of the amount less the 0.5% fee (the fee rounded up). Errors about one recipient carry its `index`.",
    security: [{ apiKey: [] }],
    responses: {
      200: jsonResponse(
        DisbursementResult,
        'The built disbursement, recorded under the key: approve totals.amount, then sign transactionRequest (executeBatch)',
      ),
      400: problemResponseDoc(
        'invalid_request: body failing the schema (0 or more than 50 recipients, bad amount or address); `errors` lists each field',
      ),
      403: problemResponseDoc('address_screened: the sender or a recipient (`index`) failed compliance screening'),
      413: PAYLOAD_TOO_LARGE,
      415: UNSUPPORTED_MEDIA_TYPE,
      422: problemResponseDoc(
        "unsupported_token, not_agent_callable, amount_out_of_range (with `sharedWith` when the legs before it in the batch took the pools its route swaps in, or the deposit limit of the Across lane it bridges over) or no_route_found, with the recipient's `index`; or simulation_failed (with an RPC for the source chain, the built transaction reverts on its live state)",
      ),
      503: MARKET_UNAVAILABLE,
      ...KEY_ERRORS,
    },
  },
  handler: (deps) => async (c, input) => {
    const claims = requireApiKey(c)
    const params = await input.body()
    return c.json(await disburse(deps, { params, keyId: claims.id }), 200, { 'cache-control': 'no-store' })
  },
})
