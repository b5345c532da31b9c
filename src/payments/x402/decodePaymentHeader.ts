import { PaymentPayload } from '../../schemas/x402.ts'
import type { PaymentRejection } from './settlement.ts'

export type DecodePaymentHeaderReturnType = { ok: true; payload: PaymentPayload } | PaymentRejection

/** Far larger than any EOA or ERC-6492 payment; a header beyond it is not a payment. */
const MAX_HEADER_CHARS = 8 * 1024

/**
 * Decodes `X-PAYMENT` (DESIGN 7.7): standard base64 or base64url, padded or not, around the JSON of an x402 v1
 * payment. A v2 payload (`accepted`, CAIP-2 network) gets a message saying it goes in PAYMENT-SIGNATURE.
 */
export function decodePaymentHeader(header: string): DecodePaymentHeaderReturnType {
  const text = header.trim()
  if (text.length === 0 || text.length > MAX_HEADER_CHARS || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text))
    return reject('X-PAYMENT is not base64: send base64 of the x402 payment JSON, as x402 clients do.')
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64').toString('utf8'))
  } catch {
    return reject('X-PAYMENT does not decode to JSON: send base64 of the x402 payment JSON.')
  }
  if (typeof json === 'object' && json !== null && 'x402Version' in json && json.x402Version !== 1)
    return reject(
      `X-PAYMENT carries x402Version ${JSON.stringify(json.x402Version)}; X-PAYMENT takes x402 v1 ("exact" on "base"). Send an x402 v2 payment in the PAYMENT-SIGNATURE header instead (for accepts[0] of the PAYMENT-REQUIRED header), or sign the body's accepts[0] with a v1 client such as x402-fetch.`,
    )
  const parsed = PaymentPayload.safeParse(json)
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(payload)'} ${issue.message}`).join('; ')
    return reject(`X-PAYMENT is not an x402 v1 exact payment: ${fields}.`)
  }
  return { ok: true, payload: parsed.data }
}

function reject(message: string): PaymentRejection {
  return { ok: false, reason: 'invalid_payment', message }
}
