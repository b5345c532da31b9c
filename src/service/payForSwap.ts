import { decodePaymentHeader } from '../payments/x402/decodePaymentHeader.ts'
import { AGENT_CALL_FEE_ATOMIC } from '../payments/x402/paymentRequirements.ts'
import type { PaymentRejection, VerifiedPayment } from '../payments/x402/settlement.ts'
import { verifyPayment } from '../payments/x402/verifyPayment.ts'
import type { QuoteParams } from '../schemas/quote.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { PaymentReceipt, X402Challenge } from '../schemas/x402.ts'
import type { PaymentReservation, SwapChannel } from '../store/createStore.ts'
import { type BuildSwapTransactionReturnType, buildSwapTransaction } from './buildSwapTransaction.ts'
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
  /** Absolute URL of the endpoint called: the challenge's `resource`. */
  resource: string
  channel: SwapChannel
}

export type PayForSwapReturnType =
  | { kind: 'paid'; result: SwapResult; receipt: PaymentReceipt }
  | { kind: 'payment_required'; challenge: X402Challenge }

/**
 * The pay-per-call swap (spec 3, DESIGN 7.9): screen, route and build first, so a request that cannot succeed is
 * refused (403, 422) before any payment is asked or taken; then verify the X-PAYMENT, reserve (payer, nonce) in the
 * store, check and settle, and record the swap with its payment in one transaction before answering. Whatever
 * fails after the reservation gives it back, so nobody pays for a swap they did not get. On the ledger, where the
 * record is the settlement, reservation, settlement and record are one statement.
 */
export async function payForSwap(deps: ServiceDeps, parameters: PayForSwapParameters): Promise<PayForSwapReturnType> {
  const { params, paymentHeader, resource, channel } = parameters
  await screenSwapAddresses(deps, params)
  const swapEaziRef = newSwapRef(deps.clock())
  const built = buildSwapTransaction(deps, { params, swapEaziRef })
  const requirements = paymentRequirementsFor(deps, resource)
  const challenge = (error: string, detail: string): PayForSwapReturnType => ({
    kind: 'payment_required',
    challenge: { x402Version: 1, error, accepts: [requirements], detail },
  })
  if (paymentHeader === undefined)
    return challenge(
      'X-PAYMENT header is required',
      `This swap costs USD 0.02 in USDC on Base. Sign accepts[0] (EIP-3009 TransferWithAuthorization of ${requirements.maxAmountRequired} atomic USDC to ${requirements.payTo}) and repeat the same request with the X-PAYMENT header. Quotes are free at POST /api/x402/quote.`,
    )

  const decoded = decodePaymentHeader(paymentHeader)
  if (!decoded.ok) return rejected(deps, challenge, decoded)
  const verified = await verifyPayment({ payload: decoded.payload, requirements, nowSec: Math.floor(deps.clock() / 1000) })
  if (!verified.ok) return rejected(deps, challenge, verified)
  const payment = verified.payment

  const reservation: PaymentReservation = {
    payer: payment.payer,
    nonce: payment.nonce,
    value: payment.value,
    asset: payment.asset,
    payTo: payment.payTo,
    validAfter: payment.validAfter,
    validBefore: payment.validBefore,
    signature: payment.signature,
    settlementMode: deps.settler.mode,
    swapRef: swapEaziRef,
    reservedAt: new Date(deps.clock()),
  }
  const alreadyUsed = (): PayForSwapReturnType =>
    rejected(deps, challenge, {
      ok: false,
      reason: 'payment_already_used',
      message: 'This authorization (payer and nonce) has already paid for a swap. Sign a new payment with a fresh nonce; x402 clients do so on every call.',
    })

  let transaction: string
  if (deps.settler.mode === 'ledger') {
    // On the ledger the record is the settlement: reserve, settle and record the swap in one atomic statement.
    const checked = await deps.settler.check(payment)
    if (!checked.ok) return rejected(deps, challenge, checked)
    const settled = await deps.settler.settle(payment, swapEaziRef)
    if (!settled.ok) return rejected(deps, challenge, settled)
    const isRecorded = await deps.store.recordSettledSwap(
      reservation,
      { transaction: settled.transaction, settledAt: new Date(deps.clock()) },
      swapRecordOf(built, channel, new Date(deps.clock())),
    )
    if (!isRecorded) return alreadyUsed()
    transaction = settled.transaction
  } else {
    if (!(await deps.store.reservePayment(reservation))) return alreadyUsed()
    const release = (): Promise<void> => deps.store.releasePayment(payment.payer, payment.nonce, swapEaziRef)
    try {
      const checked = await deps.settler.check(payment)
      if (!checked.ok) {
        await release()
        return rejected(deps, challenge, checked)
      }
      const settled = await deps.settler.settle(payment, swapEaziRef)
      if (!settled.ok) {
        if (settled.isAmbiguous === true)
          await deps.store.markPaymentUnsettled(payment.payer, payment.nonce, {
            error: settled.message,
            ...(settled.transaction === undefined ? {} : { transaction: settled.transaction }),
          })
        else await release()
        return rejected(
          deps,
          challenge,
          settled,
          settled.isAmbiguous === true
            ? ` The authorization stays reserved, so it can never pay twice; if the settlement lands you were charged for ${swapEaziRef} without receiving it: quote that reference to support.`
            : undefined,
        )
      }
      transaction = settled.transaction
    } catch (error) {
      await release().catch(() => {})
      throw error
    }
    await recordSwap(deps, { built, payment, transaction, channel })
  }
  deps.log.info(
    { event: 'swap_paid', swap_ref: swapEaziRef, payer: payment.payer, settlement: deps.settler.mode, transaction, route: built.quote.route.id },
    'swap_paid',
  )
  return {
    kind: 'paid',
    result: formatSwapResult(built, { atomic: AGENT_CALL_FEE_ATOMIC }),
    receipt: { success: true, transaction, network: 'base', payer: payment.payer, settlement: deps.settler.mode },
  }
}

function rejected(
  deps: ServiceDeps,
  challenge: (error: string, detail: string) => PayForSwapReturnType,
  rejection: PaymentRejection,
  /** Replaces "Nothing was charged." when that is not certain (a broadcast whose outcome is unknown). */
  outcome = ' Nothing was charged.',
): PayForSwapReturnType {
  deps.log.info({ event: 'payment_rejected', reason: rejection.reason }, 'payment_rejected')
  return challenge(rejection.reason, `${rejection.message}${outcome}`)
}

/**
 * Settles the reservation and records the swap in one transaction, after money moved on chain or through a
 * facilitator. If that write fails the swap is still delivered (the user paid for it) and the failure is logged
 * with the transaction to reconcile.
 */
async function recordSwap(
  deps: ServiceDeps,
  args: { built: BuildSwapTransactionReturnType; payment: VerifiedPayment; transaction: string; channel: SwapChannel },
): Promise<void> {
  const { built, payment, transaction, channel } = args
  const now = new Date(deps.clock())
  try {
    await deps.store.recordPaidSwap({ payer: payment.payer, nonce: payment.nonce, transaction, settledAt: now }, swapRecordOf(built, channel, now))
  } catch (error) {
    deps.log.error(
      { event: 'swap_record_failed', swap_ref: built.swapEaziRef, payer: payment.payer, nonce: payment.nonce, transaction, err: error },
      'paid swap delivered but not recorded: reconcile from the transaction',
    )
  }
}
