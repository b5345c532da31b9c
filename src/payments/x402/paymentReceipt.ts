import type { PaymentReceipt } from '../../schemas/x402.ts'

/** `X-PAYMENT-RESPONSE` (DESIGN 7.7): standard base64 of the receipt JSON, as x402's decodeXPaymentResponse reads it. */
export function encodePaymentReceipt(receipt: PaymentReceipt): string {
  return Buffer.from(JSON.stringify(receipt), 'utf8').toString('base64')
}
