import { rateLimitHeaders } from '../auth/rateLimits.ts'
import { encodePaymentReceipt } from '../payments/x402/paymentReceipt.ts'
import { encodeBase64Json, settleResponseV2Of } from '../payments/x402/v2.ts'
import { PaidSwapParams } from '../schemas/quote.ts'
import { SwapResult } from '../schemas/swap.ts'
import { X402Challenge, X402Manifest } from '../schemas/x402.ts'
import { describeX402Resources } from '../service/describeX402Resources.ts'
import { rateLimitedError } from '../service/admitApiRequest.ts'
import { payForMppSwap } from '../service/payForMppSwap.ts'
import { payForSwap } from '../service/payForSwap.ts'
import { refuseDiscoveryChains } from '../service/resolveQuoteRequest.ts'
import { ServiceError } from '../service/serviceError.ts'
import { PUBLISHED_CACHE } from './cacheControl.ts'
import { STATUS_BY_CODE } from './problem.ts'
import { defineEndpoint, type Endpoint } from './endpoint.ts'
import {
  ADDRESS_SCREENED,
  jsonResponse,
  MARKET_UNAVAILABLE,
  MARKET_UNAVAILABLE_TEXT,
  PAYLOAD_TOO_LARGE,
  problemResponseDoc,
  UNSUPPORTED_MEDIA_TYPE,
} from './openapiDoc.ts'
import { clientIp } from './clientIp.ts'
import { holdRefusal, localLimitsOf } from './rateLimit.ts'
import { requestHeader } from './requestHeader.ts'

/** What an x402 402 of the MPP path adds to its detail when the rail is on. */
const MPP_OFFER =
  'Or pay 0.02 pathUSD on Tempo over MPP: send the transfer the WWW-Authenticate: Payment challenge asks for (tempo charge, push mode, with its memo), then repeat the request with Authorization: Payment holding its hash.'

const MPP_DESCRIPTION =
  ' MPP (where the deployment has a Tempo RPC; the capability manifest says whether): every 402 also carries WWW-Authenticate: Payment, an mppx 0.11 tempo charge of 0.02 pathUSD in push mode. Send that transfer (transferWithMemo with the challenge-bound memo), then repeat the request with Authorization: Payment (base64url JSON of {challenge, payload: {type: "hash", hash}, source}); it is verified against the Tempo RPC and answered 200 with Payment-Receipt. One transaction pays for one swap; the same credential with the same request gets the same swap again. A refused credential is 402 with a fresh challenge and `error` one of invalid_payment, invalid_challenge, challenge_expired, unsupported_mode, payment_not_found, payment_reverted, asset_mismatch, amount_mismatch, recipient_mismatch, memo_mismatch, payment_already_used. Without a Tempo RPC, Authorization: Payment is answered 402 unsupported_scheme.'

const MPP_AUTHORIZATION = {
  name: 'Authorization',
  in: 'header' as const,
  required: false,
  description:
    'Payment <base64url JSON of an MPP credential>: a tempo charge in push mode ({type: "hash", hash}) answering the WWW-Authenticate challenge',
  schema: { type: 'string' as const },
}

const MPP_RECEIPT = {
  description:
    'Paid with Authorization: Payment: base64url JSON {method: "tempo", reference: <transaction hash>, status: "success", timestamp}',
  schema: { type: 'string' as const },
}

const MPP_CHALLENGE = {
  description:
    'Where the MPP rail is on: Payment id, realm, method="tempo", intent="charge", request (base64url JCS of {amount: "20000", currency: pathUSD, recipient, methodDetails: {chainId, supportedModes: ["push"]}}), description, expires',
  schema: { type: 'string' as const },
}

/**
 * POST /api/x402/swap and /api/mpp/swap (one handler, spec rule 3): the body is validated, the swap screened and
 * built before any 402 (v1 body, v2 PAYMENT-REQUIRED header); then the X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2) is
 * verified and settled, and the answer carries X-PAYMENT-RESPONSE or PAYMENT-RESPONSE to match. On the MPP path with a
 * Tempo RPC configured (`deps.mpp`), every 402 also carries `WWW-Authenticate: Payment` (mppx tempo charge), and an
 * `Authorization: Payment` credential pays instead (payForMppSwap), answered with `Payment-Receipt`.
 */
const paidSwap = (path: string, summary: string, operationId: string, isMppPath = false): Endpoint =>
  defineEndpoint({
    method: 'POST',
    path,
    body: PaidSwapParams,
    screenBody: refuseDiscoveryChains,
    doc: {
      summary,
      operationId,
      description:
        'Without a payment: 402 with the x402 v1 challenge in the body and the same offer as x402 v2 in the PAYMENT-REQUIRED header. With X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2): the payment is verified, reserved, settled and recorded, then 200 with the unsigned transaction and X-PAYMENT-RESPONSE or PAYMENT-RESPONSE respectively. One (payer, nonce) pays once whichever header carries it; only low-s (EIP-2) signatures are accepted. A payment already on record is looked up before anything else: the same payment with the same request gets the same swap and receipt again (a retry after a lost answer), with another request 402 payment_already_used naming the swap it bought; a settlement still unconfirmed is 402 settlement_pending with Retry-After, looked up again on the next retry and never broadcast twice. Validation (400), screening (403) and routing (422) come before any 402.' +
        (isMppPath ? MPP_DESCRIPTION : ''),
      parameters: [
        {
          name: 'X-PAYMENT',
          in: 'header',
          required: false,
          description: 'base64 (standard or url-safe) of an x402 v1 exact payment for accepts[0]',
          schema: { type: 'string' },
        },
        {
          name: 'PAYMENT-SIGNATURE',
          in: 'header',
          required: false,
          description:
            'base64 (standard or url-safe) of an x402 v2 exact PaymentPayload whose `accepted` is accepts[0] of PAYMENT-REQUIRED, unchanged',
          schema: { type: 'string' },
        },
        ...(isMppPath ? [MPP_AUTHORIZATION] : []),
      ],
      responses: {
        200: jsonResponse(SwapResult, 'The built swap', {
          'X-PAYMENT-RESPONSE': {
            description: 'Paid with X-PAYMENT: base64 of PaymentReceipt (x402 SettleResponse plus settlement mode)',
            schema: { type: 'string' },
          },
          'PAYMENT-RESPONSE': {
            description: 'Paid with PAYMENT-SIGNATURE: base64 of SettleResponseV2 (network "eip155:8453")',
            schema: { type: 'string' },
          },
          ...(isMppPath ? { 'Payment-Receipt': MPP_RECEIPT } : {}),
        }),
        402: jsonResponse(X402Challenge, 'Payment required, or the payment was refused: `error` is a stable reason code (DESIGN 7.8)', {
          'PAYMENT-REQUIRED': {
            description: 'base64 of PaymentRequiredV2: the same offer and `error` in x402 v2 (CAIP-2 network "eip155:8453", `amount`)',
            schema: { type: 'string' },
          },
          'Retry-After': {
            description: 'With `error` settlement_pending: seconds until the same request with the same payment is worth repeating',
            schema: { type: 'string' },
          },
          ...(isMppPath ? { 'WWW-Authenticate': MPP_CHALLENGE } : {}),
        }),
        400: problemResponseDoc(
          'invalid_request, or conflicting_payment (any two of X-PAYMENT, PAYMENT-SIGNATURE and Authorization: Payment, bare or malformed included)',
        ),
        403: ADDRESS_SCREENED,
        413: PAYLOAD_TOO_LARGE,
        415: UNSUPPORTED_MEDIA_TYPE,
        422: problemResponseDoc(
          'unsupported_token, not_agent_callable, amount_out_of_range, no_route_found (no route joins the pair at any amount: the free quote answers supported false, no_route_found), simulation_failed (with an RPC for the source chain, the built transaction reverts on its live state: `reason` is the decoded revert; nothing is charged), or router_not_deployed (the transactions would call a router, or deliver to an executor, on a chain where the operator of this service set none of their own, `chains`: nothing is asked or charged, and asking again will not change that)',
        ),
        429: problemResponseDoc(
          "rate_limited: the caller's pre-flight simulations this minute (`preflight`: 20 without a payment; `preflight-paid`: 120 with one), or its refused payments (`anonymous`); `Retry-After` says when to retry, and `RateLimit` and `RateLimit-Policy` name the policy",
        ),
        503: isMppPath
          ? problemResponseDoc(
              `payment_unavailable: the Tempo RPC could not verify an MPP credential; nothing was claimed, \`Retry-After\` says when to repeat the request with the same credential. Or ${MARKET_UNAVAILABLE_TEXT}`,
            )
          : MARKET_UNAVAILABLE,
      },
    },
    handler: (deps, scope) => {
      const local = localLimitsOf(deps, scope)
      return async (c, input) => {
        // A source whose payments kept failing verification is refused before any work (LocalLimits).
        const ip = local.ipSubject(clientIp(c, deps.trustProxy ?? 0))
        const tooOften = local.refusedTooOften(ip, deps.clock())
        if (tooOften !== undefined) {
          for (const [name, value] of Object.entries(rateLimitHeaders(tooOften))) c.header(name, value)
          await holdRefusal(local.holdMs(tooOften))
          throw rateLimitedError(tooOften)
        }
        const paymentHeader = requestHeader(c, 'x-payment')
        const paymentSignature = requestHeader(c, 'payment-signature')
        const authorization = requestHeader(c, 'authorization')
        const sent = [
          paymentHeader === undefined ? undefined : 'X-PAYMENT',
          paymentSignature === undefined ? undefined : 'PAYMENT-SIGNATURE',
          authorization !== undefined && /^\s*payment(\s|$)/i.test(authorization) ? 'Authorization: Payment' : undefined,
        ].filter((name) => name !== undefined)
        // A request that carried a payment and is refused for what it sent (a 4xx: a body that is not JSON, two
        // payments at once, a swap not sold here, a body no route serves) counts as a refusal of its source, as a
        // payment that fails verification does: else a flood of junk credentials on such requests would never be limited.
        const counted = <T>(work: () => Promise<T>): Promise<T> =>
          Promise.resolve()
            .then(work)
            .catch((error: unknown) => {
              if (sent.length > 0 && error instanceof ServiceError && STATUS_BY_CODE[error.code] < 500) local.noteRefusal(ip, deps.clock())
              throw error
            })
        const params = await counted(async () => {
          if (sent.length > 1)
            throw new ServiceError(
              'conflicting_payment',
              `${sent.join(' and ')} were sent together; send exactly one payment: X-PAYMENT (x402 v1), PAYMENT-SIGNATURE (x402 v2) or Authorization: Payment (MPP). Nothing was charged.`,
            )
          return input.body()
        })
        const resource = `${deps.publicUrl}${path}`
        const mpp = isMppPath ? deps.mpp : undefined
        if (sent[0] === 'Authorization: Payment' && authorization !== undefined) {
          const paid = await counted(() => payForMppSwap(deps, { params, authorization, resource, mpp, caller: ip.ipHash }))
          if (paid.kind === 'paid') return c.json(paid.result, 200, { 'Payment-Receipt': paid.receipt })
          if (paid.isBadCredential === true) local.noteRefusal(ip, deps.clock())
          return c.json(paid.challenge, 402, {
            'PAYMENT-REQUIRED': encodeBase64Json(paid.paymentRequired),
            ...(paid.wwwAuthenticate === undefined ? {} : { 'WWW-Authenticate': paid.wwwAuthenticate }),
          })
        }
        const outcome = await counted(() =>
          payForSwap(deps, {
            params,
            paymentHeader,
            paymentSignature,
            resource,
            channel: 'x402',
            caller: ip.ipHash,
            offersMpp: mpp !== undefined,
          }),
        )
        if (outcome.kind === 'payment_required') {
          if (outcome.isBadCredential === true) local.noteRefusal(ip, deps.clock())
          const challenge =
            mpp === undefined || outcome.challenge.detail === undefined
              ? outcome.challenge
              : { ...outcome.challenge, detail: `${outcome.challenge.detail} ${MPP_OFFER}` }
          return c.json(challenge, 402, {
            'PAYMENT-REQUIRED': encodeBase64Json(outcome.paymentRequired),
            ...(mpp === undefined ? {} : { 'WWW-Authenticate': await mpp.challengeHeader() }),
            ...(outcome.retryAfterSec === undefined ? {} : { 'Retry-After': String(outcome.retryAfterSec) }),
          })
        }
        return outcome.x402Version === 2
          ? c.json(outcome.result, 200, { 'PAYMENT-RESPONSE': encodeBase64Json(settleResponseV2Of(outcome.receipt)) })
          : c.json(outcome.result, 200, { 'X-PAYMENT-RESPONSE': encodePaymentReceipt(outcome.receipt) })
      }
    },
  })

export const swapX402 = paidSwap('/api/x402/swap', 'Paid swap build over x402 (USD 0.02 in USDC on Base)', 'swapX402')
export const swapMpp = paidSwap(
  '/api/mpp/swap',
  'The same paid swap handler on the MPP path: x402, or MPP (0.02 pathUSD on Tempo) where a Tempo RPC is configured',
  'swapMpp',
  true,
)

/** GET /.well-known/x402.json: the payment manifest of the paid endpoints (DESIGN 7.19). */
export const getX402Manifest = defineEndpoint({
  method: 'GET',
  path: '/.well-known/x402.json',
  doc: {
    summary: 'x402 payment manifest: each paid endpoint with the requirements its 402 carries',
    operationId: 'getX402Manifest',
    responses: { 200: jsonResponse(X402Manifest, 'Payment manifest') },
  },
  handler: (deps) => (c) => c.json(describeX402Resources(deps, deps.publicUrl), 200, { 'cache-control': PUBLISHED_CACHE }),
})
