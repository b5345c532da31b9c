import type { Address } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Logger } from 'pino'
import { AGENT_CALL_FEE_ATOMIC } from '../payments/x402/paymentRequirements.ts'
import { PaymentReceipt } from '../schemas/x402.ts'
import type { BudgetStore } from '../store/createBudgetStore.ts'
import { readServiceResponse, type ServiceClient, type ServiceResponse } from './serviceClient.ts'

export type PaidPostOutcome =
  /** 200: the call was paid and answered. */
  | { kind: 'paid'; response: ServiceResponse; receipt: PaymentReceipt; spentToday: bigint }
  /** Answered without a charge: refused before payment (4xx), or the payment was refused (402). */
  | { kind: 'refused'; response: ServiceResponse }
  /** Nothing signed was sent (the service unreachable, or its challenge not one we pay): no charge, no answer. */
  | { kind: 'not_sent'; reason: string }
  /** The payment was sent but its outcome is unknown: the budget keeps it, and the call must not be repeated blindly. */
  | { kind: 'unknown'; reason: string }
  /** Paying would pass the daily budget; nothing was sent. */
  | { kind: 'budget_exhausted'; spentToday: bigint; dailyBudget: bigint }
  /** This caller has had its builds for the hour paid by the server's wallet (/mcp, callerAllowance.ts); nothing was sent. */
  | { kind: 'caller_limit'; perHour: number; resetsAt: Date }

export type Payer = {
  address: Address
  dailyBudget: bigint
  /**
   * POSTs `body` to a paid endpoint, paying its x402 challenge once, within the daily budget. Never signs a second
   * payment; a lost answer is retried once with the same one.
   */
  post(path: string, body: unknown): Promise<PaidPostOutcome>
}

export type CreatePayerParameters = {
  privateKey: `0x${string}`
  client: ServiceClient
  budget: BudgetStore
  dailyBudgetAtomic: bigint
  clock: () => number
  log: Logger
}

type X402Fetch = typeof import('x402-fetch')
let x402Fetch: Promise<X402Fetch> | undefined

/**
 * x402-fetch, imported at the first payment: it brings x402's Solana support with it, about half a second of loading
 * that a service whose tools never pay (and every `swapeazi serve` start) would otherwise pay up front.
 */
function loadX402Fetch(): Promise<X402Fetch> {
  return (x402Fetch ??= import('x402-fetch'))
}

/**
 * The decoded X-PAYMENT-RESPONSE, or undefined when it is not our receipt: after a paid 200 that is an unknown
 * outcome, never a thrown error (which would read as "not paid" and invite a second payment).
 */
function readReceipt(header: string, decodeXPaymentResponse: X402Fetch['decodeXPaymentResponse']): PaymentReceipt | undefined {
  try {
    const parsed = PaymentReceipt.safeParse(decodeXPaymentResponse(header))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The UTC day a budget counts in. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/**
 * The MCP payer (DESIGN 8): a viem account paying with x402-fetch, capped at the agent call fee (20000 atomic USDC).
 * Each call first reserves the fee against the wallet's daily budget in the store, in one atomic statement, so
 * concurrent calls can never together pass it. The reservation is given back only when the payment certainly did
 * not happen: nothing signed was sent, the service refused the payment (402), or it refused the request (4xx). When a signed payment was sent and
 * the answer is lost, the same payment is sent once more (the service answers it with the swap it bought, never a
 * second charge); if that too is lost or ambiguous, the reservation stays and no fresh authorization is signed.
 */
export function createPayer(parameters: CreatePayerParameters): Payer {
  const { client, budget, dailyBudgetAtomic, clock, log } = parameters
  const account = privateKeyToAccount(parameters.privateKey)
  const fee = AGENT_CALL_FEE_ATOMIC
  return {
    address: account.address,
    dailyBudget: dailyBudgetAtomic,
    async post(path, body) {
      const { decodeXPaymentResponse, wrapFetchWithPayment } = await loadX402Fetch()
      const day = utcDay(clock())
      const spentToday = await budget.reserve(account.address, day, fee, dailyBudgetAtomic)
      if (spentToday === undefined) {
        // A request the service refuses anyway (a bad amount, an unserved pair) is told why, not that the budget is
        // spent: asked without a payment, it answers its refusal, or the 402 a payable request gets.
        // Unreachable, it says nothing either way: the budget is still what refuses the call.
        const unpaid = await client
          .fetch(`${client.baseUrl}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify(body),
          })
          .then(readServiceResponse)
          .catch(() => undefined)
        if (unpaid !== undefined && unpaid.status !== 402) return { kind: 'refused', response: unpaid }
        return { kind: 'budget_exhausted', spentToday: await budget.spent(account.address, day), dailyBudget: dailyBudgetAtomic }
      }
      const release = (): Promise<void> => budget.release(account.address, day, fee)

      /** The X-PAYMENT sent, once x402-fetch has signed one. */
      let sentPayment: string | undefined
      const watched = (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit): Promise<Response> => {
        const headers = (init?.headers ?? {}) as Record<string, string>
        const payment = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-payment')
        if (payment !== undefined) sentPayment = payment[1]
        return client.fetch(String(input), init)
      }
      const paidFetch = wrapFetchWithPayment(watched as typeof globalThis.fetch, account, fee)
      const url = `${client.baseUrl}${path}`
      const request = {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      }
      let response: ServiceResponse
      /** The answer is the repeat's, after the first paid answer was lost: that payment may have been charged. */
      let isRepeat = false
      try {
        response = await readServiceResponse(await paidFetch(url, request))
      } catch (error) {
        if (sentPayment === undefined) {
          await release()
          return { kind: 'not_sent', reason: errorMessage(error) }
        }
        // The answer was lost after paying. The service keeps what a payment bought, so the same X-PAYMENT with the
        // same request gets that swap again, and cannot be charged twice: repeat it once.
        try {
          response = await readServiceResponse(
            await client.fetch(url, { ...request, headers: { ...request.headers, 'x-payment': sentPayment } }),
          )
          isRepeat = true
          log.info({ event: 'payment_retried', path, payer: account.address, status: response.status }, 'payment_retried')
        } catch (again) {
          log.warn({ event: 'payment_outcome_unknown', path, payer: account.address }, 'payment_outcome_unknown')
          return { kind: 'unknown', reason: `${errorMessage(error)}; the retry with the same payment: ${errorMessage(again)}` }
        }
      }

      if (response.status === 200) {
        const header = response.headers.get('x-payment-response')
        const receipt = header === null ? undefined : readReceipt(header, decodeXPaymentResponse)
        if (receipt === undefined)
          return { kind: 'unknown', reason: 'the service answered 200 without a readable X-PAYMENT-RESPONSE receipt' }
        log.info({ event: 'swap_paid_by_mcp', path, payer: account.address, transaction: receipt.transaction }, 'swap_paid_by_mcp')
        return { kind: 'paid', response, receipt, spentToday }
      }
      // A 402 names its reason in `error` (x402's PaymentRequired), any other refusal in `code` (a problem).
      const answered = response.body as { error?: unknown; code?: unknown; detail?: unknown } | undefined
      const reason = response.status === 402 ? answered?.error : answered?.code
      // After a payment was sent, only a 5xx or a settlement in doubt (settlement_pending) may have charged it. The
      // paid route screens, builds and simulates before it collects, so any other 4xx refused the request before the
      // payment was touched, and a 402 settlement_failed gave the payment back: nothing was charged, and the budget
      // gets the fee back (review of issue 15: a 422 simulation_failed kept it, and told the agent not to retry).
      // The repeat after a lost answer is another matter: the first request may have been charged, and a 4xx to the
      // repeat (a limit, say) says nothing of it, so only a 402 refusing the payment itself gives the fee back.
      const isInDoubt =
        response.status >= 500 || (response.status === 402 && reason === 'settlement_pending') || (isRepeat && response.status !== 402)
      if (sentPayment !== undefined && isInDoubt) {
        log.warn({ event: 'payment_outcome_unknown', path, payer: account.address, status: response.status }, 'payment_outcome_unknown')
        const detail = typeof answered?.detail === 'string' ? `: ${answered.detail}` : ''
        return {
          kind: 'unknown',
          reason: `the service answered ${response.status}${typeof reason === 'string' ? ` (${reason})` : ''} after the payment was sent${detail}`,
        }
      }
      await release()
      return { kind: 'refused', response }
    },
  }
}
