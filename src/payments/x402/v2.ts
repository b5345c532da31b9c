import {
  BASE_CAIP2,
  type PaymentPayload,
  PaymentPayloadV2,
  type PaymentReceipt,
  type PaymentRejectReason,
  type PaymentRequiredV2,
  type PaymentRequirements,
  type PaymentRequirementsV2,
  type SettleResponseV2,
} from '../../schemas/x402.ts'
import type { PaymentRejection } from './settlement.ts'

/**
 * x402 v2 beside v1 (issue 16 item 3): the v2 wire forms are translations of the v1 ones we already verify and
 * settle, so one verifier, one store and one (payer, nonce) serve both. Pure functions; the HTTP route and the MCP
 * tool both use them.
 */

/** Far larger than any EOA payment; a header beyond it is not a payment. */
const MAX_ENCODED_CHARS = 8 * 1024

/** Our v1 requirement as a v2 `accepts` entry: CAIP-2 network, `amount`, the resource fields lifted out. */
export function requirementsV2Of(requirements: PaymentRequirements): PaymentRequirementsV2 {
  return {
    scheme: 'exact',
    network: BASE_CAIP2,
    amount: requirements.maxAmountRequired,
    asset: requirements.asset,
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    extra: { name: requirements.extra.name, version: requirements.extra.version },
  }
}

/** The v2 PaymentRequired for the same offer as a v1 challenge (what `PAYMENT-REQUIRED` carries, base64). */
export function paymentRequiredV2Of(requirements: PaymentRequirements, error: string): PaymentRequiredV2 {
  return {
    x402Version: 2,
    error,
    resource: { url: requirements.resource, description: requirements.description, mimeType: requirements.mimeType },
    accepts: [requirementsV2Of(requirements)],
  }
}

/** Standard base64 of the UTF-8 JSON, as x402 v2's headers carry it (`PAYMENT-REQUIRED`, `PAYMENT-RESPONSE`). */
export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64')
}

/** Our receipt as x402 v2's SettleResponse (`PAYMENT-RESPONSE`, MCP `x402/payment-response`). */
export function settleResponseV2Of(receipt: PaymentReceipt): SettleResponseV2 {
  return {
    success: receipt.success,
    transaction: receipt.transaction,
    network: BASE_CAIP2,
    payer: receipt.payer,
    settlement: receipt.settlement,
  }
}

export type DecodePaymentV2ReturnType = { ok: true; payload: PaymentPayloadV2 } | PaymentRejection

/**
 * Decodes a `PAYMENT-SIGNATURE` header: base64 (standard or url-safe, padded or not) of a v2 PaymentPayload.
 * `source` names where it came from in the messages.
 */
export function decodePaymentSignature(header: string, source = 'PAYMENT-SIGNATURE'): DecodePaymentV2ReturnType {
  const text = header.trim()
  if (text.length === 0 || text.length > MAX_ENCODED_CHARS || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text))
    return reject('invalid_payment', `${source} is not base64: send base64 of the x402 v2 PaymentPayload JSON, as @x402/fetch does.`)
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64').toString('utf8'))
  } catch {
    return reject('invalid_payment', `${source} does not decode to JSON: send base64 of the x402 v2 PaymentPayload JSON.`)
  }
  return parsePaymentPayloadV2(json, source)
}

/** Checks that `json` is an x402 v2 exact EVM PaymentPayload (the MCP transport sends it as an object). */
export function parsePaymentPayloadV2(json: unknown, source = 'PAYMENT-SIGNATURE'): DecodePaymentV2ReturnType {
  if (typeof json === 'object' && json !== null && 'x402Version' in json && json.x402Version !== 2)
    return reject(
      'invalid_payment',
      `${source} carries x402Version ${JSON.stringify(json.x402Version)}; it takes x402 v2 (a v1 payment goes in X-PAYMENT).`,
    )
  const parsed = PaymentPayloadV2.safeParse(json)
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(payload)'} ${issue.message}`).join('; ')
    return reject('invalid_payment', `${source} is not an x402 v2 exact payment: ${fields}.`)
  }
  return { ok: true, payload: parsed.data }
}

export type NormalisePaymentV2ReturnType = { ok: true; payload: PaymentPayload } | PaymentRejection

/**
 * A v2 payment as the internal (v1-shaped) payment the verifier takes, if its `accepted` is exactly the option we
 * offered (addresses compared without case). The EIP-3009 authorization and signature are the same in both versions,
 * so the verifier, the settlers and the single-use store see one payment whichever header carried it.
 */
export function normalisePaymentV2(payload: PaymentPayloadV2, requirements: PaymentRequirements): NormalisePaymentV2ReturnType {
  const offered = requirementsV2Of(requirements)
  const accepted = payload.accepted
  if (accepted.scheme !== offered.scheme)
    return reject('unsupported_scheme', `accepted.scheme is ${JSON.stringify(accepted.scheme)}; pay with scheme "exact".`)
  if (accepted.network !== offered.network)
    return reject(
      'network_mismatch',
      `accepted.network is ${JSON.stringify(accepted.network)}; pay USDC on "${BASE_CAIP2}" (Base mainnet).`,
    )
  if (accepted.amount !== offered.amount)
    return reject(
      'amount_mismatch',
      `accepted.amount is ${JSON.stringify(accepted.amount)}; the fee is exactly "${offered.amount}" (USD 0.02 in USDC).`,
    )
  if (!sameAddress(accepted.payTo, offered.payTo))
    return reject(
      'recipient_mismatch',
      `accepted.payTo is ${JSON.stringify(accepted.payTo)}; it must be ${offered.payTo}, the challenge's payTo.`,
    )
  if (canonical(accepted) !== canonical(offered))
    return reject(
      'invalid_payment',
      `accepted is not the option this endpoint offers; copy accepts[0] of the PAYMENT-REQUIRED challenge unchanged: ${JSON.stringify(offered)}.`,
    )
  return { ok: true, payload: { x402Version: 1, scheme: 'exact', network: requirements.network, payload: payload.payload } }
}

function sameAddress(value: unknown, address: string): boolean {
  return typeof value === 'string' && value.toLowerCase() === address.toLowerCase()
}

/** JSON with sorted keys and lowercased addresses, so equal options compare equal as text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner === 'string' && /^0x[0-9a-fA-F]{40}$/.test(inner)) return inner.toLowerCase()
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner))
      return Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    return inner
  })
}

function reject(reason: PaymentRejectReason, message: string): PaymentRejection {
  return { ok: false, reason, message }
}
