import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_ROUTER_ADDRESS } from '../../src/contracts/deployRouter.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { signPayment } from '../payments/signPayment.ts'
import { lazyMemoryStore, PAY_TO, postJson, quoteBody, readJson, ROUTER_ADDRESS, testApp } from './testApp.ts'

// Issue 15 item 5: payments whose signature fails count toward the sender's IP, so a flood of them is refused before
// any work (no screening, routing or signature recovery) once the IP's anonymous allowance is spent.

const store = lazyMemoryStore()
afterAll(() => store.sql.close())

const payer = privateKeyToAccount(generatePrivateKey())
const impostor = privateKeyToAccount(generatePrivateKey())
const nowSec = (): number => Math.floor(Date.now() / 1000)
const body = quoteBody({ fromAddress: payer.address.toLowerCase() })

/** A payment in `payer`'s name signed by someone else: its signature does not recover to `from`. */
async function forgedPayment(): Promise<string> {
  const signed = await signPayment(impostor, { payTo: PAY_TO, nowSec: nowSec() })
  const payload = signed.payload as { payload: { authorization: { from: string } } }
  payload.payload.authorization.from = payer.address
  return Buffer.from(JSON.stringify(payload)).toString('base64')
}

describe('bad payment signatures on POST /api/x402/swap', () => {
  it('are refused 402 until the IP has sent its anonymous limit of them, then 429 before any work', async () => {
    const app = testApp({ clock: Date.now, store, rateLimits: { anonymous: 2, free: 60, pro: 600, holdRefusalsMs: 0 } })
    const from = (ip: string) => ({ 'x-forwarded-for': ip })
    for (let k = 0; k < 2; k++) {
      const refused = await postJson(app, '/api/x402/swap', body, { ...from('198.51.100.7'), 'x-payment': await forgedPayment() })
      expect(refused.status).toBe(402)
      expect(await readJson(refused)).toMatchObject({ error: 'invalid_signature' })
    }
    const limited = await postJson(app, '/api/x402/swap', body, { ...from('198.51.100.7'), 'x-payment': await forgedPayment() })
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).not.toBeNull()
    expect(limited.headers.get('ratelimit-policy')).toBe('"anonymous";q=2;w=60')
    expect(await readJson(limited)).toMatchObject({ code: 'rate_limited', policy: 'anonymous' })
    // Refused before the body is even read: an invalid body gets the same 429, not a 400.
    expect((await postJson(app, '/api/x402/swap', { nonsense: true }, from('198.51.100.7'))).status).toBe(429)
    // Another IP still gets its challenge, and a refusal never counts as a paid call.
    expect((await postJson(app, '/api/x402/swap', body, from('198.51.100.8'))).status).toBe(402)
    const [row] = await store.sql.query<{ n: number }>('select count(*)::int as n from x402_payments')
    expect(row?.n).toBe(0)
  })

  it('a payment replayed for another request is counted too (its authorization is public once settled), its own redelivery is not', async () => {
    const app = testApp({ clock: Date.now, store, rateLimits: { anonymous: 2, free: 60, pro: 600, holdRefusalsMs: 0 } })
    const from = { 'x-forwarded-for': '198.51.100.21' }
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
    const paid = await postJson(app, '/api/x402/swap', body, { ...from, 'x-payment': header })
    expect(paid.status).toBe(200)
    // The same request with the same payment (a dropped connection) gets the same swap, as often as it asks.
    for (let k = 0; k < 3; k++) expect((await postJson(app, '/api/x402/swap', body, { ...from, 'x-payment': header })).status).toBe(200)
    const otherBody = quoteBody({ fromAddress: payer.address.toLowerCase(), fromAmount: '2000' })
    const statuses: number[] = []
    for (let k = 0; k < 3; k++) statuses.push((await postJson(app, '/api/x402/swap', otherBody, { ...from, 'x-payment': header })).status)
    expect(statuses).toEqual([402, 402, 429])
  })

  it('a 402 asking for payment (no X-PAYMENT yet) is not a refusal', async () => {
    const app = testApp({ clock: Date.now, store, rateLimits: { anonymous: 1, free: 60, pro: 600, holdRefusalsMs: 0 } })
    const statuses: number[] = []
    for (let k = 0; k < 4; k++) statuses.push((await postJson(app, '/api/x402/swap', body, { 'x-forwarded-for': '198.51.100.9' })).status)
    expect(statuses).toEqual([402, 402, 402, 402])
  })

  it('undecodable payments and MPP credentials for a swap refused anyway (no router on its chain, or no route) are counted all the same', async () => {
    // Routers of the operator's own everywhere but Polygon, payments real (a ledger to the operator's wallet).
    const routerOn = (chain: ChainCode) => routerDeployment(chain === 'POL' ? DEFAULT_ROUTER_ADDRESS : ROUTER_ADDRESS)
    const app = testApp({ clock: Date.now, store, routerOn, rateLimits: { anonymous: 2, free: 60, pro: 600, holdRefusalsMs: 0 } })
    const from = { 'x-forwarded-for': '198.51.100.10', 'x-payment': 'not-base64-json' }
    const toPolygonEure = quoteBody({ fromChain: 'BAS', toChain: 'POL', toToken: 'EURe', fromAddress: payer.address.toLowerCase() })
    const unsold = await postJson(app, '/api/x402/swap', toPolygonEure, from)
    expect(unsold.status).toBe(422)
    expect(await readJson(unsold)).toMatchObject({ code: 'router_not_deployed' })
    const unroutable = await postJson(app, '/api/x402/swap', { ...body, toToken: 'NOPE' }, from)
    expect(unroutable.status).toBe(422)
    expect(await readJson(unroutable)).toMatchObject({ code: 'unsupported_token' })
    const limited = await postJson(app, '/api/x402/swap', body, from)
    expect(limited.status).toBe(429)
    expect(await readJson(limited)).toMatchObject({ code: 'rate_limited', policy: 'anonymous' })

    // An MPP credential, on a path that takes none, for the same swaps: counted the same way.
    const mpp = { 'x-forwarded-for': '198.51.100.11', authorization: 'Payment junk' }
    expect(await readJson(await postJson(app, '/api/x402/swap', toPolygonEure, mpp))).toMatchObject({ code: 'router_not_deployed' })
    expect(await readJson(await postJson(app, '/api/x402/swap', body, mpp))).toMatchObject({ error: 'unsupported_scheme' })
    expect((await postJson(app, '/api/x402/swap', body, mpp)).status).toBe(429)
    // A request with no payment that is refused is no refusal of a credential: it is never limited here.
    const none = { 'x-forwarded-for': '198.51.100.12' }
    for (let k = 0; k < 4; k++) expect((await postJson(app, '/api/x402/swap', toPolygonEure, none)).status).toBe(422)
  })

  it('requests with a payment refused before it is read (a body that is not JSON, not JSON at all, two payments) are counted too', async () => {
    const app = testApp({ clock: Date.now, store, rateLimits: { anonymous: 3, free: 60, pro: 600, holdRefusalsMs: 0 } })
    const send = (ip: string, headers: Record<string, string>, text: string) =>
      app.request('/api/x402/swap', { method: 'POST', headers: { 'x-forwarded-for': ip, ...headers }, body: text })
    const json = { 'content-type': 'application/json', 'x-payment': 'bm90LWEtcGF5bWVudA==' }
    const cases: [string, Record<string, string>, string, number, string][] = [
      ['198.51.100.20', json, '{', 400, 'invalid_request'],
      ['198.51.100.21', { ...json, 'content-type': 'text/plain' }, JSON.stringify(body), 415, 'unsupported_media_type'],
      ['198.51.100.22', { ...json, 'payment-signature': 'e30=' }, JSON.stringify(body), 400, 'conflicting_payment'],
      ['198.51.100.23', json, JSON.stringify({ ...body, fromAmount: '1e3' }), 400, 'invalid_request'],
    ]
    for (const [ip, headers, text, status, code] of cases) {
      for (let k = 0; k < 3; k++) {
        const refused = await send(ip, headers, text)
        expect(refused.status, `${code} ${k}`).toBe(status)
        expect(await readJson(refused)).toMatchObject({ code })
      }
      const limited = await send(ip, headers, text)
      expect(limited.status, code).toBe(429)
      expect(await readJson(limited)).toMatchObject({ code: 'rate_limited', policy: 'anonymous' })
    }
    // The same malformed bodies without a payment are the client's own mistakes, answered each time, never limited.
    for (let k = 0; k < 5; k++) expect((await send('198.51.100.24', { 'content-type': 'application/json' }, '{')).status).toBe(400)
  })
})
