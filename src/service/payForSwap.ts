import { decodePaymentHeader } from '../payments/x402/decodePaymentHeader.ts'
import { AGENT_CALL_FEE_ATOMIC } from '../payments/x402/paymentRequirements.ts'
import type { PaymentRejection } from '../payments/x402/settlement.ts'
import { decodePaymentSignature, normalisePaymentV2, paymentRequiredV2Of } from '../payments/x402/v2.ts'
import { verifyPayment } from '../payments/x402/verifyPayment.ts'
import type { QuoteParams } from '../schemas/quote.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { PaymentPayload, PaymentReceipt, PaymentRequiredV2, PaymentRequirements, X402Challenge } from '../schemas/x402.ts'
import type { SwapChannel } from '../store/createStore.ts'
import { buildSwapTransaction } from './buildSwapTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { formatSwapResult } from './formatSwapResult.ts'
import { paymentRequirementsFor } from './paymentRequirementsFor.ts'
import { screenSwapAddresses } from './screenSwapAddresses.ts'
import { swapRecordOf } from './swapRecordOf.ts'
import { newSwapRef } from './swapRef.ts'

export type PayForSwapParameters = {
  params: QuoteParams
  /** The raw `X-PAYMENT` header, or undefined on the first call. */
  paymentHeader: string | undefined
  /** The raw `PAYMENT-SIGNATURE` header (x402 v2); the caller refuses it together with `X-PAYMENT`. */
  paymentSignature?: string | undefined
  /** Absolute URL of the endpoint called: the challenge's `resource`. */
  resource: string
  channel: SwapChannel
}

export type PayForSwapReturnType =
  /** `x402Version`: which header paid, so the receipt goes back in the matching one. */
  | { kind: 'paid'; result: SwapResult; receipt: PaymentReceipt; x402Version: 1 | 2 }
  /**
   * `challenge` is the v1 body, `paymentRequired` the same offer in v2 (the `PAYMENT-REQUIRED` header).
   * `isBadCredential`: the payment sent could not be decoded or failed verification (LocalLimits counts it).
   */
  | { kind: 'payment_required'; challenge: X402Challenge; paymentRequired: PaymentRequiredV2; isBadCredential?: true }

type PaymentRequired = Extract<PayForSwapReturnType, { kind: 'payment_required' }>

/**
 * The pay-per-call swap (spec 3, DESIGN 7.9): screen, route and build first, so a request that cannot succeed is
 * refused (403, 422) before any payment is asked or taken; then verify the X-PAYMENT and hand it to the settler, which
 * reserves it (single use), collects it and records the swap with it before the answer leaves; a refusal charges
 * nothing unless it says the outcome is unknown.
 */
export async function payForSwap(deps: ServiceDeps, parameters: PayForSwapParameters): Promise<PayForSwapReturnType> {
  const { params, paymentHeader, paymentSignature, resource, channel } = parameters
  await screenSwapAddresses(deps, params)
  const swapEaziRef = newSwapRef(deps.clock())
  const built = buildSwapTransaction(deps, { params, swapEaziRef })
  const requirements = paymentRequirementsFor(deps, resource)
  const challenge = (error: string, detail: string): PaymentRequired => ({
    kind: 'payment_required',
    challenge: { x402Version: 1, error, accepts: [requirements], detail },
    paymentRequired: paymentRequiredV2Of(requirements, error),
  })
  if (paymentHeader === undefined && paymentSignature === undefined)
    return challenge(
      'X-PAYMENT header is required',
      `This swap costs USD 0.02 in USDC on Base. Sign accepts[0] (EIP-3009 TransferWithAuthorization of ${requirements.maxAmountRequired} atomic USDC to ${requirements.payTo}) and repeat the same request with the X-PAYMENT header. Quotes are free at POST /api/x402/quote.`,
    )

  const x402Version = paymentHeader === undefined ? 2 : 1
  const decoded = paymentHeader === undefined ? decodeV2(paymentSignature ?? '', requirements) : decodePaymentHeader(paymentHeader)
  if (!decoded.ok) return { ...rejected(deps, challenge, decoded), isBadCredential: true }
  const verified = await verifyPayment({ payload: decoded.payload, requirements, nowSec: Math.floor(deps.clock() / 1000) })
  if (!verified.ok) return { ...rejected(deps, challenge, verified), isBadCredential: true }
  const payment = verified.payment

  const collected = await deps.settler.collect({
    payment,
    swap: swapRecordOf(built, channel, new Date(deps.clock())),
    store: deps.store,
    now: () => new Date(deps.clock()),
    log: deps.log,
  })
  if (!collected.ok)
    return rejected(
      deps,
      challenge,
      collected,
      collected.isAmbiguous === true
        ? ` The authorization stays reserved, so it can never pay twice; if the settlement lands you were charged for ${swapEaziRef} without receiving it: quote that reference to support.`
        : undefined,
    )
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
    result: formatSwapResult(built, { atomic: AGENT_CALL_FEE_ATOMIC }),
    receipt: { success: true, transaction, network: 'base', payer: payment.payer, settlement: deps.settler.mode },
    x402Version,
  }
}

/** A `PAYMENT-SIGNATURE` as the internal payment the verifier takes, if it accepted exactly what we offer. */
function decodeV2(header: string, requirements: PaymentRequirements): { ok: true; payload: PaymentPayload } | PaymentRejection {
  const decoded = decodePaymentSignature(header)
  return decoded.ok ? normalisePaymentV2(decoded.payload, requirements) : decoded
}

function rejected(
  deps: ServiceDeps,
  challenge: (error: string, detail: string) => PaymentRequired,
  rejection: PaymentRejection,
  /** Replaces "Nothing was charged." when that is not certain (a broadcast whose outcome is unknown). */
  outcome = ' Nothing was charged.',
): PaymentRequired {
  deps.log.info({ event: 'payment_rejected', reason: rejection.reason }, 'payment_rejected')
  return challenge(rejection.reason, `${rejection.message}${outcome}`)
}
