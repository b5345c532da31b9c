import * as z from 'zod'
import { formatAtomic } from '../../engine/index.ts'
import { PaidSwapParams } from '../../schemas/quote.ts'
import { SwapResult } from '../../schemas/swap.ts'
import { defineTool, failed, failedCall, type ToolContext, type ToolResult } from '../tool.ts'
import { PaymentReceipt, PaymentRequiredV2, SettleResponseV2 } from '../../schemas/x402.ts'
import { encodeBase64Json } from '../../payments/x402/v2.ts'
import { describeFailure, type ServiceResponse } from '../serviceClient.ts'

const usdc = (atomic: bigint): string => formatAtomic(atomic, 6)

/** What build_swap passes on from the service's SwapResult as it is. */
const SWAP_FIELDS = {
  swapEaziRef: true,
  fromChain: true,
  toChain: true,
  fromToken: true,
  toToken: true,
  fromAmount: true,
  toAmount: true,
  toAmountMin: true,
  toAddress: true,
  estimatedDuration: true,
  approval: true,
  transactionRequest: true,
  deadline: true,
  destinationDeadline: true,
  nextSteps: true,
} as const

function pick<T extends object, K extends keyof T>(value: T, keys: Readonly<Record<K, true>>): Pick<T, K> {
  return Object.fromEntries(Object.keys(keys).map((key) => [key, value[key as K]])) as Pick<T, K>
}

export const NO_WALLET =
  'build_swap pays USD 0.02 in USDC on Base for each build, from a wallet this MCP server holds, and none is configured. Set SWAPEAZI_WALLET_PRIVATE_KEY to the private key of a Base wallet holding USDC (optionally SWAPEAZI_DAILY_BUDGET_USDC, default 1.00) and restart the server. get_quote is free in the meantime.'

type BuildSwapOutput = ReturnType<typeof swapStructure> & { payment: PaymentReceipt | SettleResponseV2 }

export const buildSwap = defineTool({
  name: 'build_swap',
  title: 'Build a swap transaction (pays USD 0.02)',
  description:
    'Builds the unsigned transaction that executes a stablecoin swap or cross-chain transfer, for example 500 USDC on Base to EURe on Gnosis. Costs USD 0.02 per call, paid in USDC on Base over x402: on a remote server you pay it yourself (an unpaid call answers isError with the x402 PaymentRequired; call again with the signed PaymentPayload in params._meta["x402/payment"]), on a local one from the wallet configured for it, within its daily budget; every call pays again, so call it once per swap the user has agreed to (get_quote first, it is free). Nothing moves until the user signs: the result is the transactionRequest for the user\'s wallet, the approval it needs first, swapEaziRef, toAmount and toAmountMin (the least toToken that arrives; on a route that swaps after the bridge, the least if that swap runs, else the recipient gets the bridged token: nextSteps says how much at least), the fees, the payment receipt, the next steps (approve if needed, sign, broadcast) and the deadline by which the transaction must be mined (10 minutes after the build; a later one reverts and moves nothing). It builds the route get_quote answers (BALANCED); route: FASTEST or CHEAPEST builds that ranked route instead, and quoteId (with the same arguments as the get_quote that answered it, within its 60 s) builds that quote as quoted.',
  inputSchema: PaidSwapParams.shape,
  outputSchema: {
    ...SwapResult.pick(SWAP_FIELDS).shape,
    fee: z.object({ swapFee: z.string(), token: z.string(), agentCallFee: z.string().describe('USDC paid for this build') }),
    route: z.object({ id: z.string(), bridge: z.string(), tool: z.string() }),
    payment: z
      .union([z.object(PaymentReceipt.shape), z.object(SettleResponseV2.shape)])
      .describe("How the USD 0.02 was settled: the server wallet's X-PAYMENT-RESPONSE, or your own payment's SettleResponse"),
    budget: z
      .object({ spentToday: z.string(), dailyBudget: z.string(), currency: z.literal('USDC') })
      .optional()
      .describe("The server wallet's daily budget, when it paid"),
  },
  annotations: {
    title: 'Build a swap transaction (pays USD 0.02)',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  paid: true,
  async run(context, params, call) {
    const { payer } = context
    if (context.callerPays === true) return callerPaysBuild(context, params, call.meta?.['x402/payment'])
    if (payer === undefined) return failed(NO_WALLET)
    const outcome = await payer.post('/api/x402/swap', params)
    switch (outcome.kind) {
      case 'budget_exhausted':
        return failed(
          `Not built and not paid: today's build_swap budget of ${usdc(outcome.dailyBudget)} USDC leaves less than the 0.02 USDC a build costs (${usdc(outcome.spentToday)} USDC spent so far, UTC day). It resets at 00:00 UTC, or the operator can raise SWAPEAZI_DAILY_BUDGET_USDC. get_quote stays free.`,
        )
      case 'caller_limit':
        return failed(
          `Not built and not paid: this server pays for at most ${outcome.perHour} builds per caller per hour, and yours are used; more from ${outcome.resetsAt.toISOString()}. Or pay the USD 0.02 yourself over x402 at POST /api/x402/swap. get_quote stays free.`,
        )
      case 'unknown':
        return failed(
          `The USD 0.02 payment was sent but its outcome is unknown (${outcome.reason}). Do not call build_swap again for this swap right away: a new call signs a new payment. The budget counts this payment. Check the wallet's USDC transfers on Base, or ask the SwapEazi operator about payer ${payer.address}.`,
        )
      case 'not_sent':
        return failed(
          `Not built and not paid: the payment could not be made (${outcome.reason}). Nothing was charged; check that SWAPEAZI_BASE_URL points at a SwapEazi service, then retry.`,
        )
      case 'refused': {
        const body = outcome.response.body as { error?: unknown; detail?: unknown } | undefined
        if (outcome.response.status === 402 && typeof body?.detail === 'string')
          return failed(
            `Not built: the payment was refused (${typeof body.error === 'string' ? body.error : 'payment_refused'}): ${body.detail}`,
          )
        return notPaid(outcome.response)
      }
      case 'paid': {
        const parsed = SwapResult.safeParse(outcome.response.body)
        if (!parsed.success)
          return failed(
            `The swap was paid (receipt ${outcome.receipt.transaction}) but SwapEazi's answer could not be read; quote that receipt to the operator.`,
          )
        const swap = parsed.data
        const structured = {
          ...swapStructure(swap),
          payment: outcome.receipt,
          budget: { spentToday: usdc(outcome.spentToday), dailyBudget: usdc(payer.dailyBudget), currency: 'USDC' as const },
        }
        return {
          ok: true,
          structured,
          summary: builtSummary(swap, paidText('paid', outcome.receipt.transaction)),
        }
      }
    }
  },
})

/** The swap as build_swap returns it, without the payer's budget (the caller paid). */
function swapStructure(swap: SwapResult) {
  return {
    ...pick(swap, SWAP_FIELDS),
    fee: {
      swapFee: swap.route.fees.swapFee.amount,
      token: swap.route.fees.swapFee.token,
      agentCallFee: swap.route.fees.agentCallFee?.amount ?? '0',
    },
    route: { id: swap.route.id, bridge: swap.route.bridge, tool: swap.route.tool },
  }
}

const UNPAID =
  'Payment required: sign accepts[0] (x402 v2, exact) and call build_swap again with the PaymentPayload in params._meta["x402/payment"]'

/** A base64 JSON header as a value, or undefined when it is absent or not base64 JSON. */
function decodedHeader(response: ServiceResponse, name: string): unknown {
  const header = response.headers.get(name)
  if (header === null) return undefined
  try {
    return JSON.parse(Buffer.from(header, 'base64').toString('utf8'))
  } catch {
    return undefined
  }
}

/**
 * build_swap when the caller pays (x402 v2 over MCP, tool-result binding): the agent's payment, from
 * `params._meta["x402/payment"]` (a PaymentPayload object or its base64), goes to our own paid route as
 * PAYMENT-SIGNATURE, so verification, single use, settlement and the record are the HTTP rail's. Unpaid or refused,
 * the answer is isError with the route's PaymentRequired as structured content, as JSON text and in
 * `_meta["x402/error"]`; paid, the swap with the SettleResponse in `_meta["x402/payment-response"]`.
 */
async function callerPaysBuild(context: ToolContext, params: unknown, payment: unknown): Promise<ToolResult<BuildSwapOutput>> {
  const written = payment === undefined ? undefined : paymentSignature(payment)
  const signature = typeof written === 'string' ? written : undefined
  const headers = signature === undefined ? {} : { 'payment-signature': signature }
  const response = await context.client.post('/api/x402/swap', params, headers)
  if (response.status === 402) {
    const required = PaymentRequiredV2.safeParse(decodedHeader(response, 'payment-required'))
    if (!required.success) return failedCall(response)
    // The HTTP route's unpaid error names its header; over MCP the payment goes in _meta.
    const detail =
      typeof written === 'object'
        ? `${written.unwritable} Send the PaymentPayload that signs accepts[0].`
        : (response.body as { detail?: unknown } | undefined)?.detail
    const paymentRequired =
      payment === undefined
        ? { ...required.data, error: UNPAID }
        : signature === undefined
          ? { ...required.data, error: 'invalid_payment' }
          : { ...required.data, error: overMcp(required.data.error) }
    return {
      ok: false,
      message: JSON.stringify(paymentRequired),
      structured: paymentRequired,
      meta: { 'x402/error': paymentRequired },
      // A settlement still pending may yet be charged: its own detail says so, with no "not paid" before it.
      ...(typeof detail === 'string' && payment !== undefined
        ? {
            detail:
              required.data.error === 'settlement_pending' ? (overMcp(detail) ?? detail) : `Not built and not paid: ${overMcp(detail)}`,
          }
        : {}),
    }
  }
  if (response.status !== 200) {
    if (response.status >= 500) return failedCall(response)
    // Refused before the payment was read. A payment sent again (after a lost answer) may have bought a swap before.
    if (signature === undefined) return notPaid(response)
    return failed(
      `Not built, and this call's payment was not taken: ${describeFailure(response)} If this payment already bought a swap (a call repeated after a lost answer), call again later with the same payment to receive that swap; it is never charged twice.`,
    )
  }
  const settled = SettleResponseV2.safeParse(decodedHeader(response, 'payment-response'))
  const swap = SwapResult.safeParse(response.body)
  if (!settled.success || !swap.success)
    return failed(
      "The payment was settled but SwapEazi's answer could not be read; do not pay again for this swap, and ask the SwapEazi operator about your payment.",
    )
  const built = swap.data
  return {
    ok: true,
    structured: { ...swapStructure(built), payment: settled.data },
    summary: builtSummary(built, paidText('you paid', settled.data.transaction)),
    meta: { 'x402/payment-response': settled.data },
  }
}

/**
 * A refusal of the paid route other than its 402 (a bad request, an unserved pair, a failed pre-flight, a limit): it
 * comes before any payment is collected, and says so (DESIGN 8: every refusal of a paid tool says whether anything
 * was charged).
 */
function notPaid(response: ServiceResponse): { ok: false; message: string } {
  return failed(`Not built and not paid: ${describeFailure(response)}`)
}

const UNWRITABLE_PAYMENT = '_meta["x402/payment"] is nested too deeply to be written as JSON, so it is no PaymentPayload.'
const NOT_BASE64_PAYMENT =
  '_meta["x402/payment"] is a string that is not base64 (it holds other characters: a line break, a control character or a letter outside base64), so it is no encoded PaymentPayload: send the PaymentPayload object itself, or base64 of its JSON.'

/**
 * The payment as the paid route's PAYMENT-SIGNATURE: a base64 string as sent, an object as base64 JSON. What no
 * header can carry is not sent, and says why (`unwritable`): an object nested deeper than JSON.stringify can write
 * (a RangeError), or a string outside base64's letters (a line break or a NUL is refused by HTTP itself: it failed as
 * if on our side); no PaymentPayload is either, so the route is called unpaid and its PaymentRequired answered as an
 * invalid payment.
 */
function paymentSignature(payment: unknown): string | { unwritable: string } {
  if (typeof payment === 'string') return /^[A-Za-z0-9+/_-]*={0,2}$/.test(payment) ? payment : { unwritable: NOT_BASE64_PAYMENT }
  try {
    return encodeBase64Json(payment)
  } catch {
    return { unwritable: UNWRITABLE_PAYMENT }
  }
}

/** A refusal of the HTTP route names its header; over MCP the payment came in _meta["x402/payment"]. */
function overMcp(text: string | undefined): string | undefined {
  return text
    ?.replaceAll(' (a v1 payment goes in X-PAYMENT)', '')
    .replaceAll('PAYMENT-REQUIRED challenge', 'PaymentRequired in _meta["x402/error"]')
    .replaceAll('PAYMENT-SIGNATURE header', '_meta["x402/payment"]')
    .replaceAll('PAYMENT-SIGNATURE', '_meta["x402/payment"]')
}

/**
 * What was paid, as the settlement says: a ledger settlement (`ledger:<ref>`) recorded the signed authorization and
 * moved no money.
 */
function paidText(paid: string, transaction: string): string {
  return transaction.startsWith('ledger:')
    ? `the 0.02 USDC payment was recorded, not transferred (${transaction}: this service's ledger holds the signed authorization)`
    : `${paid} 0.02 USDC (${transaction})`
}

/**
 * The summary of a built swap: what it expects to deliver (what is sure to arrive depends on the route: the last of
 * nextSteps says it), what was paid, and what the user does next; where the first next step says not to sign (the
 * inert default router), that instead.
 */
function builtSummary(swap: SwapResult, paid: string): string {
  const head = `Built ${swap.swapEaziRef}: ${swap.fromAmount} ${swap.fromToken} on ${swap.fromChain} → ${swap.toAmount} ${swap.toToken} expected on ${swap.toChain} (the last of nextSteps says what is sure to arrive); ${paid}.`
  const first = swap.nextSteps[0] ?? ''
  if (first.startsWith('Do not sign')) return `${head} ${first}`
  return `${head} The user approves ${swap.approval.amount} atomic ${swap.fromToken} to ${swap.approval.spender} if needed, then signs transactionRequest on chain ${swap.transactionRequest.chainId}, which must be mined by ${swap.deadline}: after that it reverts, nothing moves, and the swap must be built (and paid) again.`
}
