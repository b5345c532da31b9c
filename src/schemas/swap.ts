import * as z from 'zod'
import { AddressSchema as Address, HexSchema as Hex } from './address.ts'
import { QuoteResult, RouteWire } from './quote.ts'
import { unknownFieldsError } from './unknownFields.ts'

/** An unsigned EVM transaction, ready for `eth_sendTransaction` (value and gas as hex quantities). */
export const TransactionRequestWire = z
  .object({
    chainId: z.number().int(),
    from: Address,
    to: Address,
    data: Hex,
    value: Hex,
    gas: Hex.describe(
      "Gas limit: the execution estimate with the safety margin and, on Arbitrum, the L1 data fee's gas for this transaction's calldata (Arbitrum charges it inside the limit)",
    ),
  })
  .meta({ id: 'TransactionRequest' })
export type TransactionRequest = z.infer<typeof TransactionRequestWire>

/** The allowance the router needs before `transactionRequest`, and the transactions that grant it. */
export const ApprovalWire = z
  .object({
    token: Address,
    spender: Address.describe('Our router on the source chain'),
    amount: z.string().describe('Atomic units of fromToken: exactly fromAmount'),
    resetFirst: z.boolean().describe('Sign resetTransactionRequest (approve 0) first: the token refuses to change a non-zero allowance'),
    transactionRequest: TransactionRequestWire,
    resetTransactionRequest: TransactionRequestWire.optional(),
  })
  .meta({ id: 'Approval' })

/** Spec 2.4 `route`: bridge, tool and the fee breakdown, with the steps the transaction executes. */
export const SwapRouteWire = RouteWire.extend({
  bridge: z.string(),
  tool: z.string(),
  fees: z.object({
    swapFee: QuoteResult.shape.fee.describe("0.5% all-in, in fromToken; the route's real costs are paid out of it"),
    agentCallFee: z
      .object({ amount: z.string(), token: z.literal('USDC'), network: z.literal('base'), atomic: z.string() })
      .nullable()
      .describe('USD 0.02 per paid swap call; null on keyed swaps'),
    routeCostUsd: z.string().describe('What the route itself costs (bridge, DEX, destination gas), inside the swap fee'),
    estimatedGasUSD: z.string().describe("Source-chain gas, paid by the signer's wallet"),
  }),
}).meta({ id: 'SwapRoute' })

/** Spec 2.4: the answer of a paid (and, later, keyed) swap call: the quote's amounts, and what to sign. */
export const SwapResult = QuoteResult.pick({
  fromChain: true,
  toChain: true,
  fromToken: true,
  toToken: true,
  fromAmount: true,
  toAmount: true,
  toAmountMin: true,
  estimatedGasUSD: true,
  estimatedDuration: true,
})
  .extend({
    swapEaziRef: z.string().regex(/^swp_[0-9A-Z]{26}$/),
    status: z.literal('built').describe('Built and recorded; it moves once the user signs and broadcasts it'),
    transactionRequest: TransactionRequestWire,
    deadline: z
      .string()
      .describe(
        "ISO 8601: the router refuses transactionRequest in any block after this (OrderExpired) and nothing moves; build again then. The quote's expiresAt is how long its quoteId is accepted, this how long the built transaction can run",
      ),
    destinationDeadline: z
      .string()
      .optional()
      .describe(
        "ISO 8601, only when the route swaps on the destination chain: if the bridge delivers after this, the swap there does not run and the recipient gets the bridged token (the bridge step's toToken in route.steps) instead",
      ),
    approval: ApprovalWire,
    route: SwapRouteWire,
    toAddress: Address,
    nextSteps: z.array(z.string()).describe('What the signer does, in order'),
  })
  .meta({ id: 'SwapResult' })
export type SwapResult = z.infer<typeof SwapResult>

/** Spec endpoint 10: a quote the service signed, and the recipient when the quote named none. */
const KEYED_SWAP_FIELDS = {
  quoteId: z.string().min(1).max(4096).describe('The quoteId of a quote from POST /api/v1/quote or /api/x402/quote, unexpired (60 s)'),
  toAddress: Address.optional().describe('Recipient, only when the quote was to its sender; defaults to the sender'),
}

/** Strict, as the quote's body: an unknown field is refused naming the field meant (`recipient`: toAddress). */
export const KeyedSwapRequest = z
  .strictObject(KEYED_SWAP_FIELDS, {
    error: unknownFieldsError({
      known: Object.keys(KEYED_SWAP_FIELDS),
      elsewhere: Object.fromEntries(
        ['fromChain', 'toChain', 'fromToken', 'toToken', 'fromAmount', 'fromAddress', 'slippage'].map((field) => [
          field,
          `the quote the quoteId names fixes ${field}; to change it, quote again and send the new quoteId`,
        ]),
      ),
    }),
  })
  .meta({ id: 'KeyedSwapRequest' })
export type KeyedSwapRequest = z.infer<typeof KeyedSwapRequest>

/** A swap's life: built and recorded, then completed by a tracker (store.intel.completeSwap) with its outcome. */
export const SwapStatus = z
  .enum(['built', 'done', 'refunded', 'failed', 'not_found'])
  .describe(
    'built: the transaction was built and recorded (SwapEazi never broadcasts it); a tracker later sets done, refunded, failed or not_found',
  )
export type SwapStatus = z.infer<typeof SwapStatus>

/** A swap as the store keeps it (GET /api/v1/swap/{ref}). */
export const SwapRecordWire = z
  .object({
    swapEaziRef: z.string(),
    status: SwapStatus,
    channel: z.enum(['x402', 'mpp', 'api_key', 'disbursement']).describe('How the swap was paid for or authorised'),
    createdAt: z.string().describe('ISO 8601'),
    fromChain: z.string(),
    toChain: z.string(),
    fromToken: z.string(),
    toToken: z.string(),
    fromAmount: z.string(),
    toAmount: z.string(),
    toAmountMin: z.string(),
    fromAddress: Address,
    toAddress: Address,
    transactionRequest: TransactionRequestWire,
  })
  .meta({ id: 'SwapRecord' })
export type SwapRecordWire = z.infer<typeof SwapRecordWire>
