import { wrapFetchWithPayment as wrapFetchWithPaymentV2, decodePaymentResponseHeader, x402Client } from '@x402/fetch'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { type Hex, recoverTypedDataAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { BASE_CHAIN_ID, USDC_BASE_EIP712 } from '../../src/payments/x402/paymentRequirements.ts'
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/payments/x402/verifyPayment.ts'
import { PaymentRequiredV2, SettleResponseV2, X402Challenge } from '../../src/schemas/x402.ts'
import { encodeHeader, freshNonce, signPayment, USDC_BASE } from '../payments/signPayment.ts'
import { listenOnLoopback } from '../support/listenOnLoopback.ts'
import { lazyMemoryStore, PAY_TO, PUBLIC_URL, postJson, quoteBody, readJson, testApp } from './testApp.ts'

const SWAP = '/api/x402/swap'
const payer = privateKeyToAccount(generatePrivateKey())
const nowSec = (): number => Math.floor(Date.now() / 1000)
const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ clock: Date.now, store })

async function countRows(table: 'x402_payments' | 'swaps'): Promise<number> {
  const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`)
  return row?.n ?? -1
}

function decodeBase64Json(header: string | null): unknown {
  if (header === null) throw new Error('header missing')
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8'))
}

/** The v2 accepts entry our 402 offers, as a v2 client copies it into `accepted`. */
const OFFERED = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '20000',
  asset: USDC_BASE,
  payTo: PAY_TO,
  maxTimeoutSeconds: 300,
  extra: { name: 'USD Coin', version: '2' },
}

/** The same signed authorization as a v2 PAYMENT-SIGNATURE header. */
function asV2(v1: Record<string, unknown>, accepted: Record<string, unknown> = OFFERED): string {
  return encodeHeader({ x402Version: 2, resource: { url: `${PUBLIC_URL}${SWAP}` }, accepted, payload: v1['payload'] })
}

describe('x402 v2 on the paid swap', () => {
  it('sends PAYMENT-REQUIRED (v2, eip155:8453) on every 402 beside the unchanged v1 body, readable through CORS', async () => {
    const response = await postJson(app, SWAP, body)
    expect(response.status).toBe(402)
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge.x402Version).toBe(1)
    expect(challenge.accepts[0]?.network).toBe('base')
    // Each version's error names the header that version pays in.
    expect(challenge.error).toBe('X-PAYMENT header is required')
    expect(PaymentRequiredV2.parse(decodeBase64Json(response.headers.get('payment-required')))).toEqual({
      x402Version: 2,
      error: 'PAYMENT-SIGNATURE header is required',
      resource: { url: `${PUBLIC_URL}${SWAP}`, description: challenge.accepts[0]?.description, mimeType: 'application/json' },
      accepts: [OFFERED],
    })
    expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-REQUIRED')
    expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE')

    // A refused payment's 402 carries it too, with the refusal's reason.
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), value: 1n })
    const refused = await postJson(app, SWAP, body, { 'x-payment': header })
    expect(refused.status).toBe(402)
    expect(PaymentRequiredV2.parse(decodeBase64Json(refused.headers.get('payment-required'))).error).toBe('amount_mismatch')
  })

  it('is paid by @x402/fetch 2.x with only the v2 exact scheme: PAYMENT-SIGNATURE in, PAYMENT-RESPONSE out', async () => {
    const sent: Headers[] = []
    const localFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init)
      sent.push(request.headers)
      return app.request(request)
    }
    const client = new x402Client().register('eip155:8453', new ExactEvmScheme(payer))
    const paidFetch = wrapFetchWithPaymentV2(localFetch as typeof fetch, client)
    const paymentsBefore = await countRows('x402_payments')
    const response = await paidFetch(`${PUBLIC_URL}${SWAP}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status).toBe(200)
    expect(sent).toHaveLength(2)
    expect(sent[1]?.get('payment-signature')).toBeTruthy()
    expect(sent[1]?.get('x-payment')).toBeNull()
    expect(response.headers.get('x-payment-response')).toBeNull()
    const settled = SettleResponseV2.parse(decodePaymentResponseHeader(response.headers.get('payment-response') ?? ''))
    expect(settled).toMatchObject({ success: true, network: 'eip155:8453', payer: payer.address, settlement: 'ledger' })
    expect(settled.transaction).toMatch(/^ledger:/)
    expect(await countRows('x402_payments')).toBe(paymentsBefore + 1)
  })

  it('takes one authorization once across both versions (v1 then v2, and v2 then v1), the retry answered in its own version', async () => {
    for (const order of [
      ['x-payment', 'payment-signature'],
      ['payment-signature', 'x-payment'],
    ] as const) {
      const { payload, header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validAfter: 0n })
      const headerFor = (name: string): Record<string, string> => ({ [name]: name === 'x-payment' ? header : asV2(payload) })
      const payments = await countRows('x402_payments')
      const first = await postJson(app, SWAP, body, headerFor(order[0]))
      expect(first.status).toBe(200)
      // The same request again in the other version: the same swap, with the receipt in the header of that version.
      const retry = await postJson(app, SWAP, body, headerFor(order[1]))
      expect(retry.status).toBe(200)
      expect((await readJson(retry))['swapEaziRef']).toBe((await readJson(first))['swapEaziRef'])
      if (order[1] === 'payment-signature') {
        expect(retry.headers.get('x-payment-response')).toBeNull()
        expect(SettleResponseV2.parse(decodeBase64Json(retry.headers.get('payment-response')))).toMatchObject({
          success: true,
          network: 'eip155:8453',
        })
      } else {
        expect(retry.headers.get('payment-response')).toBeNull()
        expect(retry.headers.get('x-payment-response')).not.toBeNull()
      }
      expect(await countRows('x402_payments')).toBe(payments + 1)
      // A different request with it is refused, in either version.
      const other = await postJson(app, SWAP, { ...body, fromAmount: '7' }, headerFor(order[1]))
      expect(other.status).toBe(402)
      expect((await readJson(other))['error']).toBe('payment_already_used')
    }
  })

  it('refuses a v2 payment whose accepted is not what was offered, before anything is recorded', async () => {
    const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validAfter: 0n })
    const before = await countRows('x402_payments')
    const response = await postJson(app, SWAP, body, { 'payment-signature': asV2(payload, { ...OFFERED, maxTimeoutSeconds: 60 }) })
    expect(response.status).toBe(402)
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge.error).toBe('invalid_payment')
    expect(challenge.detail).toContain('accepts[0]')
    expect(await countRows('x402_payments')).toBe(before)
    // The same authorization with the offer copied unchanged pays.
    expect((await postJson(app, SWAP, body, { 'payment-signature': asV2(payload) })).status).toBe(200)
  })
})

describe('payments that must be refused', () => {
  it('tells a v2 payment sent in X-PAYMENT to use PAYMENT-SIGNATURE', async () => {
    const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validAfter: 0n })
    const response = await postJson(app, SWAP, body, { 'x-payment': asV2(payload) })
    expect(response.status).toBe(402)
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge.error).toBe('invalid_payment')
    expect(challenge.detail).toContain('PAYMENT-SIGNATURE')
  })

  it.each([
    [['x-payment', 'payment-signature']],
    [['x-payment', 'authorization']],
    [['payment-signature', 'authorization']],
    [['x-payment', 'payment-signature', 'authorization']],
  ])('answers 400 conflicting_payment to %j together, Authorization: Payment bare, malformed or not', async (names) => {
    const { payload, header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validAfter: 0n })
    for (const authorization of ['Payment', 'payment', 'Payment !!not a credential', 'Payment abc']) {
      const values: Record<string, string> = { 'x-payment': header, 'payment-signature': asV2(payload), authorization }
      const headers = Object.fromEntries(names.map((name) => [name, values[name] ?? '']))
      const before = await countRows('x402_payments')
      for (const path of [SWAP, '/api/mpp/swap']) {
        const response = await postJson(app, path, body, headers)
        expect(response.status, `${path} ${JSON.stringify(headers)}`).toBe(400)
        const problem = await readJson(response)
        expect(problem['code']).toBe('conflicting_payment')
        expect(problem['detail']).toContain('Nothing was charged')
      }
      expect(await countRows('x402_payments')).toBe(before)
    }
  })

  it('does not take Authorization: Bearer (an API key) for a second payment', async () => {
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    expect((await postJson(app, SWAP, body, { 'x-payment': header, authorization: 'Bearer sk_test' })).status).not.toBe(400)
  })

  it('refuses the high-s twin of a valid signature as invalid_signature before recording anything', async () => {
    const nonce = freshNonce()
    const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), nonce })
    const inner = payload['payload'] as { signature: Hex; authorization: Record<string, string> }
    const r = inner.signature.slice(2, 66)
    const s = BigInt(`0x${inner.signature.slice(66, 130)}`)
    const v = Number.parseInt(inner.signature.slice(130), 16)
    const twin: Hex = `0x${r}${(SECP256K1_N - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`
    // The twin is a valid ECDSA signature by the payer: only EIP-2 tells them apart.
    const auth = inner.authorization
    const recovered = await recoverTypedDataAddress({
      domain: { ...USDC_BASE_EIP712, chainId: BASE_CHAIN_ID, verifyingContract: USDC_BASE },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: auth['from'] as Hex,
        to: auth['to'] as Hex,
        value: BigInt(auth['value'] ?? ''),
        validAfter: BigInt(auth['validAfter'] ?? ''),
        validBefore: BigInt(auth['validBefore'] ?? ''),
        nonce,
      },
      signature: twin,
    })
    expect(recovered).toBe(payer.address)

    const highS = { ...payload, payload: { ...inner, signature: twin } }
    const before = await countRows('x402_payments')
    for (const headers of [{ 'x-payment': encodeHeader(highS) }, { 'payment-signature': asV2(highS) }]) {
      const response = await postJson(app, SWAP, body, headers)
      expect(response.status).toBe(402)
      const challenge = X402Challenge.parse(await readJson(response))
      expect(challenge.error).toBe('invalid_signature')
      expect(challenge.detail).toContain('high-s')
    }
    expect(await countRows('x402_payments')).toBe(before)
    // Nothing was held: the low-s original still pays.
    expect((await postJson(app, SWAP, body, { 'x-payment': encodeHeader(payload) })).status).toBe(200)
  })
})

describe("over a socket (headers read from Node's request)", () => {
  it('is paid in v2 by @x402/fetch, and refuses PAYMENT-SIGNATURE with a bare Authorization: Payment', async () => {
    const server = await listenOnLoopback(app.fetch)
    try {
      const sent: Headers[] = []
      const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
        const request = new Request(input, init)
        sent.push(request.headers)
        return fetch(request)
      }
      const client = new x402Client().register('eip155:8453', new ExactEvmScheme(payer))
      const response = await wrapFetchWithPaymentV2(recordingFetch as typeof fetch, client)(`${server.base}${SWAP}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      expect(response.status).toBe(200)
      expect(sent[1]?.get('payment-signature')).toBeTruthy()
      expect(response.headers.get('access-control-expose-headers')).toContain('PAYMENT-RESPONSE')
      expect(decodePaymentResponseHeader(response.headers.get('payment-response') ?? '')).toMatchObject({
        success: true,
        payer: payer.address,
      })

      const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validAfter: 0n })
      const conflicting = await fetch(`${server.base}${SWAP}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': asV2(payload), authorization: 'Payment' },
        body: JSON.stringify(body),
      })
      expect(conflicting.status).toBe(400)
      expect(((await conflicting.json()) as { code: string }).code).toBe('conflicting_payment')
    } finally {
      await server.close()
    }
  })
})
