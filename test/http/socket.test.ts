import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { wrapFetchWithPayment } from 'x402-fetch'
import { decodeXPaymentResponse } from 'x402/shared'
import { MAX_BODY_BYTES } from '../../src/http/createApp.ts'
import { lazyMemoryStore, quoteBody, testApp } from './testApp.ts'

// Over a real socket @hono/node-server takes paths `app.request()` never does: headers read from Node's own
// request object and the Content-Length body limit. These tests pin that both behave like the in-process app.
let server: ListeningApp
let base = ''

const store = lazyMemoryStore()

beforeAll(async () => {
  // The wall clock: x402-fetch signs payments with the real time.
  const app = testApp({ clock: Date.now, store })
  server = await listenOnLoopback(app.fetch)
  base = server.base
})
afterAll(async () => {
  await server.close()
  await store.sql.close()
})

const post = (
  body: string | ReadableStream<Uint8Array>,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  extra: RequestInit = {},
): Promise<Response> => fetch(`${base}/api/x402/quote`, { method: 'POST', headers, body, ...extra })

describe('HTTP over a socket', () => {
  it('quotes, with the request id and CORS headers on the response', async () => {
    const response = await post(JSON.stringify(quoteBody()), { 'content-type': 'application/json', 'x-request-id': 'agent-42' })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe('agent-42')
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-expose-headers')).toContain('X-PAYMENT-RESPONSE')
    expect(((await response.json()) as { toAmount: string }).toAmount).toBe('995')
  })

  it('answers 413 from the declared Content-Length, with the request id in body and header', async () => {
    const response = await post('x'.repeat(MAX_BODY_BYTES + 1))
    expect(response.status).toBe(413)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    const body = (await response.json()) as { code: string; requestId: string }
    expect(body.code).toBe('payload_too_large')
    expect(body.requestId).toBe(response.headers.get('x-request-id'))
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
  })

  it('reads Content-Type from the socket request: text/plain is 415', async () => {
    const response = await post(JSON.stringify(quoteBody()), { 'content-type': 'text/plain' })
    expect(response.status).toBe(415)
    expect(((await response.json()) as { received: string }).received).toBe('text/plain')
  })

  it('answers a CORS preflight', async () => {
    const response = await fetch(`${base}/api/x402/quote`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-payment',
      },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-allow-methods')).toContain('POST')
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type, x-payment')
  })
  it('is paid by x402-fetch over the socket: 402, then 200 with X-PAYMENT-RESPONSE readable through CORS', async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const seen: number[] = []
    const recordingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      seen.push(response.status)
      return response
    }
    const pay = wrapFetchWithPayment(recordingFetch, payer, 20_000n)
    const response = await pay(`${base}/api/x402/swap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(quoteBody({ fromAddress: payer.address })),
    })
    expect(seen).toEqual([402, 200])
    expect(response.status).toBe(200)
    // Set on Node's response before the handler ran, and kept beside the handler's own headers.
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('access-control-expose-headers')).toContain('X-PAYMENT-RESPONSE')
    const receipt = decodeXPaymentResponse(response.headers.get('x-payment-response') ?? '')
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: payer.address })
    const swap = (await response.json()) as { swapEaziRef: string; transactionRequest: { from: string } }
    expect(swap.transactionRequest.from).toBe(payer.address)
    expect((await store.getSwap(swap.swapEaziRef))?.status).toBe('built')
  })

  // Last: the server answers before the upload ends and closes that connection, which the client's pool may reuse.
  it('answers 413 to a chunked body with no Content-Length once it passes the limit', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 1024 * 1024) return controller.close()
        sent += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const response = await post(stream, { 'content-type': 'application/json' }, { duplex: 'half' } as RequestInit)
    expect(response.status).toBe(413)
    expect(((await response.json()) as { code: string }).code).toBe('payload_too_large')
  })
})
