import { request as httpRequest } from 'node:http'
import { x402Client } from '@x402/core/client'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { decodePaymentResponseHeader } from '@x402/fetch'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeXPaymentResponse } from 'x402/shared'
import { ledgerSettler } from '../../src/payments/x402/ledgerSettler.ts'
import type { Settler } from '../../src/payments/x402/settlement.ts'
import { encodeBase64Json } from '../../src/payments/x402/v2.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { PaymentRequiredV2, X402Challenge } from '../../src/schemas/x402.ts'
import { lazyMemoryStore, PAY_TO, quoteBody, testApp } from '../http/testApp.ts'
import { signPayment } from '../payments/signPayment.ts'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'

// Issue 16 item 4: a payer whose connection drops after the payment is recorded retries with the same payment and
// gets the swap it paid for, over a real socket, in both x402 versions.

const SWAP = '/api/x402/swap'
const payer = privateKeyToAccount(generatePrivateKey())
const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
const nowSec = (): number => Math.floor(Date.now() / 1000)
const store = lazyMemoryStore()

/** Sockets to cut once the settler has recorded the payment: the answer is then lost on its way back. */
const toCut = new Set<() => void>()
const ledger = ledgerSettler()
const cuttingSettler: Settler = {
  mode: ledger.mode,
  async collect(parameters) {
    const outcome = await ledger.collect(parameters)
    for (const cut of toCut) cut()
    toCut.clear()
    return outcome
  },
}

let server: ListeningApp
beforeAll(async () => {
  server = await listenOnLoopback(testApp({ clock: Date.now, store, settler: cuttingSettler }).fetch)
})
afterAll(async () => {
  await server?.close()
  await store.sql.close()
})

/** POSTs the paid request over a socket that is destroyed right after the payment is recorded; resolves with the error. */
function postAndDropAfterPayment(headers: Record<string, string>): Promise<Error> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.base}${SWAP}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } })
    toCut.add(() => request.destroy(new Error('connection dropped by the test')))
    request.on('response', () => reject(new Error('the answer arrived, so the connection was not dropped in time')))
    request.on('error', resolve)
    request.end(JSON.stringify(body))
  })
}

function post(headers: Record<string, string>, payload: object = body): Promise<Response> {
  return fetch(`${server.base}${SWAP}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  })
}

async function recordedPayment(nonce: string): Promise<{ status: string; swap_ref: string } | undefined> {
  const [row] = await store.sql.query<{ status: string; swap_ref: string }>('select status, swap_ref from x402_payments where nonce = $1', [
    nonce.toLowerCase(),
  ])
  return row
}

describe('a paid retry after the connection dropped', () => {
  it('x402 v1: the same X-PAYMENT gets the swap it paid for (same ref and transaction, receipt again), charged once', async () => {
    const { payload, header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const nonce = (payload['payload'] as { authorization: { nonce: string } }).authorization.nonce

    expect((await postAndDropAfterPayment({ 'x-payment': header })).message).toBe('connection dropped by the test')
    const recorded = await recordedPayment(nonce)
    expect(recorded?.status).toBe('settled')

    const retry = await post({ 'x-payment': header })
    expect(retry.status).toBe(200)
    const swap = SwapResult.parse(await retry.json())
    expect(swap.swapEaziRef).toBe(recorded?.swap_ref)
    const stored = await store.getSwap(swap.swapEaziRef)
    expect(swap.transactionRequest).toEqual(stored?.transactionRequest)
    expect(decodeXPaymentResponse(retry.headers.get('x-payment-response') ?? '')).toMatchObject({
      success: true,
      transaction: `ledger:${swap.swapEaziRef}`,
      payer: payer.address,
    })
    const [count] = await store.sql.query<{ n: number }>('select count(*)::int as n from swaps where payer = $1 and payment_nonce = $2', [
      payer.address.toLowerCase(),
      nonce.toLowerCase(),
    ])
    expect(count?.n).toBe(1)

    // The payment cannot buy a second, different swap.
    const other = await post({ 'x-payment': header }, { ...body, fromAmount: '250' })
    expect(other.status).toBe(402)
    const refused = X402Challenge.parse(await other.json())
    expect(refused.error).toBe('payment_already_used')
    expect(refused.detail).toContain(swap.swapEaziRef)
  })

  it('x402 v2 (a real @x402/core client): the same PAYMENT-SIGNATURE gets the same swap, answered in v2 (PAYMENT-RESPONSE, eip155:8453)', async () => {
    const unpaid = await post({})
    expect(unpaid.status).toBe(402)
    const required = PaymentRequiredV2.parse(JSON.parse(Buffer.from(unpaid.headers.get('payment-required') ?? '', 'base64').toString()))
    const paymentPayload = await new x402Client().register('eip155:8453', new ExactEvmScheme(payer)).createPaymentPayload(required as never)
    const signature = encodeBase64Json(paymentPayload)
    const nonce = (paymentPayload.payload as { authorization: { nonce: string } }).authorization.nonce

    expect((await postAndDropAfterPayment({ 'payment-signature': signature })).message).toBe('connection dropped by the test')
    const recorded = await recordedPayment(nonce)
    expect(recorded?.status).toBe('settled')

    const retry = await post({ 'payment-signature': signature })
    expect(retry.status).toBe(200)
    expect(SwapResult.parse(await retry.json()).swapEaziRef).toBe(recorded?.swap_ref)
    expect(retry.headers.get('x-payment-response')).toBeNull()
    expect(decodePaymentResponseHeader(retry.headers.get('payment-response') ?? '')).toMatchObject({
      success: true,
      network: 'eip155:8453',
      transaction: `ledger:${recorded?.swap_ref}`,
      payer: payer.address,
    })
  })
})
