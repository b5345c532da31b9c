import { Challenge } from 'mppx'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTempoCharge } from '../../src/payments/mpp/createTempoCharge.ts'
import { PATH_USD } from '../../src/payments/mpp/tempoConstants.ts'
import { externalSettler } from '../../src/payments/x402/collectExternally.ts'
import { attributionMemo, pushCredential, sendTransfers, tempoClient } from '../payments/mppPayer.ts'
import { encodeHeader, signPayment } from '../payments/signPayment.ts'
import { startTempoRpcStandIn, type TempoRpcStandIn } from '../payments/tempoRpcStandIn.ts'
import { get, lazyMemoryStore, PAY_TO, PUBLIC_URL, postJson, quoteBody, type TestApp, testApp } from './testApp.ts'

// Issue 16 item 10: CORS exposes exactly the headers the service sends, so a browser agent can read every one of
// them (the payment challenges and receipts above all) and the list names nothing that is never sent.

const CHAIN_ID = 4217
const REALM = 'swapeazi.test'
const TEMPO_PAY_TO = '0x3333333333333333333333333333333333333333'
const payer = privateKeyToAccount(generatePrivateKey())
const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
const nowSec = (): number => Math.floor(Date.now() / 1000)

/**
 * Sent, but not for scripts to read, so not exposed: the CORS-safelisted response headers (a script reads them
 * anyway), CORS's own, the connection's, and the browser's own instructions.
 */
const NOT_EXPOSED = new Set([
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'vary',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'x-content-type-options',
])

const store = lazyMemoryStore()
let rpc: TempoRpcStandIn
let app: TestApp
/** Every settlement is broadcast without a receipt: settlement_pending. */
let pendingApp: TestApp
/** Every request over its limit. */
let limited: TestApp

beforeAll(async () => {
  rpc = await startTempoRpcStandIn({ chainId: CHAIN_ID, token: PATH_USD })
  rpc.fund(payer.address, 10_000_000n)
  const mpp = createTempoCharge({
    rpcUrl: rpc.url,
    chainId: CHAIN_ID,
    realm: REALM,
    secretKey: 'exposed-headers-secret-exposed-headers!',
    recipient: TEMPO_PAY_TO,
    amount: '0.02',
    description: 'SwapEazi swap build',
  })
  app = testApp({ clock: Date.now, store, mpp })
  limited = testApp({ mpp, rateLimits: { anonymous: 0, free: 0, pro: 0, holdRefusalsMs: 0 } })
  pendingApp = testApp({
    clock: Date.now,
    store,
    mpp,
    settler: externalSettler('onchain', {
      check: async () => ({ ok: true }),
      settle: async () => ({
        ok: false,
        reason: 'settlement_failed',
        isAmbiguous: true,
        transaction: `0x${'ab'.repeat(32)}`,
        message: 'The settlement transaction was broadcast but not confirmed in time; its outcome is being reconciled.',
      }),
    }),
  })
})
afterAll(async () => {
  await rpc?.close()
  await store.sql.close()
})

/** One request of each kind that sends a header of its own. */
async function everyKindOfAnswer(): Promise<Response[]> {
  const v1 = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
  const v2 = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec(), validAfter: 0n })
  const accepted = {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '20000',
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  }
  const paymentSignature = encodeHeader({
    x402Version: 2,
    resource: { url: `${PUBLIC_URL}/api/x402/swap` },
    accepted,
    payload: v2.payload['payload'],
  })
  const mppUnpaid = await postJson(app, '/api/mpp/swap', body)
  const memo = attributionMemo(REALM, Challenge.fromResponse(mppUnpaid).id)
  const hash = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [{ to: TEMPO_PAY_TO, amountAtomic: 20_000n, memo }])
  const pending = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
  return [
    await get(app, '/api/v1/health'),
    await postJson(app, '/api/x402/quote', body),
    await postJson(app, '/api/v1/quote', body),
    await postJson(app, '/api/x402/swap', body),
    await postJson(app, '/api/x402/swap', body, { 'x-payment': v1.header }),
    await postJson(app, '/api/x402/swap', body, { 'payment-signature': paymentSignature }),
    await postJson(pendingApp, '/api/x402/swap', body, { 'x-payment': pending.header }),
    mppUnpaid,
    await postJson(app, '/api/mpp/swap', body, { authorization: pushCredential(mppUnpaid, hash, payer.address, CHAIN_ID) }),
    await get(limited, '/api/v1/health'),
    await get(app, '/api/x402/quote'),
    await get(app, '/nowhere'),
  ]
}

describe('Access-Control-Expose-Headers', () => {
  it('names exactly the headers the service sends for scripts to read', async () => {
    const answers = await everyKindOfAnswer()
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 402, 200, 200, 402, 402, 200, 429, 405, 404])
    const sent = new Set<string>()
    for (const answer of answers) for (const [name] of answer.headers) if (!NOT_EXPOSED.has(name)) sent.add(name)

    expect(await (await get(app, '/api/v1/health')).json()).toMatchObject({
      payments: { mpp: { available: true, chainId: CHAIN_ID, recipient: TEMPO_PAY_TO } },
    })
    const exposedLists = new Set(answers.map((answer) => answer.headers.get('access-control-expose-headers')))
    expect(exposedLists.size).toBe(1)
    const [list] = exposedLists
    const exposed = (list ?? '').split(',').map((name) => name.trim().toLowerCase())
    expect(new Set(exposed).size).toBe(exposed.length)
    expect([...exposed].sort()).toEqual([...sent].sort())
  })

  it('leaves out the MPP rail’s headers where it is off, since they are then never sent', async () => {
    const withoutMpp = testApp()
    const unpaid = await postJson(withoutMpp, '/api/mpp/swap', body)
    expect(unpaid.status).toBe(402)
    expect(unpaid.headers.get('www-authenticate')).toBeNull()
    const exposed = (unpaid.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(', ')
    expect(exposed).toContain('payment-required')
    expect(exposed).not.toContain('www-authenticate')
    expect(exposed).not.toContain('payment-receipt')
  })
})
