import * as z from 'zod'
import { AddressSchema as EvmAddress, fixedHexSchema } from './address.ts'

/** The reason codes a rejected payment carries in the 402 challenge's `error` (DESIGN 7.8). */
export const PAYMENT_REJECT_REASONS = [
  'invalid_payment',
  'unsupported_scheme',
  'network_mismatch',
  'invalid_signature',
  'amount_mismatch',
  'recipient_mismatch',
  'authorization_expired',
  'authorization_not_yet_valid',
  'payment_already_used',
  'insufficient_funds',
  'settlement_failed',
  'settlement_pending',
] as const
export const PaymentRejectReason = z.enum(PAYMENT_REJECT_REASONS)
export type PaymentRejectReason = z.infer<typeof PaymentRejectReason>

/** The most a uint256 holds: EIP-3009 signs value, validAfter and validBefore as uint256. */
const MAX_UINT256 = 2n ** 256n - 1n

const UintString = z
  .string()
  .regex(/^[0-9]{1,78}$/, 'must be a non-negative integer string')
  // The regex's own issue covers text that is not digits; zod runs this check too, so it must not throw on it.
  .refine((text) => !/^[0-9]+$/.test(text) || BigInt(text) <= MAX_UINT256, 'must fit a uint256 (at most 2^256 - 1)')

/**
 * Spec 2.6 plus what real x402 v1 clients require (DESIGN 7.6): x402-fetch 1.2.0 parses every entry of `accepts`
 * and signs over `extra.name`/`extra.version`, so no member is ever null.
 */
export const PaymentRequirements = z
  .object({
    scheme: z.literal('exact'),
    network: z.literal('base'),
    maxAmountRequired: UintString.describe('Atomic USDC units (6 decimals): "20000" is USD 0.02'),
    resource: z.url().describe('Absolute URL of the paid endpoint'),
    description: z.string(),
    mimeType: z.literal('application/json'),
    payTo: EvmAddress.describe("The service's receiving wallet"),
    maxTimeoutSeconds: z.number().int().positive(),
    asset: EvmAddress.describe('USDC on Base, from the manifest'),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    extra: z.object({ name: z.string(), version: z.string() }).describe('EIP-712 domain of the asset'),
  })
  .meta({ id: 'PaymentRequirements' })
export type PaymentRequirements = z.infer<typeof PaymentRequirements>

/** Spec 2.5: the body of every 402. `error` is a reason code from DESIGN 7.8, or why payment is needed at all. */
export const X402Challenge = z
  .object({
    x402Version: z.literal(1),
    error: z.string(),
    accepts: z.array(PaymentRequirements),
    /** What to do next, for an agent reading the challenge (not part of x402; clients ignore it). */
    detail: z.string().optional(),
  })
  .meta({ id: 'X402Challenge' })
export type X402Challenge = z.infer<typeof X402Challenge>

/** An EIP-3009 TransferWithAuthorization as x402 v1 "exact" carries it. */
export const ExactEvmAuthorization = z.object({
  from: EvmAddress,
  to: EvmAddress,
  value: UintString,
  validAfter: UintString,
  validBefore: UintString,
  nonce: fixedHexSchema(32, 'must be 0x followed by 64 hex characters'),
})

/** The JSON inside `X-PAYMENT` (x402 v1, scheme exact, EVM). Version and scheme are checked after parsing. */
export const PaymentPayload = z.object({
  x402Version: z.number().int(),
  scheme: z.string(),
  network: z.string(),
  payload: z.object({
    signature: z.templateLiteral(['0x', z.string().regex(/^[0-9a-fA-F]+$/)], {
      error: (issue) => (typeof issue.input === 'string' ? 'must be 0x-prefixed hex' : undefined),
    }),
    authorization: ExactEvmAuthorization,
  }),
})
export type PaymentPayload = z.infer<typeof PaymentPayload>

/** The JSON inside `X-PAYMENT-RESPONSE`: x402's SettleResponse, plus how it was settled. */
export const PaymentReceipt = z
  .object({
    success: z.boolean(),
    transaction: z.string().describe('Base transaction hash; "ledger:<swapEaziRef>" when recorded on our ledger, not broadcast'),
    network: z.literal('base'),
    payer: EvmAddress,
    settlement: z.enum(['ledger', 'onchain', 'facilitator']),
  })
  .meta({ id: 'PaymentReceipt' })
export type PaymentReceipt = z.infer<typeof PaymentReceipt>

/** x402 v2 names Base mainnet by CAIP-2 (`base` in v1). */
export const BASE_CAIP2 = 'eip155:8453'

/** One x402 v2 payment option (`accepts` entry): v1's requirement with `amount`, CAIP-2 network, no resource fields. */
export const PaymentRequirementsV2 = z
  .object({
    scheme: z.literal('exact'),
    network: z.literal(BASE_CAIP2),
    amount: UintString.describe('Atomic USDC units (6 decimals): "20000" is USD 0.02'),
    asset: EvmAddress.describe('USDC on Base'),
    payTo: EvmAddress.describe("The service's receiving wallet"),
    maxTimeoutSeconds: z.number().int().positive(),
    extra: z.object({ name: z.string(), version: z.string() }).describe('EIP-712 domain of the asset'),
  })
  .meta({ id: 'PaymentRequirementsV2' })
export type PaymentRequirementsV2 = z.infer<typeof PaymentRequirementsV2>

/** What the paid resource is, as x402 v2 puts it at the top of PaymentRequired (and a PaymentPayload may echo). */
export const ResourceInfoV2 = z.object({
  url: z.string(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
})
export type ResourceInfoV2 = z.infer<typeof ResourceInfoV2>

/** The JSON inside `PAYMENT-REQUIRED` (x402 v2): sent on every 402 beside the v1 body. */
export const PaymentRequiredV2 = z
  .object({
    x402Version: z.literal(2),
    error: z.string().optional(),
    resource: ResourceInfoV2,
    accepts: z.array(PaymentRequirementsV2),
    extensions: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'PaymentRequiredV2' })
export type PaymentRequiredV2 = z.infer<typeof PaymentRequiredV2>

/**
 * The JSON inside `PAYMENT-SIGNATURE` (x402 v2, scheme exact, EVM). `accepted` is kept loose here (any object) so
 * that an entry we did not offer gets its own message when compared with what we did; the version is checked after
 * parsing.
 */
export const PaymentPayloadV2 = z.object({
  x402Version: z.number().int(),
  resource: ResourceInfoV2.optional(),
  accepted: z.record(z.string(), z.unknown()),
  payload: PaymentPayload.shape.payload,
  extensions: z.record(z.string(), z.unknown()).optional(),
})
export type PaymentPayloadV2 = z.infer<typeof PaymentPayloadV2>

/** The JSON inside `PAYMENT-RESPONSE`: x402 v2's SettleResponse, plus how it was settled. */
export const SettleResponseV2 = z
  .object({
    success: z.boolean(),
    transaction: z.string().describe('Base transaction hash; "ledger:<swapEaziRef>" when recorded on our ledger, not broadcast'),
    network: z.literal(BASE_CAIP2),
    payer: EvmAddress,
    errorReason: z.string().optional(),
    settlement: z.enum(['ledger', 'onchain', 'facilitator']).optional(),
  })
  .meta({ id: 'SettleResponseV2' })
export type SettleResponseV2 = z.infer<typeof SettleResponseV2>

/** DESIGN 7.19: `/.well-known/x402.json`, each paid endpoint with the requirements its 402 carries. */
export const X402Manifest = z
  .object({
    x402Version: z.literal(1),
    resources: z.array(
      z.object({
        resource: z.url(),
        method: z.literal('POST'),
        accepts: z.array(PaymentRequirements).describe('x402 v1: what the 402 body offers; pay it in X-PAYMENT'),
        acceptsV2: z
          .array(PaymentRequirementsV2)
          .describe('Extension: the same offer in x402 v2, as the PAYMENT-REQUIRED header carries it; pay it in PAYMENT-SIGNATURE'),
      }),
    ),
  })
  .meta({ id: 'X402Manifest' })
export type X402Manifest = z.infer<typeof X402Manifest>
