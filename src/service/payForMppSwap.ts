import type { MppPayment, TempoCharge } from '../payments/mpp/createTempoCharge.ts'
import { TempoRpcUnavailableError } from '../payments/mpp/createTempoCharge.ts'
import { AGENT_CALL_FEE_ATOMIC } from '../payments/x402/paymentRequirements.ts'
import { paymentRequiredV2Of } from '../payments/x402/v2.ts'
import type { MppRejectReason } from '../schemas/mpp.ts'
import type { PaidSwapParams } from '../schemas/quote.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { PaymentRequiredV2, X402Challenge } from '../schemas/x402.ts'
import type { MppPaymentRow } from '../store/createMppPaymentStore.ts'
import { buildSwapTransaction } from './buildSwapTransaction.ts'
import { refuseChargeOnInertRouter, routerUsesOf } from './inertRouter.ts'
import type { ServiceDeps } from './deps.ts'
import { formatSwapResult, redeliveredSwapResult } from './formatSwapResult.ts'
import { paidSwapKey, refuseChargeOnDemoRouter } from './payForSwap.ts'
import { paymentRequirementsFor } from './paymentRequirementsFor.ts'
import { preflightBuild, swapTransactionOf } from './preflightBuild.ts'
import { screenSwapAddresses } from './screenSwapAddresses.ts'
import { ServiceError } from './serviceError.ts'
import { swapRecordOf } from './swapRecordOf.ts'
import { newSwapRef } from './swapRef.ts'

export type PayForMppSwapParameters = {
  params: PaidSwapParams
  /** The `Authorization` header holding the `Payment` credential. */
  authorization: string
  /** Absolute URL of the endpoint called: the x402 challenge's `resource`. */
  resource: string
  /** The rail, where this endpoint offers MPP (on /api/mpp/swap with a Tempo RPC configured); else MPP is refused. */
  mpp: TempoCharge | undefined
  /** The caller's IP subject: the simulations its credentials cause are limited per minute (preflightBuild.ts). */
  caller?: string
}

export type PayForMppSwapReturnType =
  /** `receipt`: the `Payment-Receipt` header. */
  | { kind: 'paid'; result: SwapResult; receipt: string }
  /**
   * Refused: the x402 v1 body and v2 offer of every 402 of this route, with the refusal's reason code, and a fresh MPP
   * challenge (`wwwAuthenticate`, absent where MPP is not offered). `isBadCredential`: the credential was unreadable,
   * failed verification, or already paid for another request.
   */
  | {
      kind: 'payment_required'
      challenge: X402Challenge
      paymentRequired: PaymentRequiredV2
      wwwAuthenticate?: string
      isBadCredential?: true
    }

type PaymentRequired = Extract<PayForMppSwapReturnType, { kind: 'payment_required' }>

/**
 * The swap paid over MPP (DESIGN 7.25): a payment already on record is looked up first, by its hash, before any work
 * (the same credential with the same request gets the same swap again; with another request a 402 names the swap it
 * bought). Otherwise the swap is screened, routed and built, the credential verified against the Tempo RPC (mppx 0.11,
 * push mode: the transfer is already on chain), and the payment's hash claimed in the statement that records the swap,
 * so it pays once across replicas and is claimed only if the swap is delivered.
 */
export async function payForMppSwap(deps: ServiceDeps, parameters: PayForMppSwapParameters): Promise<PayForMppSwapReturnType> {
  const { params, authorization, resource, mpp } = parameters
  if (mpp === undefined) {
    // Refused like any request: screened and built first (403, 422 before a 402), then told to pay over x402.
    await screenSwapAddresses(deps, params)
    const built = buildSwapTransaction(deps, { params, swapEaziRef: newSwapRef(deps.clock()) })
    // It offers x402 instead: not for a swap x402 would be refused.
    refuseChargeOnDemoRouter(deps, built, false)
    const where = deps.mpp === undefined ? NOT_ON_THIS_DEPLOYMENT : NOT_ON_THIS_PATH
    return { ...(await refusal(deps, undefined, resource)('unsupported_scheme', `${where} Nothing was charged.`)), isBadCredential: true }
  }
  const refuse = refusal(deps, mpp, resource)
  const named = mpp.identify(authorization)
  // In push mode the transfer is on chain before its credential arrives: a refusal before the claim must not say
  // "nothing was charged" when the payer has paid, but that nothing was claimed and the credential still buys a swap.
  const unclaimed = (error: unknown): unknown => {
    if (!(error instanceof ServiceError) || named === undefined) return error
    return new ServiceError(
      error.code,
      `${error.message.replace(/,? ?and nothing was charged|nothing was charged\.? ?/gi, '').trim()} Nothing was claimed from your MPP payment (transfer ${named.hash}): if that transfer was made, the same Authorization: Payment buys a swap (this request once it can be served, or another), after its challenge expires too if the transfer was included before.`,
      { ...error.detail, transfer: named.hash, claimed: false },
      { cause: error },
    )
  }
  let requestKey: string
  try {
    requestKey = paidSwapKey(deps, params)
  } catch (error) {
    throw unclaimed(error)
  }

  const recorded = named === undefined ? undefined : await deps.store.mpp.getPayment(named.hash)
  if (named !== undefined && recorded !== undefined) return answerRetry(deps, mpp, recorded, named.challengeId, requestKey, refuse)

  const swapEaziRef = newSwapRef(deps.clock())
  let built: ReturnType<typeof buildSwapTransaction>
  try {
    await screenSwapAddresses(deps, params)
    built = buildSwapTransaction(deps, { params, swapEaziRef })
    // An MPP payment is always real money: none is taken for transactions that depend on the inert default router.
    refuseChargeOnInertRouter(deps, routerUsesOf(built.build))
    await preflightBuild(deps, {
      built: swapTransactionOf(built, deps.routerOn),
      requestKey,
      isPaid: true,
      ...(parameters.caller === undefined ? {} : { caller: parameters.caller }),
    })
  } catch (error) {
    throw unclaimed(error)
  }

  let verified: Awaited<ReturnType<TempoCharge['verify']>>
  try {
    verified = await mpp.verify(authorization)
  } catch (error) {
    if (!(error instanceof TempoRpcUnavailableError)) throw error
    deps.log.warn({ event: 'mpp_rpc_unavailable', err: error.message }, 'mpp_rpc_unavailable')
    throw new ServiceError(
      'payment_unavailable',
      'The Tempo RPC this service verifies MPP payments with did not answer. Nothing was claimed: repeat the same request with the same credential shortly; a transfer included before its challenge expired stays usable after it.',
      { retryAfterSec: RPC_RETRY_AFTER_SEC },
      { cause: error },
    )
  }
  if (!verified.ok)
    return { ...(await refuse(verified.reason, `${verified.message} Nothing was claimed by this service.`)), isBadCredential: true }
  const { payment } = verified

  const at = new Date(deps.clock())
  const result = formatSwapResult(built, { atomic: AGENT_CALL_FEE_ATOMIC })
  let isRecorded: boolean
  try {
    isRecorded = await deps.store.mpp.recordPaidSwap(claimOf(payment, swapEaziRef, requestKey, result, at), swapRecordOf(built, 'mpp', at))
  } catch (error) {
    // The payer's transfer is on Tempo already: the generic 500 would say nothing was charged. The credential is
    // unclaimed, so the same request with it records the swap once the store answers again.
    deps.log.error(
      { event: 'mpp_record_failed', swap_ref: swapEaziRef, payer: payment.payer, transaction: payment.hash, err: error },
      'mpp_record_failed',
    )
    throw new ServiceError(
      'internal_error',
      `Your payment ${payment.hash} is on Tempo, but this service could not record the swap it pays for. It was not claimed: repeat the same request with the same credential shortly (its challenge may have expired meanwhile: the transfer was made in time), and the swap is answered for it, never charged twice.`,
      {},
      { cause: error },
    )
  }
  if (!isRecorded) {
    // Another request with this payment was recorded since the lookup: answer as its retry.
    const holder = await deps.store.mpp.getPayment(payment.hash)
    if (holder !== undefined) return answerRetry(deps, mpp, holder, payment.challengeId, requestKey, refuse)
    return { ...(await refuse('payment_already_used', ALREADY_USED)), isBadCredential: true }
  }
  deps.log.info(
    {
      event: 'swap_paid',
      swap_ref: swapEaziRef,
      payer: payment.payer,
      channel: 'mpp',
      transaction: payment.hash,
      route: built.quote.route.id,
    },
    'swap_paid',
  )
  return { kind: 'paid', result, receipt: mpp.receiptHeader(payment, at) }
}

const NOT_ON_THIS_DEPLOYMENT =
  'MPP is not offered on this deployment (it has no Tempo RPC to verify payments with): pay this swap over x402 instead (X-PAYMENT or PAYMENT-SIGNATURE).'
const NOT_ON_THIS_PATH =
  'MPP is not offered on this path: send Authorization: Payment to POST /api/mpp/swap, or pay over x402 here (X-PAYMENT or PAYMENT-SIGNATURE).'

/** How long a payer waits before repeating a request the Tempo RPC could not verify. */
const RPC_RETRY_AFTER_SEC = 5

const ALREADY_USED = 'This Tempo transaction has already paid for a swap. Pay a new challenge with a new transfer.'

type Refuse = (reason: MppRejectReason | 'unsupported_scheme', detail: string) => Promise<PaymentRequired>

/** The 402 of a refused credential: the route's x402 offer with the reason code, and a fresh MPP challenge if offered. */
function refusal(deps: ServiceDeps, mpp: TempoCharge | undefined, resource: string): Refuse {
  return async (reason, detail) => {
    deps.log.info({ event: 'payment_rejected', channel: 'mpp', reason }, 'payment_rejected')
    const requirements = paymentRequirementsFor(deps, resource)
    return {
      kind: 'payment_required',
      challenge: { x402Version: 1, error: reason, accepts: [requirements], detail },
      paymentRequired: paymentRequiredV2Of(requirements, reason),
      ...(mpp === undefined ? {} : { wwwAuthenticate: await mpp.challengeHeader() }),
    }
  }
}

/**
 * A payment on record: the credential that paid (same hash, same challenge) with the same request gets its swap and
 * receipt again; anything else is told which swap the payment bought. Nothing is screened, built or verified again.
 */
async function answerRetry(
  deps: ServiceDeps,
  mpp: TempoCharge,
  recorded: MppPaymentRow,
  challengeId: string,
  requestKey: string,
  refuse: Refuse,
): Promise<PayForMppSwapReturnType> {
  // A payment replayed for another request is refused like a bad credential, and counted toward its source's limit.
  if (recorded.challengeId !== challengeId || recorded.requestKey !== requestKey)
    return {
      ...(await refuse(
        'payment_already_used',
        `This Tempo transaction already paid for swap ${recorded.swapRef}. Repeat that same request with the same credential to receive ${recorded.swapRef} again; for a different swap, pay a new challenge with a new transfer. Nothing was claimed for this request.`,
      )),
      isBadCredential: true,
    }
  deps.log.info({ event: 'swap_redelivered', swap_ref: recorded.swapRef, payer: recorded.payer, channel: 'mpp' }, 'swap_redelivered')
  return {
    kind: 'paid',
    result: redeliveredSwapResult(recorded.result as SwapResult, deps.clock()),
    receipt: mpp.receiptHeader(paymentOfRow(recorded), new Date(recorded.claimedAt)),
  }
}

function claimOf(payment: MppPayment, swapRef: string, requestKey: string, result: SwapResult, claimedAt: Date) {
  return {
    hash: payment.hash,
    chainId: payment.chainId,
    payer: payment.payer,
    amount: payment.amountAtomic,
    currency: payment.currency,
    recipient: payment.recipient,
    challengeId: payment.challengeId,
    challengeExpires: new Date(payment.expires),
    swapRef,
    requestKey,
    result,
    claimedAt,
  }
}

function paymentOfRow(row: MppPaymentRow): MppPayment {
  return {
    hash: row.hash as MppPayment['hash'],
    payer: row.payer as MppPayment['payer'],
    challengeId: row.challengeId,
    expires: row.challengeExpires,
    amountAtomic: row.amount,
    recipient: row.recipient as MppPayment['recipient'],
    currency: row.currency as MppPayment['currency'],
    chainId: row.chainId,
  }
}
