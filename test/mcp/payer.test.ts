import type { Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { createPayer, utcDay } from '../../src/mcp/payer.ts'
import { createServiceClient } from '../../src/mcp/serviceClient.ts'
import { X402Challenge } from '../../src/schemas/x402.ts'
import type { BudgetStore } from '../../src/store/createBudgetStore.ts'
import { USDC_BASE } from '../payments/signPayment.ts'
import { PAY_TO, PUBLIC_URL, quoteBody } from '../http/testApp.ts'
import { captureLogger } from './mcpHarness.ts'

const PATH = '/api/x402/swap'
const FEE = 20_000n
const NOW_MS = Date.parse('2026-11-20T08:00:00Z')
const DAY = '2026-11-20'

const challenge = (maxAmountRequired = '20000'): X402Challenge =>
  X402Challenge.parse({
    x402Version: 1,
    error: 'X-PAYMENT header is required',
    accepts: [
      {
        scheme: 'exact',
        network: 'base',
        maxAmountRequired,
        resource: `${PUBLIC_URL}${PATH}`,
        description: 'One swap build, USD 0.02',
        mimeType: 'application/json',
        payTo: PAY_TO,
        maxTimeoutSeconds: 300,
        asset: USDC_BASE,
        extra: { name: 'USD Coin', version: '2' },
      },
    ],
  })

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

const receiptHeader = (payer: Address): string =>
  Buffer.from(JSON.stringify({ success: true, transaction: 'ledger:sz_test', network: 'base', payer, settlement: 'ledger' })).toString(
    'base64',
  )

const paidAnswer = (payer: Address): Response => json(200, { swapEaziRef: 'sz_test' }, { 'x-payment-response': receiptHeader(payer) })

type MemoryBudget = BudgetStore & { spend: Map<string, bigint> }

/** The budget contract in memory, as a literal (the store's atomic statement is tested on PGlite and PostgreSQL in buildSwap.test.ts). */
function memoryBudget(): MemoryBudget {
  const spend = new Map<string, bigint>()
  const key = (wallet: string, day: string): string => `${wallet.toLowerCase()}|${day}`
  return {
    spend,
    async reserve(wallet, day, amount, limit) {
      const next = (spend.get(key(wallet, day)) ?? 0n) + amount
      if (next > limit) return undefined
      spend.set(key(wallet, day), next)
      return next
    },
    async release(wallet, day, amount) {
      const current = spend.get(key(wallet, day)) ?? 0n
      spend.set(key(wallet, day), current > amount ? current - amount : 0n)
    },
    async spent(wallet, day) {
      return spend.get(key(wallet, day)) ?? 0n
    },
  }
}

type Call = { url: string; method: string | undefined; headers: Record<string, string>; body: unknown }
type Answer = Response | Error

/**
 * A payer over a scripted service: fetch n takes answer n (a Response, or an Error it throws). Every fetch is
 * recorded; one past the script throws, so a third fetch shows up as a recorded call and a failed expectation.
 */
function scriptedPayer(script: (payer: Address) => Answer[], options: { budget?: MemoryBudget; dailyBudgetAtomic?: bigint } = {}) {
  const privateKey = generatePrivateKey()
  const account = privateKeyToAccount(privateKey)
  const answers = script(account.address)
  const calls: Call[] = []
  const client = createServiceClient(PUBLIC_URL, async (url, init) => {
    calls.push({
      url,
      method: init?.method,
      headers: { ...(init?.headers as Record<string, string>) },
      body: JSON.parse(String(init?.body)),
    })
    const answer = answers.shift()
    if (answer === undefined) throw new Error(`unexpected fetch #${calls.length}`)
    if (answer instanceof Error) throw answer
    return answer
  })
  const budget = options.budget ?? memoryBudget()
  const { log, lines } = captureLogger()
  const payer = createPayer({
    privateKey,
    client,
    budget,
    dailyBudgetAtomic: options.dailyBudgetAtomic ?? 100_000n,
    clock: () => NOW_MS,
    log,
  })
  return { payer, address: account.address, privateKey, calls, budget, lines }
}

const headerNamed = (call: Call | undefined, name: string): string | undefined =>
  Object.entries(call?.headers ?? {}).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1]

const decodePayment = (
  header: string | undefined,
): { x402Version: number; scheme: string; network: string; payload: { authorization: Record<string, string> } } =>
  JSON.parse(Buffer.from(header ?? '', 'base64').toString('utf8'))

describe('createPayer: a 402 challenge is paid once', () => {
  it('makes exactly two fetches, the first without X-PAYMENT, the second with the fee signed to payTo', async () => {
    const { payer, address, calls, budget } = scriptedPayer((me) => [json(402, challenge()), paidAnswer(me)])
    const outcome = await payer.post(PATH, quoteBody())

    expect(outcome).toMatchObject({
      kind: 'paid',
      spentToday: FEE,
      receipt: { success: true, transaction: 'ledger:sz_test', payer: address },
    })
    expect(calls).toHaveLength(2)
    const [first, second] = calls
    expect(first).toMatchObject({ url: `${PUBLIC_URL}${PATH}`, method: 'POST', body: quoteBody() })
    expect(headerNamed(first, 'x-payment')).toBeUndefined()
    expect(second).toMatchObject({ url: `${PUBLIC_URL}${PATH}`, method: 'POST', body: quoteBody() })
    // Plain-object headers survive x402-fetch's retry, so the paid body is still sent as JSON.
    expect(headerNamed(second, 'content-type')).toBe('application/json')
    const payment = decodePayment(headerNamed(second, 'x-payment'))
    expect(payment).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' })
    expect(payment.payload.authorization).toMatchObject({ from: address, to: PAY_TO, value: '20000' })
    expect(await budget.spent(address, DAY)).toBe(FEE)
  })

  it('never fetches a third time: a 402 on the paid retry is a refusal, and the reservation is given back', async () => {
    const refusal = { ...challenge(), error: 'invalid_signature', detail: 'The signature does not recover. Nothing was charged.' }
    const { payer, address, calls, budget } = scriptedPayer(() => [json(402, challenge()), json(402, refusal), json(402, challenge())])
    const outcome = await payer.post(PATH, quoteBody())
    expect(outcome).toMatchObject({ kind: 'refused', response: { status: 402, body: { error: 'invalid_signature' } } })
    expect(calls).toHaveLength(2)
    expect(headerNamed(calls[1], 'x-payment')).toBeDefined()
    expect(await budget.spent(address, DAY)).toBe(0n)
  })

  it('a 200 with no X-PAYMENT-RESPONSE is an unknown outcome: the fee stays counted', async () => {
    const { payer, address, calls, budget } = scriptedPayer(() => [json(402, challenge()), json(200, { swapEaziRef: 'sz_test' })])
    const outcome = await payer.post(PATH, quoteBody())
    expect(outcome).toEqual({ kind: 'unknown', reason: 'the service answered 200 without a readable X-PAYMENT-RESPONSE receipt' })
    expect(calls).toHaveLength(2)
    expect(await budget.spent(address, DAY)).toBe(FEE)
  })

  it.each([
    ['not base64', '%%%not-base64%%%'],
    ['base64 of text that is not JSON', Buffer.from('settled').toString('base64')],
    ['base64 of JSON that is not a receipt', Buffer.from(JSON.stringify('ok')).toString('base64')],
    [
      'a receipt missing its transaction',
      Buffer.from(JSON.stringify({ success: true, network: 'base', payer: PAY_TO })).toString('base64'),
    ],
  ])('a 200 whose X-PAYMENT-RESPONSE is %s is an unknown outcome, not an error that reads as "not paid"', async (_name, header) => {
    const { payer, address, calls, budget } = scriptedPayer(() => [
      json(402, challenge()),
      json(200, { swapEaziRef: 'sz_test' }, { 'x-payment-response': header }),
    ])
    const outcome = await payer.post(PATH, quoteBody())
    expect(outcome).toEqual({ kind: 'unknown', reason: 'the service answered 200 without a readable X-PAYMENT-RESPONSE receipt' })
    expect(calls).toHaveLength(2)
    expect(await budget.spent(address, DAY)).toBe(FEE)
  })

  it('a call the service answers without a challenge costs nothing', async () => {
    const { payer, address, calls, budget } = scriptedPayer(() => [
      json(422, { code: 'unsupported_token', detail: 'DOGE is not listed on ETH.' }),
    ])
    const outcome = await payer.post(PATH, quoteBody({ toToken: 'DOGE' }))
    expect(outcome).toMatchObject({ kind: 'refused', response: { status: 422, body: { code: 'unsupported_token' } } })
    expect(calls).toHaveLength(1)
    expect(await budget.spent(address, DAY)).toBe(0n)
  })
})

describe('createPayer: after the payment was sent, an unknown outcome keeps the reservation', () => {
  const cases: [string, Answer][] = [
    ['a 500', json(500, { code: 'internal_error', detail: 'Something failed on our side.' })],
    ['a 502 gateway page', new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })],
    ['a 402 settlement_pending', json(402, { ...challenge(), error: 'settlement_pending', detail: 'Not confirmed yet.' })],
  ]
  it.each(cases)('%s: kind unknown, not retried, the fee stays counted', async (_name, afterPayment) => {
    const { payer, address, calls, budget, lines } = scriptedPayer(() => [json(402, challenge()), afterPayment])
    const outcome = await payer.post(PATH, quoteBody())
    expect(outcome.kind).toBe('unknown')
    expect(calls).toHaveLength(2)
    expect(headerNamed(calls[1], 'x-payment')).toBeDefined()
    expect(await budget.spent(address, DAY)).toBe(FEE)
    expect(lines.map((line) => JSON.parse(line).event)).toContain('payment_outcome_unknown')
  })

  it('a network error: the same X-PAYMENT is sent once more, never a new one; lost again, unknown and counted', async () => {
    const lost = (): TypeError => new TypeError('fetch failed: socket hang up')
    const { payer, address, calls, budget, lines } = scriptedPayer(() => [json(402, challenge()), lost(), lost()])
    expect(await payer.post(PATH, quoteBody())).toEqual({
      kind: 'unknown',
      reason: 'fetch failed: socket hang up; the retry with the same payment: fetch failed: socket hang up',
    })
    expect(calls).toHaveLength(3)
    expect(headerNamed(calls[1], 'x-payment')).toBeDefined()
    expect(headerNamed(calls[2], 'x-payment')).toBe(headerNamed(calls[1], 'x-payment'))
    expect(calls[2]?.body).toEqual(calls[1]?.body)
    expect(await budget.spent(address, DAY)).toBe(FEE)
    expect(lines.map((line) => JSON.parse(line).event)).toContain('payment_outcome_unknown')
  })

  // Review of issue 15: the first paid request may have been charged before its answer was lost; a limit refusing the
  // repeat says nothing of that, so the fee stays counted and no new payment is signed.
  it('a network error, then a 4xx to the repeat (a limit): unknown, the fee stays counted', async () => {
    const { payer, address, calls, budget } = scriptedPayer(() => [
      json(402, challenge()),
      new TypeError('fetch failed: socket hang up'),
      json(429, { code: 'rate_limited', detail: 'Too many requests from this address; retry after 20 s.' }),
    ])
    expect((await payer.post(PATH, quoteBody())).kind).toBe('unknown')
    expect(calls).toHaveLength(3)
    expect(await budget.spent(address, DAY)).toBe(FEE)
  })

  it('a network error, then the swap the payment bought: paid, once', async () => {
    const { payer, address, calls, budget } = scriptedPayer((me) => [
      json(402, challenge()),
      new TypeError('fetch failed: socket hang up'),
      paidAnswer(me),
    ])
    expect((await payer.post(PATH, quoteBody())).kind).toBe('paid')
    expect(headerNamed(calls[2], 'x-payment')).toBe(headerNamed(calls[1], 'x-payment'))
    expect(await budget.spent(address, DAY)).toBe(FEE)
  })

  it('the unknown reason says what happened, for the tool to pass on', async () => {
    const { payer: second } = scriptedPayer(() => [json(402, challenge()), json(500, { code: 'internal_error' })])
    expect(await second.post(PATH, quoteBody())).toEqual({
      kind: 'unknown',
      reason: 'the service answered 500 (internal_error) after the payment was sent',
    })
  })
})

// Review of issue 15: the paid route screens, builds and simulates before it collects, so a 4xx after the payment
// was signed refused the request with nothing charged; it kept the fee on the budget as an unknown outcome, and
// build_swap told the agent not to call again.
describe('createPayer: a refusal after the payment was signed charged nothing, and gives the fee back', () => {
  const cases: [string, Response][] = [
    ['a 422 simulation_failed', json(422, { code: 'simulation_failed', detail: 'The built transaction reverts; nothing is charged.' })],
    ['a 429 rate_limited', json(429, { code: 'rate_limited', detail: 'Too many pre-flight simulations; retry after 30 s.' })],
    ['a 403 address_screened', json(403, { code: 'address_screened', detail: 'The address is on a sanctions list.' })],
    [
      'a 402 settlement_failed',
      json(402, { ...challenge(), error: 'settlement_failed', detail: 'USDC refused the transfer; nothing was charged.' }),
    ],
  ]
  it.each(cases)('%s: kind refused, not retried, the fee given back', async (_name, afterPayment) => {
    const { payer, address, calls, budget } = scriptedPayer(() => [json(402, challenge()), afterPayment])
    const outcome = await payer.post(PATH, quoteBody())
    expect(outcome.kind).toBe('refused')
    expect(calls).toHaveLength(2)
    expect(headerNamed(calls[1], 'x-payment')).toBeDefined()
    expect(await budget.spent(address, DAY)).toBe(0n)
  })
})

describe('createPayer: an error before anything signed was sent releases the reservation', () => {
  const cases: [string, Answer[], RegExp][] = [
    ['the first fetch fails', [new TypeError('fetch failed: ECONNREFUSED')], /ECONNREFUSED/],
    ['the challenge asks for more than the fee', [json(402, challenge('30000'))], /Payment amount exceeds maximum allowed/],
    ['the challenge is not x402', [json(402, { x402Version: 1, accepts: [{ scheme: 'exact' }] })], /"path": \[\s*"network"/],
    [
      'the 402 is not JSON',
      [new Response('payment required', { status: 402, headers: { 'content-type': 'text/plain' } })],
      /"payment required" is not valid JSON/,
    ],
  ]
  it.each(cases)('%s: not sent, one fetch, nothing counted', async (_name, answers, reason) => {
    const { payer, address, calls, budget } = scriptedPayer(() => answers)
    const outcome = await payer.post(PATH, quoteBody())
    expect(outcome).toEqual({ kind: 'not_sent', reason: expect.stringMatching(reason) })
    expect(calls).toHaveLength(1)
    expect(headerNamed(calls[0], 'x-payment')).toBeUndefined()
    expect(await budget.spent(address, DAY)).toBe(0n)
  })
})

describe('createPayer: the daily budget', () => {
  it('once the day is spent, signs nothing: one unpaid request says whether the service would take the call at all', async () => {
    const budget = memoryBudget()
    const { payer, address, calls } = scriptedPayer(
      (me) => [
        json(402, challenge()),
        paidAnswer(me),
        json(402, challenge()),
        paidAnswer(me),
        json(402, challenge()),
        json(422, { code: 'amount_out_of_range', detail: 'too small' }),
      ],
      { budget, dailyBudgetAtomic: 2n * FEE },
    )
    expect((await payer.post(PATH, quoteBody())).kind).toBe('paid')
    expect((await payer.post(PATH, quoteBody())).kind).toBe('paid')
    expect(calls).toHaveLength(4)
    // Payable: the service answers 402, and the budget is what refuses it.
    expect(await payer.post(PATH, quoteBody())).toEqual({ kind: 'budget_exhausted', spentToday: 2n * FEE, dailyBudget: 2n * FEE })
    // Not payable: the service's own refusal, which no budget would change.
    const refused = await payer.post(PATH, quoteBody({ fromAmount: '0.0000001' }))
    expect(refused).toMatchObject({ kind: 'refused', response: { status: 422 } })
    expect(calls).toHaveLength(6)
    expect(calls.slice(4).every((call) => Object.keys(call.headers).every((name) => name.toLowerCase() !== 'x-payment'))).toBe(true)
    expect(budget.spend.get(`${address.toLowerCase()}|${DAY}`)).toBe(2n * FEE)
  })

  it('once the day is spent, an unreachable service still answers budget_exhausted, never a throw', async () => {
    const { payer } = scriptedPayer(() => [], { dailyBudgetAtomic: FEE - 1n })
    // The script has no answer: the unpaid request's fetch throws.
    expect(await payer.post(PATH, quoteBody())).toEqual({ kind: 'budget_exhausted', spentToday: 0n, dailyBudget: FEE - 1n })
  })

  it('a budget below one fee allows nothing', async () => {
    const { payer, calls } = scriptedPayer(() => [json(402, challenge())], { dailyBudgetAtomic: FEE - 1n })
    expect(await payer.post(PATH, quoteBody())).toEqual({ kind: 'budget_exhausted', spentToday: 0n, dailyBudget: FEE - 1n })
    expect(calls.map((call) => Object.keys(call.headers).some((name) => name.toLowerCase() === 'x-payment'))).toEqual([false])
  })

  it('counts per UTC day', () => {
    expect(utcDay(Date.parse('2026-11-20T23:59:59.999Z'))).toBe('2026-11-20')
    expect(utcDay(Date.parse('2026-11-21T00:00:00Z'))).toBe('2026-11-21')
    expect(utcDay(Date.parse('2026-11-21T01:30:00+02:00'))).toBe('2026-11-20')
  })
})

describe('createPayer: the key stays secret', () => {
  it('appears in no outcome and no log line, paid or not', async () => {
    const { payer, privateKey, lines } = scriptedPayer((me) => [
      json(402, challenge()),
      paidAnswer(me),
      json(402, challenge()),
      new Error('socket hang up'),
      new Error('ECONNREFUSED'),
    ])
    const outcomes = [await payer.post(PATH, quoteBody()), await payer.post(PATH, quoteBody()), await payer.post(PATH, quoteBody())]
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['paid', 'unknown', 'not_sent'])
    expect(lines.length).toBeGreaterThan(0)
    const seen =
      JSON.stringify(outcomes, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)) + lines.join('\n')
    expect(seen.toLowerCase()).not.toContain(privateKey.slice(2).toLowerCase())
  })
})
