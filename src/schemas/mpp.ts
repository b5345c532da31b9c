import * as z from 'zod'

/**
 * The reason codes a refused MPP credential carries in the 402's `error` (beside DESIGN 7.8's x402 codes, whose
 * meanings they share where the names are the same).
 */
export const MPP_REJECT_REASONS = [
  'invalid_payment',
  'invalid_challenge',
  'challenge_expired',
  'unsupported_mode',
  'payment_not_found',
  'payment_reverted',
  'asset_mismatch',
  'amount_mismatch',
  'recipient_mismatch',
  'payer_mismatch',
  'memo_mismatch',
  'payment_already_used',
] as const
export const MppRejectReason = z.enum(MPP_REJECT_REASONS)
export type MppRejectReason = z.infer<typeof MppRejectReason>
