import * as z from 'zod'
import { ChainCode } from './catalogue.ts'
import { QuoteParams } from './quote.ts'
import { unknownFieldsError } from './unknownFields.ts'
import { ApprovalWire, TransactionRequestWire } from './swap.ts'

/** Spec 4 rule 7 and 8: a batch disbursement pays 1 to 50 recipients per call. */
const MAX_DISBURSEMENT_RECIPIENTS = 50

const RECIPIENT_LIMIT = `must list 1 to ${MAX_DISBURSEMENT_RECIPIENTS} recipients (at most ${MAX_DISBURSEMENT_RECIPIENTS} per call)`

/** One recipient of a batch: where the money goes, and how much of the source token the sender allocates to it. */
const RECIPIENT_FIELDS = {
  address: QuoteParams.shape.fromAddress.describe('Recipient wallet address on toChain'),
  toChain: QuoteParams.shape.toChain,
  toToken: QuoteParams.shape.toToken,
  amount: QuoteParams.shape.fromAmount.describe(
    'Decimal amount of the SOURCE token (fromToken) allocated to this recipient, fee included; no more fraction digits than fromToken has',
  ),
}
const DisbursementRecipient = z.strictObject(RECIPIENT_FIELDS, { error: unknownFieldsError({ known: Object.keys(RECIPIENT_FIELDS) }) })

const DISBURSE_FIELDS = {
  fromChain: QuoteParams.shape.fromChain,
  fromToken: QuoteParams.shape.fromToken,
  fromAddress: QuoteParams.shape.fromAddress.describe('The signer: pays every recipient from this wallet'),
  recipients: z.array(DisbursementRecipient).min(1, RECIPIENT_LIMIT).max(MAX_DISBURSEMENT_RECIPIENTS, RECIPIENT_LIMIT),
  slippage: QuoteParams.shape.slippage,
}

/** POST /api/v1/batch/disburse: one source (chain, token, sender) paying many recipients in one transaction. */
export const DisburseRequest = z
  .strictObject(DISBURSE_FIELDS, { error: unknownFieldsError({ known: Object.keys(DISBURSE_FIELDS) }) })
  .meta({ id: 'DisburseRequest' })
export type DisburseRequest = z.infer<typeof DisburseRequest>

export const DisbursementItem = z.object({
  index: z.number().int().describe('Position of the recipient in the request'),
  address: z.string().describe('The recipient, EIP-55 checksummed'),
  toChain: ChainCode,
  toToken: z.string().describe('Canonical symbol'),
  amount: z.string().describe('fromToken allocated to this recipient: what the sender pays for it, fee included'),
  fee: z.string().describe('The 0.5% all-in fee in fromToken, rounded up; route costs are paid out of it'),
  toAmount: z.string().describe('Estimated toToken the recipient receives (exact for a transfer: amount less fee)'),
  toAmountMin: z.string().describe('The least toToken the recipient receives, or the leg does not happen'),
  kind: z
    .enum(['transfer', 'swap', 'bridge'])
    .describe('transfer: same token on the source chain; swap: another token there; bridge: another chain'),
  bridge: z.string().describe('Bridge protocol used, or "none"'),
  estimatedDuration: z.number().int().describe('p50 seconds until the recipient is paid'),
})
export type DisbursementItem = z.infer<typeof DisbursementItem>

export const DisbursementTotals = z.object({
  amount: z.string().describe('Sum of the amounts, in fromToken: what the signer pays in all (the approval)'),
  fee: z.string().describe('Sum of the fees, in fromToken'),
  recipients: z.number().int(),
})
export type DisbursementTotals = z.infer<typeof DisbursementTotals>

/** The answer: every recipient's leg, and the one router transaction (executeBatch) that pays them all. */
export const DisbursementResult = z
  .object({
    disbursementRef: z.string().regex(/^dsb_[0-9A-Z]{26}$/),
    status: z.literal('built').describe('Built and recorded; it moves once the signer signs and broadcasts it'),
    fromChain: ChainCode,
    fromToken: z.string(),
    fromAddress: z.string(),
    items: z.array(DisbursementItem),
    totals: DisbursementTotals,
    approval: ApprovalWire,
    transactionRequest: TransactionRequestWire,
    deadline: z
      .string()
      .describe(
        'ISO 8601: the router refuses transactionRequest in any block after this (OrderExpired) and nothing moves; build again then',
      ),
    nextSteps: z.array(z.string()).describe('What the signer does, in order'),
  })
  .meta({ id: 'DisbursementResult' })
export type DisbursementResult = z.infer<typeof DisbursementResult>
