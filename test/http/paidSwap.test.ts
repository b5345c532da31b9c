import { decodeFunctionData, parseAbi } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { wrapFetchWithPayment } from 'x402-fetch'
import { decodeXPaymentResponse } from 'x402/shared'
import { SwapResult } from '../../src/schemas/swap.ts'
import { X402Challenge } from '../../src/schemas/x402.ts'
import { externalSettler } from '../../src/payments/x402/collectExternally.ts'
import { encodeHeader, signPayment, USDC_BASE } from '../payments/signPayment.ts'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { QuoteParams } from '../../src/schemas/quote.ts'
import { paidRequestKey } from '../../src/service/payForSwap.ts'
import { resolveQuoteRequest } from '../../src/service/resolveQuoteRequest.ts'
import { signApiKey } from '../../src/auth/apiKey.ts'
import {
  decimalToUnits,
  KEY_SECRET,
  MANIFEST_DIR,
  PAY_TO,
  PUBLIC_URL,
  get,
  lazyMemoryStore,
  postJson,
  quoteBody,
  readJson,
  testApp,
  testDeps,
} from './testApp.ts'

const SWAP = '/api/x402/swap'
const PRO_KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef0123aaa0', tier: 'pro', iat: Math.floor(Date.now() / 1000) })
const payer = privateKeyToAccount(generatePrivateKey())
const nowSec = (): number => Math.floor(Date.now() / 1000)
const body = quoteBody({ fromAddress: payer.address.toLowerCase() })

// One in-memory store for the file (opening PGlite takes seconds); tests count rows before and after.
const store = lazyMemoryStore()
afterAll(() => store.sql.close())

/** The app on the file's store, on the wall clock (x402-fetch signs with the real time). */
function freshApp(): { app: ReturnType<typeof testApp>; store: ReturnType<typeof lazyMemoryStore> } {
  return { app: testApp({ clock: Date.now, store }), store }
}

async function countRows(table: 'x402_payments' | 'swaps'): Promise<number> {
  const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`)
  return row?.n ?? -1
}

async function challengeOf(response: Response): Promise<X402Challenge> {
  expect(response.status).toBe(402)
  return X402Challenge.parse(await readJson(response))
}

describe('POST /api/x402/swap without payment', () => {
  it('answers 402 with the x402 v1 challenge real clients need', async () => {
    const { app } = freshApp()
    const challenge = await challengeOf(await postJson(app, SWAP, body))
    expect(challenge.error).toBe('X-PAYMENT header is required')
    expect(challenge.accepts).toEqual([
      {
        scheme: 'exact',
        network: 'base',
        maxAmountRequired: '20000',
        resource: `${PUBLIC_URL}${SWAP}`,
        description: expect.stringContaining('USD 0.02'),
        mimeType: 'application/json',
        payTo: '0x2222222222222222222222222222222222222222',
        maxTimeoutSeconds: 300,
        asset: USDC_BASE,
        outputSchema: { input: { type: 'http', method: 'POST', discoverable: true, bodyType: 'json' } },
        extra: { name: 'USD Coin', version: '2' },
      },
    ])
  })

  it('refuses a request that cannot succeed before asking for payment', async () => {
    const { app } = freshApp()
    const invalid = await postJson(app, SWAP, quoteBody({ fromAmount: 12 }))
    expect(invalid.status).toBe(400)
    expect((await readJson(invalid))['code']).toBe('invalid_request')
    const unsupported = await postJson(app, SWAP, quoteBody({ toToken: 'DOGE' }))
    expect(unsupported.status).toBe(422)
    expect((await readJson(unsupported))['code']).toBe('unsupported_token')
    const notExecutable = await postJson(app, SWAP, quoteBody({ fromChain: 'ETH', toChain: 'CEL', toToken: 'cKES' }))
    expect(notExecutable.status).toBe(422)
    expect((await readJson(notExecutable))['code']).toBe('no_route_found')
  })
})

describe('paying with x402-fetch 1.2.0', () => {
  it('pays the challenge and receives the transaction and a receipt decodeXPaymentResponse reads', async () => {
    const { app } = freshApp()
    const paidFetch = wrapFetchWithPayment((input, init) => Promise.resolve(app.request(input as string, init)), payer, 20_000n)
    const response = await paidFetch(`${PUBLIC_URL}${SWAP}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status).toBe(200)
    // A paid swap is one buyer's: no cache keeps it.
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const result = SwapResult.parse(await response.json())
    expect(result.transactionRequest.from.toLowerCase()).toBe(payer.address.toLowerCase())
    expect(result.route.fees.agentCallFee).toEqual({ amount: '0.02', token: 'USDC', network: 'base', atomic: '20000' })
    const header = response.headers.get('x-payment-response')
    expect(header).not.toBeNull()
    const receipt = decodeXPaymentResponse(header ?? '')
    expect(receipt).toEqual({
      success: true,
      transaction: `ledger:${result.swapEaziRef}`,
      network: 'base',
      payer: payer.address,
      settlement: 'ledger',
    })

    const swap = await store.getSwap(result.swapEaziRef)
    expect(swap?.payment?.payer).toBe(payer.address.toLowerCase())
    expect(swap?.transactionRequest).toEqual(result.transactionRequest)
    const payment = await store.getPayment(payer.address, swap?.payment?.nonce ?? '')
    expect(payment).toMatchObject({
      status: 'settled',
      value: 20_000n,
      swapRef: result.swapEaziRef,
      transaction: `ledger:${result.swapEaziRef}`,
    })
    const routerCall = decodeFunctionData({
      abi: parseAbi([
        'function execute((bytes32 ref,address tokenIn,uint256 amountIn,uint256 fee,address tokenOut,uint256 minOut,address recipient,uint256 deadline,(address target,address token,uint256 amountOffset,uint256 value,bytes data)[] calls) order)',
      ]),
      data: result.transactionRequest.data as `0x${string}`,
    })
    expect(routerCall.functionName).toBe('execute')
    // The answer's deadline is the order's: the router refuses the transaction in any later block.
    expect(BigInt(Date.parse(result.deadline) / 1000)).toBe(routerCall.args[0].deadline)
  })
})

describe('bad payments each get their reason and a fresh challenge', () => {
  const cases: [string, (now: number) => Promise<string>, string][] = [
    [
      'tampered signature',
      async (now) => {
        const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: now })
        const inner = payload['payload'] as { signature: string }
        inner.signature = `${inner.signature.slice(0, 10)}${inner.signature[10] === 'a' ? 'b' : 'a'}${inner.signature.slice(11)}`
        return encodeHeader(payload)
      },
      'invalid_signature',
    ],
    ['amount 19999', async (now) => (await signPayment(payer, { payTo: PAY_TO, nowSec: now, value: 19_999n })).header, 'amount_mismatch'],
    ['amount 20001', async (now) => (await signPayment(payer, { payTo: PAY_TO, nowSec: now, value: 20_001n })).header, 'amount_mismatch'],
    [
      'wrong payTo',
      async (now) => (await signPayment(payer, { payTo: '0x3333333333333333333333333333333333333333', nowSec: now })).header,
      'recipient_mismatch',
    ],
    [
      'wrong asset (signed for another token)',
      async (now) => (await signPayment(payer, { payTo: PAY_TO, nowSec: now, asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' })).header,
      'invalid_signature',
    ],
    [
      'wrong network',
      async (now) => (await signPayment(payer, { payTo: PAY_TO, nowSec: now, network: 'base-sepolia', chainId: 84532 })).header,
      'network_mismatch',
    ],
    [
      'wrong scheme',
      async (now) => (await signPayment(payer, { payTo: PAY_TO, nowSec: now, scheme: 'upto' })).header,
      'unsupported_scheme',
    ],
    [
      'expired',
      async (now) =>
        (await signPayment(payer, { payTo: PAY_TO, nowSec: now, validAfter: BigInt(now - 900), validBefore: BigInt(now - 1) })).header,
      'authorization_expired',
    ],
    [
      'not yet valid',
      async (now) =>
        (await signPayment(payer, { payTo: PAY_TO, nowSec: now, validAfter: BigInt(now + 120), validBefore: BigInt(now + 400) })).header,
      'authorization_not_yet_valid',
    ],
    ['malformed header', async () => 'not base64 at all!', 'invalid_payment'],
    ['base64 of something that is not JSON', async () => Buffer.from('hello').toString('base64'), 'invalid_payment'],
    [
      'JSON that is not a payment',
      async () => encodeHeader({ x402Version: 1, scheme: 'exact', network: 'base', payload: {} }),
      'invalid_payment',
    ],
    [
      'v2-shaped payload',
      async (now) => {
        const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: now })
        return encodeHeader({ x402Version: 2, accepted: { scheme: 'exact', network: 'eip155:8453' }, payload: payload['payload'] })
      },
      'invalid_payment',
    ],
  ]

  it.each(cases)('%s', async (_name, makeHeader, reason) => {
    const { app } = freshApp()
    const before = await countRows('x402_payments')
    const response = await postJson(app, SWAP, body, { 'x-payment': await makeHeader(nowSec()) })
    const challenge = await challengeOf(response)
    expect(challenge.error).toBe(reason)
    expect(challenge.detail).toMatch(/Nothing was charged\.$/)
    expect(challenge.accepts).toHaveLength(1)
    expect(response.headers.get('x-payment-response')).toBeNull()
    expect(await countRows('x402_payments')).toBe(before)
  })

  it('accepts base64url as well as standard base64', async () => {
    const { app } = freshApp()
    const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    // An extra member (ignored by the parser) whose encoding needs base64's 62nd and 63rd characters.
    const url = Buffer.from(JSON.stringify({ ...payload, memo: '~~~???>>>' })).toString('base64url')
    expect(url).toMatch(/[-_]/)
    expect(url).not.toMatch(/=$/)
    const response = await postJson(app, SWAP, body, { 'x-payment': url })
    expect(response.status).toBe(200)
  })
})

describe('single use, and a paid retry that never loses the swap', () => {
  it('answers the same X-PAYMENT with the same request again with the same swap and receipt, charging once', async () => {
    const { app } = freshApp()
    const payments = await countRows('x402_payments')
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const first = await postJson(app, SWAP, body, { 'x-payment': header })
    expect(first.status).toBe(200)
    // The same request, spelt differently: symbols in another case and the recipient named as the sender.
    const again = await postJson(app, SWAP, { ...body, fromToken: 'usdc', toAddress: payer.address }, { 'x-payment': header })
    expect(again.status).toBe(200)
    expect(await readJson(again)).toEqual(await readJson(first))
    expect(decodeXPaymentResponse(again.headers.get('x-payment-response') ?? '')).toEqual(
      decodeXPaymentResponse(first.headers.get('x-payment-response') ?? ''),
    )
    expect(await countRows('x402_payments')).toBe(payments + 1)
  })

  it('refuses the same X-PAYMENT for a different request with payment_already_used, naming the swap it bought', async () => {
    const { app } = freshApp()
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const first = SwapResult.parse(await readJson(await postJson(app, SWAP, body, { 'x-payment': header })))
    const swapsBefore = await countRows('swaps')
    const other = await postJson(app, SWAP, { ...body, fromAmount: '101' }, { 'x-payment': header })
    expect(other.status).toBe(402)
    const replay = await challengeOf(other)
    expect(replay.error).toBe('payment_already_used')
    expect(replay.detail).toContain(
      `already paid for swap ${first.swapEaziRef} (${first.fromAmount} ${first.fromToken} on ${first.fromChain} to ${first.toToken} on ${first.toChain})`,
    )
    expect(replay.detail).toContain('Nothing was charged for this request')
    expect(await countRows('swaps')).toBe(swapsBefore)
  })

  // Audit of issue 15: the swap handed out again past its deadline still said "Sign and send" a transaction the
  // router refuses (the authorization may stay valid for an hour, the order for 10 minutes).
  it('hands the swap out again past its deadline with steps that say not to sign it, and what to do instead', async () => {
    let now = Date.now()
    const app = testApp({ store, clock: () => now })
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validBefore: BigInt(nowSec() + 3_000) })
    const first = SwapResult.parse(await readJson(await postJson(app, SWAP, body, { 'x-payment': header })))
    expect(first.nextSteps.at(-1)).toMatch(/^Sign and send transactionRequest/)
    now = Date.parse(first.deadline) + 60_000
    const late = await postJson(app, SWAP, body, { 'x-payment': header })
    expect(late.status).toBe(200)
    const again = SwapResult.parse(await readJson(late))
    expect(again.swapEaziRef).toBe(first.swapEaziRef)
    expect(again.nextSteps).toHaveLength(1)
    expect(again.nextSteps[0]).toMatch(
      new RegExp(
        `^Do not sign transactionRequest or its approval: this swap's deadline \\(${first.deadline.replaceAll('.', '\\.')}\\) has passed`,
      ),
    )
    expect(again.nextSteps[0]).toContain(`GET /api/v1/swap/${first.swapEaziRef}/status`)
  })

  // DESIGN 7.27: a paid swap builds the ranked route it names, as POST /api/v1/quote ranks them.
  it("builds the ranked route named by route, and a payment for one route is not the other route's", async () => {
    const { app } = freshApp()
    const cross = quoteBody({ fromAddress: payer.address.toLowerCase(), fromChain: 'BAS', toChain: 'POL', fromAmount: '1000' })
    const ranked = await readJson<{ routes: { ranking: string; route: { id: string } }[] }>(
      await postJson(testApp({ store, clock: Date.now }), '/api/v1/quote', cross, { 'x-swapeazi-key': PRO_KEY }),
    )
    const idOf = (ranking: string) => ranked.routes.find((entry) => entry.ranking === ranking)?.route.id
    // Across ranks fastest here, CCTP's fast transfer balanced.
    expect(idOf('FASTEST')).not.toBe(idOf('BALANCED'))
    for (const route of ['FASTEST', 'BALANCED', 'CHEAPEST'] as const) {
      const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
      const paid = await postJson(app, SWAP, { ...cross, route }, { 'x-payment': header })
      expect(paid.status, await paid.clone().text()).toBe(200)
      expect(SwapResult.parse(await readJson(paid)).route.id).toBe(idOf(route))
      if (route === 'FASTEST') {
        const other = await postJson(app, SWAP, cross, { 'x-payment': header })
        expect((await challengeOf(other)).error).toBe('payment_already_used')
      }
    }
    const bad = await postJson(app, SWAP, { ...cross, route: 'SLOWEST' }, {})
    expect(bad.status).toBe(400)
  })

  // DESIGN 7.27: a paid swap builds a quote as quoted when it names its quoteId.
  it('builds the quoted route of a quoteId sent with the body it quoted; refuses one of another body, or with route', async () => {
    let now = Date.now()
    const app = testApp({ store, clock: () => now })
    const cross = quoteBody({ fromAddress: payer.address.toLowerCase(), fromChain: 'BAS', toChain: 'POL', fromAmount: '1000' })
    const ranked = await readJson<{ routes: { ranking: string; quoteId: string; toAmountMin: string; route: { id: string } }[] }>(
      await postJson(app, '/api/v1/quote', cross, { 'x-swapeazi-key': PRO_KEY }),
    )
    const fastest = ranked.routes.find((entry) => entry.ranking === 'FASTEST')
    if (fastest === undefined) throw new Error('no FASTEST route')
    const withQuote = { ...cross, quoteId: fastest.quoteId }
    // Refused before any payment is asked: another body, route beside it, a quoteId that is not one.
    const other = await postJson(app, SWAP, { ...withQuote, fromAmount: '999' })
    expect(other.status).toBe(400)
    expect(await readJson(other)).toMatchObject({ code: 'invalid_quote', reason: 'other_request' })
    expect((await postJson(app, SWAP, { ...withQuote, route: 'FASTEST' })).status).toBe(400)
    expect(await readJson(await postJson(app, SWAP, { ...cross, quoteId: 'q1.forged' }))).toMatchObject({ code: 'invalid_quote' })
    expect((await postJson(app, SWAP, withQuote)).status).toBe(402)

    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validBefore: BigInt(nowSec() + 600) })
    const paid = await postJson(app, SWAP, withQuote, { 'x-payment': header })
    expect(paid.status, await paid.clone().text()).toBe(200)
    const swap = SwapResult.parse(await readJson(paid))
    expect(swap.route.id).toBe(fastest.route.id)
    expect(BigInt(decimalToUnits(swap.toAmountMin, 6))).toBeGreaterThanOrEqual(BigInt(decimalToUnits(fastest.toAmountMin, 6)))
    // The same payment without the quoteId is another request; after the quote expired, the retry is the same swap.
    expect((await challengeOf(await postJson(app, SWAP, cross, { 'x-payment': header }))).error).toBe('payment_already_used')
    now += 120_000
    expect(await readJson(await postJson(app, SWAP, withQuote))).toMatchObject({ code: 'quote_expired' })
    const retry = await postJson(app, SWAP, withQuote, { 'x-payment': header })
    expect(retry.status).toBe(200)
    expect(SwapResult.parse(await readJson(retry)).swapEaziRef).toBe(swap.swapEaziRef)
  })

  it('gives 50 concurrent submissions of one X-PAYMENT the one swap it paid for, recorded and charged once', async () => {
    const { app } = freshApp()
    const swapsBefore = await countRows('swaps')
    const paymentsBefore = await countRows('x402_payments')
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const responses = await Promise.all(Array.from({ length: 50 }, () => postJson(app, SWAP, body, { 'x-payment': header })))
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 200))
    const refs = new Set(await Promise.all(responses.map(async (r) => SwapResult.parse(await readJson(r)).swapEaziRef)))
    expect(refs.size).toBe(1)
    expect(await countRows('swaps')).toBe(swapsBefore + 1)
    expect(await countRows('x402_payments')).toBe(paymentsBefore + 1)
  })
})

describe('a payment whose settling request stopped (a crash mid-settlement)', () => {
  it('is pending while its request may still be running, then is reconciled: released and paid afresh once money cannot move', async () => {
    const reconciled: string[] = []
    const settler = externalSettler('onchain', {
      check: async () => ({ ok: true }),
      settle: async (_payment, swapEaziRef) => ({ ok: true, transaction: `0x${'5e'.repeat(32)}:${swapEaziRef}` }),
      reconcile: async (row) => {
        reconciled.push(row.swapRef)
        return { state: 'unused', message: 'The authorization expired unused.' }
      },
    })
    let now = Date.now()
    const app = testApp({ clock: () => now, store, settler })
    const { payload, header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const { authorization, signature } = (payload as { payload: { authorization: Record<string, string>; signature: string } }).payload
    // What a request that died after reserving leaves behind: the reservation, and no swap.
    await store.reservePayment({
      payer: authorization['from'] ?? '',
      nonce: authorization['nonce'] ?? '',
      value: BigInt(authorization['value'] ?? 0),
      asset: USDC_BASE,
      payTo: PAY_TO,
      validAfter: BigInt(authorization['validAfter'] ?? 0),
      validBefore: BigInt(authorization['validBefore'] ?? 0),
      signature,
      settlementMode: 'onchain',
      swapRef: 'swp_stopped',
      reservedAt: new Date(now),
      requestKey: paidRequestKey(resolveQuoteRequest(testDeps(), QuoteParams.parse(body))),
      result: { swapEaziRef: 'swp_stopped' },
    })
    const pending = await challengeOf(await postJson(app, SWAP, body, { 'x-payment': header }))
    expect(pending.error).toBe('settlement_pending')
    expect(reconciled).toEqual([])

    now += 181_000
    const paid = await postJson(app, SWAP, body, { 'x-payment': header })
    expect(paid.status).toBe(200)
    expect(reconciled).toEqual(['swp_stopped'])
    const swap = SwapResult.parse(await readJson(paid))
    expect(swap.swapEaziRef).not.toBe('swp_stopped')
    expect(await store.getPayment(payer.address, authorization['nonce'] ?? '')).toMatchObject({
      status: 'settled',
      swapRef: swap.swapEaziRef,
    })
  })
})

describe('compliance screening comes before any 402', () => {
  const listed = loadSanctionsList(`${MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`).addresses[0] ?? ''

  it.each([
    ['sender, lowercase', { fromAddress: listed }, 'fromAddress'],
    ['sender, uppercase hex', { fromAddress: `0x${listed.slice(2).toUpperCase()}` }, 'fromAddress'],
    ['recipient', { toAddress: listed }, 'toAddress'],
  ])('refuses a listed %s with 403 address_screened, naming no list', async (_name, overrides, field) => {
    const { app } = freshApp()
    const response = await postJson(app, SWAP, quoteBody(overrides))
    expect(response.status).toBe(403)
    const problem = await readJson(response)
    expect(problem).toMatchObject({ code: 'address_screened', field, status: 403 })
    expect(JSON.stringify(problem)).not.toMatch(/ofac|sdn|sanction/i)
  })

  it('refuses a listed sender even with a valid payment attached, and charges nothing', async () => {
    const { app } = freshApp()
    const before = await countRows('x402_payments')
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const response = await postJson(app, SWAP, quoteBody({ fromAddress: listed }), { 'x-payment': header })
    expect(response.status).toBe(403)
    expect(await countRows('x402_payments')).toBe(before)
  })
})

describe('a swap that cannot be built charges nothing', () => {
  it('answers 422 to a valid payment on an unbuildable route, and the same authorization pays for a buildable one', async () => {
    const { app } = freshApp()
    const before = { payments: await countRows('x402_payments'), swaps: await countRows('swaps') }
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const refused = await postJson(
      app,
      SWAP,
      quoteBody({ fromAddress: payer.address, fromChain: 'ETH', toChain: 'CEL', toToken: 'cKES' }),
      { 'x-payment': header },
    )
    expect(refused.status).toBe(422)
    expect((await readJson(refused))['code']).toBe('no_route_found')
    expect(await countRows('x402_payments')).toBe(before.payments)
    // A pair no venue or bridge joins at all: the code the free quote's reason names, and no payment taken either.
    const pair = { fromAddress: payer.address, fromChain: 'ETH', toChain: 'ETH', fromToken: 'RLUSD', toToken: 'USDD', fromAmount: '10' }
    const free = await readJson(await postJson(app, '/api/x402/quote', quoteBody(pair)))
    expect(free).toMatchObject({ supported: false, reason: 'no_route_found' })
    const unjoined = await postJson(app, SWAP, quoteBody(pair), { 'x-payment': header })
    expect(unjoined.status).toBe(422)
    expect(await readJson(unjoined)).toMatchObject({ code: 'no_route_found', notServed: { reason: 'no_route' } })
    expect(unjoined.headers.get('x-payment-response')).toBeNull()
    expect(await countRows('x402_payments')).toBe(before.payments)
    expect(await countRows('swaps')).toBe(before.swaps)
    const paid = await postJson(app, SWAP, body, { 'x-payment': header })
    expect(paid.status).toBe(200)
    expect(await countRows('swaps')).toBe(before.swaps + 1)
  })

  it('gives the reservation back when settlement throws after the payment was reserved', async () => {
    const failing = testApp({
      clock: Date.now,
      store,
      settler: externalSettler('onchain', {
        check: async () => ({ ok: true }),
        settle: async () => Promise.reject(new Error('settler exploded')),
      }),
    })
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const before = await countRows('x402_payments')
    const crashed = await postJson(failing, SWAP, body, { 'x-payment': header })
    expect(crashed.status).toBe(500)
    expect((await readJson(crashed))['detail']).toMatch(/nothing was charged/)
    expect(await countRows('x402_payments')).toBe(before)
    const { app } = freshApp()
    expect((await postJson(app, SWAP, body, { 'x-payment': header })).status).toBe(200)
  })

  it('answers a refused settlement with 402 settlement_failed, records no swap, and lets the authorization pay again', async () => {
    const refusing = testApp({
      clock: Date.now,
      store,
      settler: externalSettler('onchain', {
        check: async () => ({ ok: true }),
        settle: async () => ({ ok: false, reason: 'settlement_failed', message: 'The chain refused.' }),
      }),
    })
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const before = { payments: await countRows('x402_payments'), swaps: await countRows('swaps') }
    const challenge = await challengeOf(await postJson(refusing, SWAP, body, { 'x-payment': header }))
    expect(challenge.error).toBe('settlement_failed')
    expect(challenge.detail).toBe('The chain refused. Nothing was charged.')
    expect({ payments: await countRows('x402_payments'), swaps: await countRows('swaps') }).toEqual(before)
    const { app } = freshApp()
    expect((await postJson(app, SWAP, body, { 'x-payment': header })).status).toBe(200)
  })
})

describe('the MPP path and the payment manifest', () => {
  it('serves the same handler on /api/mpp/swap', async () => {
    const { app } = freshApp()
    const challenge = await challengeOf(await postJson(app, '/api/mpp/swap', body))
    expect(challenge.accepts[0]?.resource).toBe(`${PUBLIC_URL}/api/mpp/swap`)
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    expect((await postJson(app, '/api/mpp/swap', body, { 'x-payment': header })).status).toBe(200)
  })

  it('refuses X-PAYMENT together with Authorization: Payment', async () => {
    const { app } = freshApp()
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const response = await postJson(app, '/api/mpp/swap', body, { 'x-payment': header, authorization: 'Payment abc' })
    expect(response.status).toBe(400)
    expect((await readJson(response))['code']).toBe('conflicting_payment')
  })

  it('lists both paid endpoints in /.well-known/x402.json with the requirements their 402 carries', async () => {
    const { app } = freshApp()
    const manifest = await readJson<{ x402Version: number; resources: { resource: string; method: string; accepts: unknown[] }[] }>(
      await get(app, '/.well-known/x402.json'),
    )
    expect(manifest.x402Version).toBe(1)
    expect(manifest.resources.map((r) => `${r.method} ${r.resource}`)).toEqual([
      `POST ${PUBLIC_URL}/api/x402/swap`,
      `POST ${PUBLIC_URL}/api/mpp/swap`,
    ])
    const challenge = await challengeOf(await postJson(app, SWAP, body))
    expect(manifest.resources[0]?.accepts).toEqual(challenge.accepts)
    const routes = await readJson<{ agentPayments: { x402: { manifest: string } } }>(await get(app, '/api/mpp/routes'))
    expect(routes.agentPayments.x402.manifest).toBe('/.well-known/x402.json')
  })

  it('names the settlement mode and payTo in health, and that MPP is off without a Tempo RPC', async () => {
    const { app } = freshApp()
    const health = await readJson(await get(app, '/api/v1/health'))
    expect(health['payments']).toEqual({ settlement: 'ledger', payTo: PAY_TO, network: 'base', mpp: { available: false } })
    expect(health['store']).toEqual({ driver: 'pglite' })
  })
})
