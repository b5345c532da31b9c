import type { SwapStatus } from '../schemas/swap.ts'
import { isoTimestamp } from './sql.ts'

/** A verified x402 authorization held for one swap, before it is settled. Amounts are atomic USDC. */
export type PaymentReservation = {
  payer: string
  nonce: string
  value: bigint
  asset: string
  payTo: string
  validAfter: bigint
  validBefore: bigint
  /** The signed authorization: on the ledger it is what an operator can still settle on chain. */
  signature: string
  settlementMode: string
  swapRef: string
  reservedAt: Date
  /**
   * What the payment buys, kept so that a retry with the same authorization gets the same swap: the normalised
   * request (paidRequestKey) and the SwapResult answered. Absent on rows written before migration 9.
   */
  requestKey?: string
  result?: unknown
}

export type PaymentStatus = 'reserved' | 'settled' | 'unsettled'

export type PaymentRow = Omit<PaymentReservation, 'reservedAt' | 'requestKey' | 'result'> & {
  requestKey: string | null
  result: unknown
  status: PaymentStatus
  transaction: string | null
  error: string | null
  reservedAt: string
  settledAt: string | null
}

/** How a swap was paid for or authorised. */
export type SwapChannel = 'x402' | 'mpp' | 'api_key' | 'disbursement'

/** A swap the service built: what was asked, what was promised, the transaction, and the payment behind it. */
export type SwapRecord = {
  ref: string
  channel: SwapChannel
  status: 'built'
  fromChain: string
  toChain: string
  fromToken: string
  toToken: string
  fromAmount: string
  toAmount: string
  toAmountMin: string
  fromAddress: string
  toAddress: string
  quote: unknown
  transactionRequest: unknown
  payment?: { payer: string; nonce: string }
  /** The API key a keyed swap was built under (`api_key` channel). */
  keyId?: string
  createdAt: Date
}

export type StoredSwap = Omit<SwapRecord, 'createdAt' | 'payment' | 'keyId' | 'status'> & {
  status: SwapStatus
  payment: { payer: string; nonce: string } | null
  keyId: string | null
  createdAt: string
}

/** What every reader of a `swaps` row maps alike: the swap's ref, its corridor, its amount and when it was built. */
export type SwapCorridor = {
  ref: string
  fromChain: string
  toChain: string
  fromToken: string
  toToken: string
  fromAmount: string
  createdAt: string
}

export function swapCorridorOfRow(row: Record<string, unknown>): SwapCorridor {
  return {
    ref: String(row['ref']),
    fromChain: String(row['from_chain']),
    toChain: String(row['to_chain']),
    fromToken: String(row['from_token']),
    toToken: String(row['to_token']),
    fromAmount: String(row['from_amount']),
    createdAt: isoTimestamp(row['created_at']),
  }
}
