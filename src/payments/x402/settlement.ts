import type { Address, Hex } from 'viem'
import type { PaymentPayload, PaymentRejectReason, PaymentRequirements } from '../../schemas/x402.ts'

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

/** Settles verified payments; each mode is one implementation (ledger, on-chain, facilitator). */
export type Settler = {
  mode: SettlementMode
  /**
   * Checks that need the chain or a facilitator before any work is done (authorization unused, balance enough).
   * Runs after the local (payer, nonce) reservation.
   */
  check(payment: VerifiedPayment): Promise<CheckOutcome>
  /** Moves the money, or records it (ledger). `swapEaziRef` names the swap the payment is for. */
  settle(payment: VerifiedPayment, swapEaziRef: string): Promise<SettleOutcome>
}
