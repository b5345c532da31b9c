import type { PaymentRejectReason } from '../../schemas/x402.ts'
import { FacilitatorSettleResponse, FacilitatorVerifyResponse } from '../../schemas/x402Facilitator.ts'
import { externalSettler } from './collectExternally.ts'
import type { ExternalSettlement, PaymentRejection, Settler, VerifiedPayment } from './settlement.ts'

/** The `fetch` the settler calls; the global one fits, and a test can pass a stub. */
export type FacilitatorFetch = (url: string, init: RequestInit) => Promise<Response>

export type FacilitatorEndpoint = 'verify' | 'settle'

export type FacilitatorSettlerParameters = {
  /** Base URL of the facilitator; `/verify` and `/settle` are appended. */
  url: string
  /** Default: the global fetch. */
  fetch?: FacilitatorFetch
  /** Per request, covering the body too. Default 30 000. */
  timeoutMs?: number
  /** Extra request headers, e.g. authorization; a function is called per request (short-lived tokens). */
  headers?: Record<string, string> | ((endpoint: FacilitatorEndpoint) => Promise<Record<string, string>>)
}

const DEFAULT_TIMEOUT_MS = 30_000

/**
 * The facilitator's invalidReason → our reason code. Matched on the code's ending, so that both x402 v1
 * (`invalid_exact_evm_payload_signature`) and v2 (`invalid_exact_evm_signature`) spellings land; first match wins.
 */
const INVALID_REASONS: readonly { pattern: RegExp; reason: PaymentRejectReason; hint: string }[] = [
  { pattern: /nonce|already_used|used_or_cancel|duplicate/, reason: 'payment_already_used', hint: 'the authorization was already used' },
  { pattern: /signature$/, reason: 'invalid_signature', hint: 'the signature does not verify for USDC on Base' },
  { pattern: /recipient_mismatch$/, reason: 'recipient_mismatch', hint: "the authorization does not pay the challenge's payTo" },
  { pattern: /authorization_value$/, reason: 'amount_mismatch', hint: 'the authorized value is not the fee' },
  { pattern: /valid_before$|expired$/, reason: 'authorization_expired', hint: 'the authorization expires too soon' },
  { pattern: /valid_after$/, reason: 'authorization_not_yet_valid', hint: 'the authorization is not valid yet' },
  { pattern: /insufficient_(funds|balance)$/, reason: 'insufficient_funds', hint: "the payer's USDC balance is below the fee" },
]

/**
 * DESIGN 7.10 mode `facilitator`: an x402 v1 facilitator verifies (`POST /verify`) and settles (`POST /settle`) on
 * our behalf, with `{x402Version: 1, paymentPayload, paymentRequirements}`. Its answers are validated; every failure
 * is a value. A `/settle` that fails in transit is ambiguous: the facilitator may have broadcast the transfer.
 */
export function facilitatorSettler(parameters: FacilitatorSettlerParameters): Settler & ExternalSettlement {
  const baseUrl = parameters.url.replace(/\/+$/, '')
  const fetchFn = parameters.fetch ?? globalThis.fetch
  const timeoutMs = parameters.timeoutMs ?? DEFAULT_TIMEOUT_MS

  async function post(endpoint: FacilitatorEndpoint, payment: VerifiedPayment): Promise<Exchange> {
    let headers: Record<string, string>
    try {
      const extra = typeof parameters.headers === 'function' ? await parameters.headers(endpoint) : parameters.headers
      headers = { ...extra, 'content-type': 'application/json', accept: 'application/json' }
    } catch {
      return { kind: 'not_sent' }
    }
    const body = JSON.stringify({ x402Version: 1, paymentPayload: payment.payload, paymentRequirements: payment.requirements })
    const signal = AbortSignal.timeout(timeoutMs)
    let response: Response
    try {
      response = await fetchFn(`${baseUrl}/${endpoint}`, { method: 'POST', headers, body, signal })
    } catch {
      return { kind: signal.aborted ? 'timeout' : 'unreachable' }
    }
    let text: string
    try {
      text = await response.text()
    } catch {
      return { kind: signal.aborted ? 'timeout' : 'unreachable' }
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { kind: 'answered', status: response.status, isOk: response.ok, json }
  }

  const external: ExternalSettlement = {
    async check(payment) {
      const exchange = await post('verify', payment)
      if (exchange.kind !== 'answered')
        return reject(
          'settlement_failed',
          `${transportFailure(exchange, 'verify', timeoutMs)}; nothing was charged. Retry shortly with the same payment.`,
        )
      const parsed = FacilitatorVerifyResponse.safeParse(exchange.json)
      // Some facilitators answer an invalid payment with 400 and a VerifyResponse; a refusal is a refusal.
      if (parsed.success && !parsed.data.isValid) return refusal(parsed.data.invalidReason)
      if (!exchange.isOk)
        return reject(
          'settlement_failed',
          `The payment facilitator answered HTTP ${exchange.status} to /verify; nothing was charged. Retry shortly with the same payment.`,
        )
      if (!parsed.success)
        return reject(
          'settlement_failed',
          'The payment facilitator gave an unreadable answer to /verify; nothing was charged. Retry shortly with the same payment.',
        )
      return { ok: true }
    },

    async settle(payment) {
      const exchange = await post('settle', payment)
      if (exchange.kind === 'not_sent')
        return reject('settlement_failed', `${transportFailure(exchange, 'settle', timeoutMs)}; nothing was charged.`)
      if (exchange.kind !== 'answered') return ambiguous(`${transportFailure(exchange, 'settle', timeoutMs)}`)
      if (!exchange.isOk) return ambiguous(`The payment facilitator answered HTTP ${exchange.status} to /settle`)
      const parsed = FacilitatorSettleResponse.safeParse(exchange.json)
      if (!parsed.success) return ambiguous('The payment facilitator gave an unreadable answer to /settle')
      const answer = parsed.data
      if (answer.success) return { ok: true, transaction: answer.transaction }
      // A failure with a transaction: the facilitator broadcast the authorization, which stays valid, and may still pay.
      if (answer.transaction)
        return {
          ...ambiguous(
            `The payment facilitator's settlement transaction ${answer.transaction} failed (${answer.errorReason ?? 'no reason given'}), but it published the signed authorization, which may still pay`,
          ),
          transaction: answer.transaction,
        }
      return {
        ok: false,
        reason: 'settlement_failed',
        message: `The payment facilitator could not settle the payment (${answer.errorReason ?? 'no reason given'}); nothing was charged.`,
      }
    },
  }
  return externalSettler('facilitator', external)
}

type Exchange = { kind: 'answered'; status: number; isOk: boolean; json: unknown } | { kind: 'unreachable' | 'timeout' | 'not_sent' }

function transportFailure(exchange: Exclude<Exchange, { kind: 'answered' }>, endpoint: FacilitatorEndpoint, timeoutMs: number): string {
  switch (exchange.kind) {
    case 'timeout':
      return `The payment facilitator did not answer /${endpoint} within ${timeoutMs / 1000} s`
    case 'unreachable':
      return `The payment facilitator could not be reached for /${endpoint}`
    case 'not_sent':
      return `The request to the payment facilitator's /${endpoint} could not be prepared (its credentials failed)`
  }
}

function ambiguous(what: string): PaymentRejection & { isAmbiguous: true } {
  return {
    ok: false,
    reason: 'settlement_failed',
    isAmbiguous: true,
    message: `${what}; it may have broadcast the transfer, so the payment is being reconciled.`,
  }
}

function refusal(invalidReason: string | null | undefined): PaymentRejection {
  const code = invalidReason ?? ''
  const match = INVALID_REASONS.find((entry) => entry.pattern.test(code))
  const hint = match?.hint ?? 'it refused the payment'
  return reject(
    match?.reason ?? 'invalid_payment',
    `The payment facilitator rejected the payment: ${hint} (facilitator reason "${code || 'none given'}").`,
  )
}

function reject(reason: PaymentRejectReason, message: string): PaymentRejection {
  return { ok: false, reason, message }
}
