import * as z from 'zod'

/**
 * What an x402 v1 facilitator answers to `POST /verify` (x402 `VerifyResponse`). x402's own facilitator omits
 * `invalidReason` when valid; others send null, so both are accepted.
 */
export const FacilitatorVerifyResponse = z.object({
  isValid: z.boolean(),
  invalidReason: z.string().nullish(),
  payer: z.string().nullish(),
})
export type FacilitatorVerifyResponse = z.infer<typeof FacilitatorVerifyResponse>

/**
 * What an x402 v1 facilitator answers to `POST /settle` (x402 `SettleResponse`). Success must name the Base
 * transaction: without a hash there is nothing to show the payer or reconcile. A failure's `transaction` is `""`
 * unless a transaction was mined and reverted.
 */
export const FacilitatorSettleResponse = z.discriminatedUnion('success', [
  z.object({
    success: z.literal(true),
    transaction: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 32-byte transaction hash'),
    network: z.string(),
    payer: z.string().nullish(),
  }),
  z.object({
    success: z.literal(false),
    errorReason: z.string().nullish(),
    transaction: z.string().nullish(),
    network: z.string().nullish(),
    payer: z.string().nullish(),
  }),
])
export type FacilitatorSettleResponse = z.infer<typeof FacilitatorSettleResponse>
