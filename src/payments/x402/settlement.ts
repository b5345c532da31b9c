import type { Address, Hex } from 'viem'
import type { Logger } from 'pino'
import type { PaymentPayload, PaymentRejectReason, PaymentRequirements } from '../../schemas/x402.ts'
import type { PaymentReservation, PaymentRow, Store, SwapRecord } from '../../store/createStore.ts'

/** A payment whose fields and signature passed verification: the EIP-3009 authorization, in atomic units. */
export type VerifiedPayment = {
  payer: Address
  payTo: Address
  asset: Address
  value: bigint
  validAfter: bigint
  validBefore: bigint
  nonce: Hex
  /** The 65-byte ECDSA signature over the TransferWithAuthorization. */
  signature: Hex
  /** What the client sent, for a facilitator that verifies it again. */
  payload: PaymentPayload
  /** What we asked for, for the same reason. */
  requirements: PaymentRequirements
}

/** DESIGN 7.10: how an accepted payment becomes money. */
export type SettlementMode = 'ledger' | 'onchain' | 'facilitator'

export type PaymentRejection = { ok: false; reason: PaymentRejectReason; message: string }

export type CheckOutcome = { ok: true } | PaymentRejection

export type SettleOutcome =
  | { ok: true; transaction: string }
  /**
   * `isAmbiguous`: a transaction was broadcast but its outcome is unknown (timeout); the reservation must stay, so the
   * same authorization cannot be spent twice, and `transaction` names what to reconcile.
   */
  | (PaymentRejection & { isAmbiguous?: boolean; transaction?: string })

/**
 * Money moved by an outside party (Base itself, or an x402 facilitator): checked before any work, then settled. The
 * on-chain and facilitator settlers are these two steps wrapped by `collectExternally`.
 */
export type ExternalSettlement = {
  /**
   * Checks that need the chain or a facilitator before any work is done (authorization unused, balance enough).
   * Runs after the local (payer, nonce) reservation.
   */
  check(payment: VerifiedPayment): Promise<CheckOutcome>
  /** Moves the money. `swapEaziRef` names the swap the payment is for. */
  settle(payment: VerifiedPayment, swapEaziRef: string): Promise<SettleOutcome>
  /**
   * Looks up where an unsettled payment stands (settlement_pending) without broadcasting again: a retry with the same
   * authorization calls it, and so will the lifecycle reconciler. Absent: the payment stays pending for an operator.
   */
  reconcile?(payment: PaymentRow, nowSec: bigint): Promise<ReconcileOutcome>
}

/**
 * Where an unsettled payment stands. `settled`: its transaction confirmed (or the authorization was used on chain,
 * which pays only our payTo); `unused`: money certainly did not move and cannot move under the broadcast we made (it
 * reverted, or the authorization expired unused), so the payment can be released; `pending`: not known yet.
 */
export type ReconcileOutcome =
  | { state: 'settled'; transaction: string }
  | { state: 'unused'; message: string }
  | { state: 'pending'; message: string }

/** The store writes a settler makes: single-use reservation, release, and the swap recorded with its payment. */
export type PaymentLedger = Pick<
  Store,
  'reservePayment' | 'releasePayment' | 'markPaymentUnsettled' | 'recordPaidSwap' | 'recordSettledSwap'
>

/** What a payment buys, kept with it for a retry with the same authorization (payForSwap.ts). */
export type PaidDelivery = {
  /** The normalised request the payment bought (paidRequestKey). */
  requestKey: string
  /** The answer, as it goes out (a SwapResult). */
  result: unknown
}

export type CollectParameters = {
  payment: VerifiedPayment
  /** The built swap the payment buys, recorded with it. */
  swap: SwapRecord
  /** Kept with the payment from its reservation on, so a retry gets this same swap. */
  delivery?: PaidDelivery
  store: PaymentLedger
  now: () => Date
  log: Logger
}

/**
 * Collected (the receipt's transaction), or refused; `isAmbiguous`: money may have moved, the authorization stays held
 * (settlement_pending), with the broadcast `transaction` when there is one.
 */
export type CollectOutcome = { ok: true; transaction: string } | (PaymentRejection & { isAmbiguous?: boolean; transaction?: string })

/**
 * Takes payment for a built swap (DESIGN 7.9, 7.10); each mode is one implementation (ledger, on-chain,
 * facilitator). Whatever the mode, an authorization pays for at most one swap across every replica, a swap is
 * recorded with the payment that bought it, and a refusal leaves nothing charged unless `isAmbiguous` says so.
 */
export type Settler = {
  mode: SettlementMode
  collect(parameters: CollectParameters): Promise<CollectOutcome>
  /** As ExternalSettlement.reconcile; the ledger never leaves a payment unsettled, so it has none. */
  reconcile?(payment: PaymentRow, nowSec: bigint): Promise<ReconcileOutcome>
}

/** The reservation row of a payment held for one swap. */
export function reservationOf(
  payment: VerifiedPayment,
  mode: SettlementMode,
  swapRef: string,
  reservedAt: Date,
  delivery?: PaidDelivery,
): PaymentReservation {
  return {
    ...(delivery === undefined ? {} : { requestKey: delivery.requestKey, result: delivery.result }),
    payer: payment.payer,
    nonce: payment.nonce,
    value: payment.value,
    asset: payment.asset,
    payTo: payment.payTo,
    validAfter: payment.validAfter,
    validBefore: payment.validBefore,
    signature: payment.signature,
    settlementMode: mode,
    swapRef,
    reservedAt,
  }
}

/** The refusal of an authorization that already paid for a swap (here or on another replica). */
export const ALREADY_USED: PaymentRejection = {
  ok: false,
  reason: 'payment_already_used',
  message:
    'This authorization (payer and nonce) has already paid for a swap. Sign a new payment with a fresh nonce; x402 clients do so on every call.',
}
