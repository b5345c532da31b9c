import { Challenge, Credential, Receipt } from 'mppx'
import type { Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { createTempoCharge } from '../../src/payments/mpp/createTempoCharge.ts'
import { PATH_USD } from '../../src/payments/mpp/tempoConstants.ts'
import { PaymentRequiredV2, X402Challenge } from '../../src/schemas/x402.ts'
import type { Store } from '../../src/store/createStore.ts'
import { attributionMemo, mppClient, pushCredential, sendTransfers, tempoClient } from '../payments/mppPayer.ts'
import { listenOnLoopback } from '../support/listenOnLoopback.ts'
import { agentTextOffences } from '../support/agentText.ts'
import { startTempoRpcStandIn, type TempoRpcStandIn } from '../payments/tempoRpcStandIn.ts'
import { get, lazyMemoryStore, MANIFEST_DIR, PUBLIC_URL, postJson, quoteBody, readJson, type TestApp, testApp } from './testApp.ts'

const SWAP = '/api/mpp/swap'
const SANCTIONED = loadSanctionsList(`${MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`).addresses[0] ?? ''
const CHAIN_ID = 4217
const REALM = 'swapeazi.test'
const TEMPO_PAY_TO = '0x3333333333333333333333333333333333333333'
const payer = privateKeyToAccount(generatePrivateKey())
const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
const otherBody = quoteBody({ fromAddress: payer.address.toLowerCase(), fromAmount: '2000' })

const store = lazyMemoryStore()
let rpc: TempoRpcStandIn
let app: TestApp
/** A second app on the same store: another replica. */
let replica: TestApp

function mppRail(rpcUrl: string) {
  return createTempoCharge({
    rpcUrl,
    chainId: CHAIN_ID,
    realm: REALM,
    secretKey: 'mpp-http-secret-mpp-http-secret-mpp!',
    recipient: TEMPO_PAY_TO,
    amount: '0.02',
    description: 'SwapEazi swap build',
  })
}

beforeAll(async () => {
  rpc = await startTempoRpcStandIn({ chainId: CHAIN_ID, token: PATH_USD })
  rpc.fund(payer.address, 10_000_000n)
  app = testApp({ clock: Date.now, store, mpp: mppRail(rpc.url) })
  replica = testApp({ clock: Date.now, store, mpp: mppRail(rpc.url) })
})
afterAll(async () => {
  await rpc.close()
  await store.sql.close()
})

async function count(table: 'mpp_payments' | 'swaps' | 'x402_payments'): Promise<number> {
  const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`)
  return row?.n ?? -1
}

/** Pays a fresh challenge of `SWAP` for `request` by hand: the 402, then a bound transfer; returns the credential. */
async function payChallenge(request: Record<string, unknown> = body, amountAtomic = 20_000n, to: Hex = TEMPO_PAY_TO) {
  const unpaid = await postJson(app, SWAP, request)
  expect(unpaid.status).toBe(402)
  const memo = attributionMemo(REALM, Challenge.fromResponse(unpaid).id)
  const hash = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [{ to, amountAtomic, memo }])
  return { hash, authorization: pushCredential(unpaid, hash, payer.address, CHAIN_ID) }
}

describe('MPP on /api/mpp/swap (mppx 0.11 tempo charge, push mode)', () => {
  it('answers 402 with the unchanged x402 body, PAYMENT-REQUIRED and a WWW-Authenticate: Payment for 0.02 pathUSD', async () => {
    const response = await postJson(app, SWAP, body)
    expect(response.status).toBe(402)
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge).toMatchObject({
      x402Version: 1,
      accepts: [{ network: 'base', maxAmountRequired: '20000', resource: `${PUBLIC_URL}${SWAP}` }],
    })
    expect(challenge.detail).toContain('MPP')
    expect(
      PaymentRequiredV2.parse(JSON.parse(Buffer.from(response.headers.get('payment-required') ?? '', 'base64').toString())).accepts,
    ).toHaveLength(1)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const mpp = Challenge.fromResponse(response)
    expect(mpp).toMatchObject({
      realm: REALM,
      method: 'tempo',
      intent: 'charge',
      request: {
        amount: '20000',
        currency: PATH_USD,
        recipient: TEMPO_PAY_TO,
        methodDetails: { chainId: CHAIN_ID, supportedModes: ['push'] },
      },
    })
    expect(response.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate')
    // The x402 path does not offer MPP.
    expect((await postJson(app, '/api/x402/swap', body)).headers.get('www-authenticate')).toBeNull()
  })

  it("is paid by mppx's own client: it sends the transfer, then the hash; 200 with Payment-Receipt, recorded as mpp", async () => {
    const sent: Headers[] = []
    const client = mppClient(payer, rpc.url, CHAIN_ID, async (input, init) => {
      const request = new Request(input, init)
      sent.push(request.headers)
      return app.request(request)
    })
    const before = { balance: rpc.balanceOf(payer.address), payments: await count('mpp_payments'), x402: await count('x402_payments') }
    const response = await client.fetch(`${PUBLIC_URL}${SWAP}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status).toBe(200)
    expect(sent).toHaveLength(2)
    expect(sent[1]?.get('authorization')).toMatch(/^Payment /)
    expect(rpc.balanceOf(payer.address)).toBe(before.balance - 20_000n)
    const result = await readJson(response)
    const receipt = Receipt.fromResponse(response)
    expect(receipt).toMatchObject({ method: 'tempo', status: 'success' })
    expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/)
    expect(response.headers.get('access-control-expose-headers')).toContain('Payment-Receipt')
    const swap = await store.getSwap(String(result['swapEaziRef']))
    expect(swap).toMatchObject({ channel: 'mpp', payment: null })
    const recorded = await store.mpp.getPayment(receipt.reference)
    expect(recorded).toMatchObject({
      swapRef: result['swapEaziRef'],
      payer: payer.address.toLowerCase(),
      amount: 20_000n,
      recipient: TEMPO_PAY_TO,
    })
    expect(await count('mpp_payments')).toBe(before.payments + 1)
    expect(await count('x402_payments')).toBe(before.x402)
  })

  it("is paid by mppx's client over a real socket too (Node's request headers: WWW-Authenticate out, Authorization in)", async () => {
    const server = await listenOnLoopback(app.fetch)
    try {
      const client = mppClient(payer, rpc.url, CHAIN_ID, fetch)
      const response = await client.fetch(`${server.base}${SWAP}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      expect(response.status).toBe(200)
      const receipt = Receipt.fromResponse(response)
      expect((await store.mpp.getPayment(receipt.reference))?.swapRef).toBe((await readJson(response))['swapEaziRef'])
    } finally {
      await server.close()
    }
  })

  it('refuses the same hash for another request, naming the swap it bought, and gives the same swap to the same request', async () => {
    const { hash, authorization } = await payChallenge()
    const first = await postJson(app, SWAP, body, { authorization })
    expect(first.status).toBe(200)
    const bought = await readJson(first)
    const payments = await count('mpp_payments')

    const other = await postJson(app, SWAP, otherBody, { authorization })
    expect(other.status).toBe(402)
    const refused = X402Challenge.parse(await readJson(other))
    expect(refused.error).toBe('payment_already_used')
    expect(refused.detail).toContain(String(bought['swapEaziRef']))
    expect(Challenge.fromResponse(other).method).toBe('tempo')

    // A connection dropped after paying: the same credential and request get the same swap, charged once.
    const again = await postJson(replica, SWAP, body, { authorization })
    expect(again.status).toBe(200)
    expect(await readJson(again)).toEqual(bought)
    expect(Receipt.fromResponse(again).reference).toBe(hash)
    expect(await count('mpp_payments')).toBe(payments)
  })

  it('counts a payment replayed for another request toward its source (402, 402, then 429), never its own redelivery', async () => {
    const limited = testApp({
      clock: Date.now,
      store,
      mpp: mppRail(rpc.url),
      rateLimits: { anonymous: 2, free: 60, pro: 600, holdRefusalsMs: 0 },
    })
    const from = { 'x-forwarded-for': '198.51.100.31' }
    const { authorization } = await payChallenge()
    for (let k = 0; k < 3; k++) expect((await postJson(limited, SWAP, body, { ...from, authorization })).status).toBe(200)
    const statuses: number[] = []
    for (let k = 0; k < 3; k++) statuses.push((await postJson(limited, SWAP, otherBody, { ...from, authorization })).status)
    expect(statuses).toEqual([402, 402, 429])
  })

  it('takes one payment once across replicas: the same credential for two requests at once buys one swap', async () => {
    const { authorization } = await payChallenge()
    const swaps = await count('swaps')
    const answers = await Promise.all([postJson(app, SWAP, body, { authorization }), postJson(replica, SWAP, otherBody, { authorization })])
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 402])
    const refused = answers.find((answer) => answer.status === 402)
    expect((await readJson(refused ?? new Response('{}')))['error']).toBe('payment_already_used')
    expect(await count('swaps')).toBe(swaps + 1)
  })

  it('refuses a wrong amount, recipient or memo with a clear reason and a fresh challenge, recording nothing', async () => {
    const payments = await count('mpp_payments')
    const cases = [
      { paid: await payChallenge(body, 10_000n), error: 'amount_mismatch', says: 'exactly 20000' },
      {
        paid: await payChallenge(body, 20_000n, '0x4444444444444444444444444444444444444444'),
        error: 'recipient_mismatch',
        says: '0x4444',
      },
    ]
    for (const { paid, error, says } of cases) {
      const response = await postJson(app, SWAP, body, { authorization: paid.authorization })
      expect(response.status).toBe(402)
      const challenge = X402Challenge.parse(await readJson(response))
      expect(challenge.error).toBe(error)
      expect(challenge.detail).toContain(says)
      expect(challenge.detail).toContain('Nothing was claimed')
      expect(agentTextOffences(challenge.detail ?? '')).toEqual([])
      expect(Challenge.fromResponse(response).method).toBe('tempo')
    }
    // A transfer bound to one challenge, presented for another.
    const paid = await payChallenge()
    const unpaid = await postJson(app, SWAP, body)
    const stolen = pushCredential(unpaid, paid.hash, payer.address, CHAIN_ID)
    const response = await postJson(app, SWAP, body, { authorization: stolen })
    expect(response.status).toBe(402)
    expect(X402Challenge.parse(await readJson(response)).error).toBe('memo_mismatch')
    expect(await count('mpp_payments')).toBe(payments)
  })

  it('answers an unreadable or bare credential 402 invalid_payment with a fresh challenge, never 5xx', async () => {
    for (const authorization of [
      'Payment',
      'Payment !!not-base64url!!',
      `Payment ${Buffer.from('{"challenge":{}}').toString('base64url')}`,
    ]) {
      const response = await postJson(app, SWAP, body, { authorization })
      expect(response.status).toBe(402)
      expect(X402Challenge.parse(await readJson(response)).error).toBe('invalid_payment')
      expect(Challenge.fromResponse(response).method).toBe('tempo')
    }
  })

  it("refuses a paid transfer presented under another payer's source as payer_mismatch, not amount_mismatch", async () => {
    const unpaid = await postJson(app, SWAP, body)
    const memo = attributionMemo(REALM, Challenge.fromResponse(unpaid).id)
    const hash = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [{ to: TEMPO_PAY_TO, amountAtomic: 20_000n, memo }])
    const stranger = '0x9999999999999999999999999999999999999999'
    const response = await postJson(app, SWAP, body, { authorization: pushCredential(unpaid, hash, stranger, CHAIN_ID) })
    expect(response.status).toBe(402)
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge.error).toBe('payer_mismatch')
    expect(challenge.detail).toContain(`was sent by ${payer.address}, not by the credential's source ${stranger}`)
    // The transfer is still the payer's to use: with its own source it pays.
    expect((await postJson(app, SWAP, body, { authorization: pushCredential(unpaid, hash, payer.address, CHAIN_ID) })).status).toBe(200)
  })

  it('answers a credential of a real challenge whose payload has the wrong shape 402, never 503: the RPC is not asked', async () => {
    const unpaid = await postJson(app, SWAP, body)
    const challenge = Challenge.fromResponse(unpaid)
    const source = `did:pkh:eip155:${CHAIN_ID}:${payer.address}`
    // A well-formed credential of this challenge, its payload then replaced (mppx's own client would not send these).
    const valid = Credential.serialize(Credential.from({ challenge, payload: { type: 'hash', hash: `0x${'0'.repeat(64)}` }, source }))
    const fields = JSON.parse(Buffer.from(valid.replace(/^Payment /, ''), 'base64url').toString()) as Record<string, unknown>
    const credential = (payload: unknown): string => `Payment ${Buffer.from(JSON.stringify({ ...fields, payload })).toString('base64url')}`
    const asked = rpc.calls.length
    for (const [payload, error] of [
      [null, 'invalid_payment'],
      ['x', 'invalid_payment'],
      [[], 'invalid_payment'],
      [{}, 'invalid_payment'],
      [{ type: 'zzz' }, 'invalid_payment'],
      [{ type: 'hash' }, 'invalid_payment'],
      [{ type: 'transaction', signature: 5 }, 'unsupported_mode'],
    ] as const) {
      const response = await postJson(app, SWAP, body, { authorization: credential(payload) })
      expect(response.status, JSON.stringify(payload)).toBe(402)
      expect(X402Challenge.parse(await readJson(response)).error, JSON.stringify(payload)).toBe(error)
    }
    expect(rpc.calls.length).toBe(asked)
  })

  // Audit of issue 15: a transfer made in time whose redemption our own 503 held past the expiry was kept by the
  // recipient and bought nothing ("Nothing was claimed ... ask for a new one").
  it("buys the swap with a transfer included before its challenge expired, even once it has: our delay is not the payer's", async () => {
    const { authorization, hash } = await payChallenge()
    rpc.setDown(true)
    try {
      expect((await postJson(app, SWAP, body, { authorization })).status).toBe(503)
    } finally {
      rpc.setDown(false)
    }
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6 * 60_000 })
    try {
      const late = await postJson(app, SWAP, body, { authorization })
      expect(late.status).toBe(200)
      expect(await store.mpp.getPayment(hash)).toMatchObject({ hash })
      // Bought once: the same credential for another request is refused as used.
      expect((await postJson(app, SWAP, otherBody, { authorization })).status).toBe(402)
    } finally {
      vi.useRealTimers()
    }
  })

  it('refuses a credential whose challenge expired before its transfer was made, or that was never paid (challenge_expired)', async () => {
    const unpaid = await postJson(app, SWAP, body)
    const memo = attributionMemo(REALM, Challenge.fromResponse(unpaid).id)
    // In time, but bound to another challenge: it pays that one, not this.
    const otherMemo = attributionMemo(REALM, Challenge.fromResponse(await postJson(app, SWAP, body)).id)
    const elsewhere = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [
      { to: TEMPO_PAY_TO, amountAtomic: 20_000n, memo: otherMemo },
    ])
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 6 * 60_000 })
    try {
      const hash = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [{ to: TEMPO_PAY_TO, amountAtomic: 20_000n, memo }])
      for (const authorization of [
        pushCredential(unpaid, elsewhere, payer.address, CHAIN_ID),
        pushCredential(unpaid, hash, payer.address, CHAIN_ID),
        pushCredential(unpaid, `0x${'ab'.repeat(32)}`, payer.address, CHAIN_ID),
      ]) {
        const response = await postJson(app, SWAP, body, { authorization })
        expect(response.status).toBe(402)
        const challenge = X402Challenge.parse(await readJson(response))
        expect(challenge.error).toBe('challenge_expired')
        expect(challenge.detail).toMatch(/no transfer bound to it was included on Tempo before it expired\. Ask for a new one/)
      }
    } finally {
      vi.useRealTimers()
    }
  })

  it('validates, screens and routes before verifying a credential, which then stays usable', async () => {
    const { authorization } = await payChallenge()
    const receiptsAsked = (): number => rpc.calls.filter((method) => method === 'eth_getTransactionReceipt').length
    const asked = receiptsAsked()
    expect((await postJson(app, SWAP, { ...body, fromAmount: 'lots' }, { authorization })).status).toBe(400)
    const screened = await postJson(app, SWAP, quoteBody({ toAddress: SANCTIONED }), { authorization })
    expect(screened.status).toBe(403)
    expect(screened.headers.get('www-authenticate')).toBeNull()
    // The payer has paid already (push mode): the refusal says the transfer is not claimed, never "nothing was charged".
    const screenedDetail = String((await readJson(screened))['detail'])
    expect(screenedDetail).toMatch(
      /Nothing was claimed from your MPP payment \(transfer 0x[0-9a-f]{64}\): if that transfer was made, the same Authorization: Payment buys a swap/,
    )
    expect(screenedDetail).not.toMatch(/nothing was charged/i)
    const unroutable = await postJson(app, SWAP, { ...body, fromAmount: '100000000000' }, { authorization })
    expect(unroutable.status).toBe(422)
    expect(await readJson(unroutable)).toMatchObject({ claimed: false })
    expect(receiptsAsked()).toBe(asked)
    expect((await postJson(app, SWAP, body, { authorization })).status).toBe(200)
  })

  it('claims nothing when the swap cannot be recorded: the same credential pays afterwards', async () => {
    const { authorization } = await payChallenge()
    let failures = 1
    const failingStore: Store = {
      ...store,
      mpp: {
        ...store.mpp,
        recordPaidSwap: (claim, swap) =>
          failures-- > 0 ? Promise.reject(new Error('the store is down')) : store.mpp.recordPaidSwap(claim, swap),
      },
    }
    const flaky = testApp({ clock: Date.now, store: failingStore, mpp: mppRail(rpc.url) })
    const failed = await postJson(flaky, SWAP, body, { authorization })
    expect(failed.status).toBe(500)
    // Review of issue 15: the generic 500 said "nothing was charged", but the payer's transfer is on Tempo already.
    const problem = await readJson<{ code: string; detail: string }>(failed)
    expect(problem.code).toBe('internal_error')
    expect(problem.detail).toMatch(/^Your payment 0x[0-9a-f]{64} is on Tempo, but this service could not record the swap it pays for\./)
    expect(problem.detail).toContain('repeat the same request with the same credential')
    expect(problem.detail).not.toContain('nothing was charged')
    const paid = await postJson(flaky, SWAP, body, { authorization })
    expect(paid.status).toBe(200)
  })

  it('answers 503 payment_unavailable with Retry-After when the Tempo RPC is down, and the credential pays once it is back', async () => {
    const { authorization } = await payChallenge()
    rpc.setDown(true)
    let down: Response
    try {
      down = await postJson(app, SWAP, body, { authorization })
    } finally {
      rpc.setDown(false)
    }
    expect(down.status).toBe(503)
    expect(down.headers.get('retry-after')).toBe('5')
    expect((await readJson(down))['code']).toBe('payment_unavailable')
    expect((await postJson(app, SWAP, body, { authorization })).status).toBe(200)
  })

  it('answers Authorization: Payment on the x402 path 402 unsupported_scheme, pointing at /api/mpp/swap, charging nothing', async () => {
    const { authorization } = await payChallenge()
    const response = await postJson(app, '/api/x402/swap', body, { authorization })
    expect(response.status).toBe(402)
    expect(response.headers.get('www-authenticate')).toBeNull()
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge.error).toBe('unsupported_scheme')
    expect(challenge.detail).toContain('POST /api/mpp/swap')
    // The credential was not touched: it still pays where MPP is offered.
    expect((await postJson(app, SWAP, body, { authorization })).status).toBe(200)
  })

  it('refuses a payment header beside Authorization: Payment (400 conflicting_payment)', async () => {
    const { authorization } = await payChallenge()
    const response = await postJson(app, SWAP, body, { authorization, 'x-payment': 'e30' })
    expect(response.status).toBe(400)
    expect((await readJson(response))['code']).toBe('conflicting_payment')
  })
})

describe('without SWAPEAZI_TEMPO_RPC_URL', () => {
  const off = testApp({ clock: Date.now })

  it('offers no MPP challenge, and the capability manifest says the rail is unavailable', async () => {
    const response = await postJson(off, SWAP, body)
    expect(response.status).toBe(402)
    expect(response.headers.get('www-authenticate')).toBeNull()
    const manifest = await readJson<{ agentPayments: { mpp: Record<string, unknown> } }>(await get(off, '/api/mpp/routes'))
    expect(manifest.agentPayments.mpp).toMatchObject({ available: false })
    expect(String(manifest.agentPayments.mpp['description'])).toMatch(/not available/)
    const on = await readJson<{ agentPayments: { mpp: Record<string, unknown> } }>(await get(app, '/api/mpp/routes'))
    expect(on.agentPayments.mpp).toMatchObject({ available: true })
  })

  it('answers an MPP credential with the 402 and says MPP is not offered here', async () => {
    const response = await postJson(off, SWAP, body, { authorization: 'Payment e30' })
    expect(response.status).toBe(402)
    const challenge = X402Challenge.parse(await readJson(response))
    expect(challenge.error).toBe('unsupported_scheme')
    expect(challenge.detail).toMatch(/MPP is not offered/)
  })
})
