import { createHash } from 'node:crypto'
import { decodePaymentHeader } from '../payments/x402/decodePaymentHeader.ts'
import { reconcilePayment, unsettleStaleReservation } from '../payments/x402/reconcilePayment.ts'
import { AGENT_CALL_FEE_ATOMIC } from '../payments/x402/paymentRequirements.ts'
import type { PaymentRejection, SettlementMode } from '../payments/x402/settlement.ts'
import { decodePaymentSignature, normalisePaymentV2, paymentRequiredV2Of } from '../payments/x402/v2.ts'
import { verifyPayment } from '../payments/x402/verifyPayment.ts'
import { getAddress } from 'viem'
import type { PaidSwapParams } from '../schemas/quote.ts'
import { SwapResult } from '../schemas/swap.ts'
import type { PaymentPayload, PaymentReceipt, PaymentRequiredV2, PaymentRequirements, X402Challenge } from '../schemas/x402.ts'
import type { PaymentRow, SwapChannel } from '../store/createStore.ts'
import { buildSwapTransaction } from './buildSwapTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { formatSwapResult, redeliveredSwapResult } from './formatSwapResult.ts'
import { hasInertChains, refuseChargeOnInertRouter, refusesInertRouter, routerUsesOf } from './inertRouter.ts'
import { demonstrationNotice, paymentRequirementsFor } from './paymentRequirementsFor.ts'
import { preflightBuild, swapTransactionOf } from './preflightBuild.ts'
import { type ResolvedQuoteRequest, resolveQuoteRequest } from './resolveQuoteRequest.ts'
import { screenSwapAddresses } from './screenSwapAddresses.ts'
import { swapRecordOf } from './swapRecordOf.ts'
import { newSwapRef } from './swapRef.ts'

export type PayForSwapParameters = {
  params: PaidSwapParams
  /** The raw `X-PAYMENT` header, or undefined on the first call. */
  paymentHeader: string | undefined
  /** The raw `PAYMENT-SIGNATURE` header (x402 v2); the caller refuses it together with `X-PAYMENT`. */
  paymentSignature?: string | undefined
  /** Absolute URL of the endpoint called: the challenge's `resource`. */
  resource: string
  channel: SwapChannel
  /** The caller's IP subject: the pre-flight simulations of its unpaid requests are limited per minute. */
  caller?: string
  /** The challenge also offers MPP, which always takes real money (the MPP path with a Tempo RPC). */
  offersMpp?: boolean
}

export type PayForSwapReturnType =
  /** `x402Version`: which header paid, so the receipt goes back in the matching one. */
  | { kind: 'paid'; result: SwapResult; receipt: PaymentReceipt; x402Version: 1 | 2 }
  /**
   * `challenge` is the v1 body, `paymentRequired` the same offer in v2 (the `PAYMENT-REQUIRED` header).
   * `isBadCredential`: the payment sent could not be decoded, failed verification, or already paid for another request
   * (LocalLimits counts it).
   */
  | {
      kind: 'payment_required'
      challenge: X402Challenge
      paymentRequired: PaymentRequiredV2
      isBadCredential?: true
      /** settlement_pending: when to repeat the request (the Retry-After header). */
      retryAfterSec?: number
    }

type PaymentRequired = Extract<PayForSwapReturnType, { kind: 'payment_required' }>
/** `errorV2`: the v2 offer's own `error` where the text names a header, which differs between the versions. */
type Challenge = (error: string, detail: string, retryAfterSec?: number, errorV2?: string) => PaymentRequired

/**
 * What settlement refuses for the payer's own reason, counted toward its source like a bad signature. Not counted: a
 * settlement that failed on our side or the facilitator's (`settlement_failed`, and `invalid_payment`, what a
 * facilitator's unmapped reason becomes), and one still pending.
 */
const PAYERS_OWN_REFUSALS: ReadonlySet<string> = new Set([
  'payment_already_used',
  'insufficient_funds',
  'invalid_signature',
  'authorization_expired',
  'authorization_not_yet_valid',
  'amount_mismatch',
  'recipient_mismatch',
])

/** How long a payer waits before repeating a request whose payment is still settling. */
const SETTLEMENT_RETRY_AFTER_SEC = 5

/**
 * The pay-per-call swap (spec 3, DESIGN 7.9): screen, route and build first, so a request that cannot succeed is
 * refused (403, 422) before any payment is asked or taken; then verify the payment and hand it to the settler, which
 * reserves it (single use), collects it and records the swap with it before the answer leaves; a refusal charges
 * nothing unless it says the outcome is unknown.
 *
 * A payment already on record is looked up first, before screening, building or settling (issue 16): the same
 * authorization with the same request gets the same swap again (a payer whose connection dropped after paying),
 * with a different request a 402 naming the swap it bought; one whose settlement is still unconfirmed is looked up
 * on chain, never broadcast again (settlement_pending).
 */
export async function payForSwap(deps: ServiceDeps, parameters: PayForSwapParameters): Promise<PayForSwapReturnType> {
  const { params, paymentHeader, paymentSignature, resource, channel } = parameters
  const requirements = paymentRequirementsFor(deps, resource)
  const challenge: Challenge = (error, detail, retryAfterSec, errorV2 = error) => ({
    kind: 'payment_required',
    challenge: { x402Version: 1, error, accepts: [requirements], detail },
    paymentRequired: paymentRequiredV2Of(requirements, errorV2),
    ...(retryAfterSec === undefined ? {} : { retryAfterSec }),
  })
  if (paymentHeader === undefined && paymentSignature === undefined) {
    await screenSwapAddresses(deps, params)
    const built = buildSwapTransaction(deps, { params, swapEaziRef: newSwapRef(deps.clock()) })
    refuseChargeOnDemoRouter(deps, built, parameters.offersMpp === true)
    await preflightBuild(deps, {
      built: swapTransactionOf(built, deps.routerOn),
      requestKey: paidSwapKey(deps, params),
      ...(parameters.caller === undefined ? {} : { caller: parameters.caller }),
    })
    const notice = demonstrationNotice(deps)
    return challenge(
      'X-PAYMENT header is required',
      `${notice === undefined ? '' : `${notice} `}This swap costs USD 0.02 in USDC on Base. Sign accepts[0] (EIP-3009 TransferWithAuthorization of ${requirements.maxAmountRequired} atomic USDC to ${requirements.payTo}) and repeat the same request with the X-PAYMENT header (x402 v1), or sign accepts[0] of the PAYMENT-REQUIRED header and send it in PAYMENT-SIGNATURE (x402 v2). Quotes are free at POST /api/x402/quote.`,
      undefined,
      'PAYMENT-SIGNATURE header is required',
    )
  }

  const x402Version = paymentHeader === undefined ? 2 : 1
  const decoded = paymentHeader === undefined ? decodeV2(paymentSignature ?? '', requirements) : decodePaymentHeader(paymentHeader)
  if (!decoded.ok) {
    // Not asked to pay again for a swap that would be refused: where a paid swap refuses routes on a chain with no
    // router (never the embedded demonstration), it is built first (the HTTP edge counts that refusal too).
    if (refusesInertRouter(deps, parameters.offersMpp === true) && hasInertChains(deps.catalogue, deps.routerOn))
      refuseChargeOnDemoRouter(
        deps,
        buildSwapTransaction(deps, { params, swapEaziRef: newSwapRef(deps.clock()) }),
        parameters.offersMpp === true,
      )
    return { ...rejected(deps, challenge, decoded), isBadCredential: true }
  }
  const requestKey = paidSwapKey(deps, params)
  const { authorization } = decoded.payload.payload
  const retry: RetryContext = { requestKey, x402Version, challenge }

  const recorded = await deps.store.getPayment(authorization.from, authorization.nonce)
  if (recorded !== undefined && isSameAuthorization(recorded, decoded.payload)) {
    const answer = await answerRetry(deps, recorded, retry)
    if (answer !== undefined) return answer
  }

  await screenSwapAddresses(deps, params)
  const swapEaziRef = newSwapRef(deps.clock())
  const built = buildSwapTransaction(deps, { params, swapEaziRef })
  refuseChargeOnDemoRouter(deps, built, false)
  // The signature is checked before the simulation, which costs RPC calls; a forged payment gets no simulation.
  const verified = await verifyPayment({ payload: decoded.payload, requirements, nowSec: Math.floor(deps.clock() / 1000) })
  if (!verified.ok) return { ...rejected(deps, challenge, verified), isBadCredential: true }
  const payment = verified.payment
  await preflightBuild(deps, {
    built: swapTransactionOf(built, deps.routerOn),
    requestKey,
    isPaid: true,
    ...(parameters.caller === undefined ? {} : { caller: parameters.caller }),
  })
  const result = formatSwapResult(built, { atomic: AGENT_CALL_FEE_ATOMIC })

  const collected = await deps.settler.collect({
    payment,
    swap: swapRecordOf(built, channel, new Date(deps.clock())),
    delivery: { requestKey, result },
    store: deps.store,
    now: () => new Date(deps.clock()),
    log: deps.log,
  })
  if (!collected.ok) {
    // Another request with this authorization won the reservation since the lookup: answer as its retry.
    if (collected.reason === 'payment_already_used') {
      const holder = await deps.store.getPayment(payment.payer, payment.nonce)
      const answer =
        holder !== undefined && isSameAuthorization(holder, decoded.payload) ? await answerRetry(deps, holder, retry) : undefined
      if (answer !== undefined) return answer
    }
    return collected.reason === 'settlement_pending'
      ? rejected(
          deps,
          challenge,
          collected,
          ` The payment stays reserved for ${swapEaziRef}, so it can never pay twice: repeat the same request with the same payment in a few seconds, and the swap is answered once the settlement confirms; nothing is broadcast again.`,
          SETTLEMENT_RETRY_AFTER_SEC,
        )
      : PAYERS_OWN_REFUSALS.has(collected.reason)
        ? // The payer's own doing (no funds, a nonce used on chain, the payment used meanwhile): counted as a bad one.
          { ...rejected(deps, challenge, collected), isBadCredential: true }
        : rejected(deps, challenge, collected)
  }
  const { transaction } = collected
  deps.log.info(
    {
      event: 'swap_paid',
      swap_ref: swapEaziRef,
      payer: payment.payer,
      settlement: deps.settler.mode,
      transaction,
      route: built.quote.route.id,
    },
    'swap_paid',
  )
  return {
    kind: 'paid',
    result,
    receipt: { success: true, transaction, network: 'base', payer: payment.payer, settlement: deps.settler.mode },
    x402Version,
  }
}

/**
 * The request a payment buys, as the quote token binds it (QuoteClaims): tokens by catalogue key, the amount in
 * atomic units, lowercase addresses with the recipient defaulted to the sender, the slippage in 1e-18.
 */
export function paidRequestKey(request: ResolvedQuoteRequest): string {
  const { from, to, amountIn, fromAddress, toAddress, slippageE18 } = request
  return [from.key, to.key, amountIn, fromAddress.toLowerCase(), toAddress.toLowerCase(), slippageE18].join('|')
}

/**
 * The request a paid swap's payment buys: the normalised quote request, and the quote it builds or the ranked route
 * when that is not BALANCED (so a payment for the FASTEST route is not answered with a BALANCED swap, nor the other way round;
 * BALANCED named or not is the same request, and keys recorded before `route` existed stay valid).
 */
export function paidSwapKey(deps: ServiceDeps, params: PaidSwapParams): string {
  const key = paidRequestKey(resolveQuoteRequest(deps, params))
  // A quote's id, by its digest: the retry of a paid quote is found after the quote has expired, unverified.
  if (params.quoteId !== undefined) return `${key}|quote:${createHash('sha256').update(params.quoteId).digest('base64url')}`
  return params.route === undefined || params.route === 'BALANCED' ? key : `${key}|${params.route}`
}

/** The payment on record is the one sent: same signature over the same authorization (so it was verified then). */
function isSameAuthorization(recorded: PaymentRow, payload: PaymentPayload): boolean {
  const { authorization, signature } = payload.payload
  return (
    recorded.signature.toLowerCase() === signature.toLowerCase() &&
    recorded.payTo === authorization.to.toLowerCase() &&
    recorded.value === BigInt(authorization.value) &&
    recorded.validAfter === BigInt(authorization.validAfter) &&
    recorded.validBefore === BigInt(authorization.validBefore)
  )
}

type RetryContext = { requestKey: string; x402Version: 1 | 2; challenge: Challenge }

/**
 * The answer to a payment already on record, or undefined when it was released here (its settlement certainly moved
 * no money) and the request goes on to pay afresh. Nothing here screens, builds or broadcasts.
 */
async function answerRetry(deps: ServiceDeps, recorded: PaymentRow, context: RetryContext): Promise<PayForSwapReturnType | undefined> {
  const { requestKey, challenge } = context
  const ref = recorded.swapRef
  const isSameRequest = recorded.requestKey === requestKey && recorded.result !== null
  // A payment replayed for another request is refused like a bad one, and counted toward its source's limit: the
  // authorization is public once settled (in the calldata), so anyone could replay it without end.
  const boughtElsewhere = (): PaymentRequired => {
    deps.log.info({ event: 'payment_rejected', reason: 'payment_already_used', swap_ref: ref }, 'payment_rejected')
    const refused = challenge(
      'payment_already_used',
      `This authorization (payer and nonce) already paid for swap ${ref}${describeBought(recorded.result)}. Repeat that same request with this payment to receive ${ref} again; for a different swap, sign a new payment with a fresh nonce (x402 clients do so on every call). Nothing was charged for this request.`,
    )
    return { ...refused, isBadCredential: true }
  }
  if (recorded.status === 'reserved') {
    // The request that reserved it stopped (a crash or a deploy mid-settlement): hand it to reconciliation.
    const now = await unsettleStaleReservation(deps, recorded)
    if (now === undefined) return undefined
    if (now.status !== 'reserved') return answerRetry(deps, now, context)
  }
  if (recorded.status === 'reserved')
    return isSameRequest
      ? challenge(
          'settlement_pending',
          `This payment is being settled for swap ${ref} by a request still in progress. Repeat the same request with the same payment in a few seconds to receive it; it is charged once.`,
          SETTLEMENT_RETRY_AFTER_SEC,
        )
      : boughtElsewhere()
  if (recorded.status === 'unsettled') {
    const outcome = await reconcilePayment(deps, recorded)
    switch (outcome.state) {
      case 'released':
        return undefined
      case 'changed':
        // Another replica reconciled this attempt meanwhile: answer from what the store now holds.
        return outcome.now === undefined ? undefined : answerRetry(deps, outcome.now, context)
      case 'pending':
        return challenge(
          'settlement_pending',
          `The settlement of this payment${recorded.transaction === null ? '' : ` (transaction ${recorded.transaction} on Base)`} for swap ${ref} is not confirmed yet: ${outcome.message} Repeat the same request with the same payment later to receive the swap; nothing is broadcast again, so it is charged at most once.`,
          SETTLEMENT_RETRY_AFTER_SEC,
        )
      case 'settled':
        return answerRetry(deps, { ...recorded, status: 'settled', transaction: outcome.transaction }, context)
    }
  }
  if (!isSameRequest) return boughtElsewhere()
  deps.log.info({ event: 'swap_redelivered', swap_ref: ref, payer: recorded.payer }, 'swap_redelivered')
  return {
    kind: 'paid',
    result: redeliveredSwapResult(recorded.result as SwapResult, deps.clock()),
    receipt: {
      success: true,
      transaction: recorded.transaction ?? `ledger:${ref}`,
      network: 'base',
      payer: getAddress(recorded.payer),
      settlement: recorded.settlementMode as SettlementMode,
    },
    x402Version: context.x402Version,
  }
}

/** ` (100 USDC on BAS to EURe on POL)`, from a recorded SwapResult; empty when there is none. */
function describeBought(result: unknown): string {
  const parsed = SwapResult.pick({ fromAmount: true, fromToken: true, fromChain: true, toToken: true, toChain: true }).safeParse(result)
  if (!parsed.success) return ''
  const { fromAmount, fromToken, fromChain, toToken, toChain } = parsed.data
  return ` (${fromAmount} ${fromToken} on ${fromChain} to ${toToken} on ${toChain})`
}

/** A `PAYMENT-SIGNATURE` as the internal payment the verifier takes, if it accepted exactly what we offer. */
function decodeV2(header: string, requirements: PaymentRequirements): { ok: true; payload: PaymentPayload } | PaymentRejection {
  const decoded = decodePaymentSignature(header)
  return decoded.ok ? normalisePaymentV2(decoded.payload, requirements) : decoded
}

function rejected(
  deps: ServiceDeps,
  challenge: Challenge,
  rejection: PaymentRejection,
  /** Replaces "Nothing was charged." when that is not certain (a broadcast whose outcome is unknown). */
  outcome = ' Nothing was charged.',
  retryAfterSec?: number,
): PaymentRequired {
  deps.log.info({ event: 'payment_rejected', reason: rejection.reason }, 'payment_rejected')
  return challenge(rejection.reason, `${rejection.message}${outcome}`, retryAfterSec)
}

/**
 * Real money is neither asked nor taken for transactions that depend on the inert default router (422
 * router_not_deployed). Only the embedded demonstration's x402 payments are worth nothing: ledger settlement to the
 * inert 0x…dEaD, where the swap is answered and its one next step says not to sign. A ledger that records
 * authorizations to a wallet of the operator's can still collect them, and MPP always moves money.
 */
export function refuseChargeOnDemoRouter(deps: ServiceDeps, built: ReturnType<typeof buildSwapTransaction>, offersMpp: boolean): void {
  if (refusesInertRouter(deps, offersMpp)) refuseChargeOnInertRouter(deps, routerUsesOf(built.build))
}
