import { Challenge, Credential, Receipt } from 'mppx'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTempoCharge, TempoRpcUnavailableError } from '../../src/payments/mpp/createTempoCharge.ts'
import { PATH_USD } from '../../src/payments/mpp/tempoConstants.ts'
import { attributionMemo, mppClient, pushCredential, sendTransfers, tempoClient } from './mppPayer.ts'
import { startTempoRpcStandIn, type TempoRpcStandIn } from './tempoRpcStandIn.ts'

const CHAIN_ID = 4217
const REALM = 'swapeazi.test'
const RECIPIENT = '0x3333333333333333333333333333333333333333'
const payer = privateKeyToAccount(generatePrivateKey())

let rpc: TempoRpcStandIn
let charge: ReturnType<typeof createTempoCharge>
beforeAll(async () => {
  rpc = await startTempoRpcStandIn({ chainId: CHAIN_ID, token: PATH_USD })
  rpc.fund(payer.address, 1_000_000n)
  charge = createTempoCharge({
    rpcUrl: rpc.url,
    chainId: CHAIN_ID,
    realm: REALM,
    secretKey: 'mpp-test-secret-mpp-test-secret-mpp!',
    recipient: RECIPIENT,
    amount: '0.02',
    description: 'test swap build',
  })
})
afterAll(() => rpc.close())

/** A 402 carrying a fresh challenge, as the route answers it. */
async function challenged(): Promise<Response> {
  return new Response('{}', { status: 402, headers: { 'www-authenticate': await charge.challengeHeader() } })
}

describe('the tempo charge (mppx 0.11, push mode)', () => {
  it('issues a challenge for 20000 atomic pathUSD to our recipient on the pinned realm, without calling the RPC', async () => {
    const before = rpc.calls.length
    const challenge = Challenge.fromResponse(await challenged())
    expect(rpc.calls.length).toBe(before)
    expect(challenge).toMatchObject({
      realm: REALM,
      method: 'tempo',
      intent: 'charge',
      request: {
        amount: '20000',
        currency: PATH_USD,
        recipient: RECIPIENT,
        methodDetails: { chainId: CHAIN_ID, supportedModes: ['push'] },
      },
    })
    expect(Date.parse(challenge.expires ?? '')).toBeGreaterThan(Date.now())
  })

  it("accepts what mppx's own client pays: the transfer is on the chain, the credential names its hash and payer", async () => {
    let verified: Awaited<ReturnType<typeof charge.verify>> | undefined
    const client = mppClient(payer, rpc.url, CHAIN_ID, async (_input, init) => {
      const authorization = new Headers(init?.headers).get('authorization')
      if (authorization === null) return challenged()
      verified = await charge.verify(authorization)
      return Response.json({ ok: verified.ok })
    })
    const balance = rpc.balanceOf(payer.address)
    const response = await client.fetch('http://swapeazi.test/api/mpp/swap', { method: 'POST', body: '{}' })
    expect(response.status).toBe(200)
    expect(rpc.balanceOf(payer.address)).toBe(balance - 20_000n)
    expect(rpc.balanceOf(RECIPIENT)).toBeGreaterThanOrEqual(20_000n)
    if (verified?.ok !== true) throw new Error(`not verified: ${JSON.stringify(verified)}`)
    expect(verified.payment).toMatchObject({
      payer: payer.address.toLowerCase(),
      amountAtomic: 20_000n,
      recipient: RECIPIENT,
      chainId: CHAIN_ID,
    })
    expect(verified.payment.hash).toMatch(/^0x[0-9a-f]{64}$/)
    const receipt = Receipt.deserialize(charge.receiptHeader(verified.payment, new Date('2026-11-20T12:00:00Z')))
    expect(receipt).toEqual({ method: 'tempo', reference: verified.payment.hash, status: 'success', timestamp: '2026-11-20T12:00:00.000Z' })
  })

  it('refuses a transfer of the wrong amount, to the wrong recipient, or in another token, saying which', async () => {
    const client = tempoClient(rpc.url, CHAIN_ID)
    const cases = [
      { transfer: { to: RECIPIENT, amountAtomic: 19_999n }, reason: 'amount_mismatch', says: 'was 19999 atomic pathUSD' },
      {
        transfer: { to: '0x4444444444444444444444444444444444444444', amountAtomic: 20_000n },
        reason: 'recipient_mismatch',
        says: '0x4444',
      },
    ] as const
    for (const { transfer, reason, says } of cases) {
      const response = await challenged()
      const memo = attributionMemo(REALM, Challenge.fromResponse(response).id)
      const hash = await sendTransfers(client, payer, [{ ...transfer, memo }])
      const refused = await charge.verify(pushCredential(response, hash, payer.address, CHAIN_ID))
      expect(refused).toMatchObject({ ok: false, reason })
      if (refused.ok) throw new Error('accepted')
      expect(refused.message).toContain(says)
    }
  })

  it("refuses a transfer whose memo is not bound to this challenge: another challenge's payment, or no memo", async () => {
    const client = tempoClient(rpc.url, CHAIN_ID)
    const first = await challenged()
    const paidForFirst = await sendTransfers(client, payer, [
      { to: RECIPIENT, amountAtomic: 20_000n, memo: attributionMemo(REALM, Challenge.fromResponse(first).id) },
    ])
    const second = await challenged()
    expect(await charge.verify(pushCredential(second, paidForFirst, payer.address, CHAIN_ID))).toMatchObject({
      ok: false,
      reason: 'memo_mismatch',
    })
    const noMemo = await sendTransfers(client, payer, [{ to: RECIPIENT, amountAtomic: 20_000n }])
    expect(await charge.verify(pushCredential(second, noMemo, payer.address, CHAIN_ID))).toMatchObject({
      ok: false,
      reason: 'memo_mismatch',
    })
    // The first challenge's own payment is fine.
    expect(await charge.verify(pushCredential(first, paidForFirst, payer.address, CHAIN_ID))).toMatchObject({ ok: true })
  })

  it('refuses a forged or altered challenge, an unknown hash, a pull credential and an unreadable credential', async () => {
    const response = await challenged()
    const challenge = Challenge.fromResponse(response)
    const hash = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [
      { to: RECIPIENT, amountAtomic: 20_000n, memo: attributionMemo(REALM, challenge.id) },
    ])
    const cheaper = Credential.serialize(
      Credential.from({ challenge: { ...challenge, request: { ...challenge.request, amount: '1' } }, payload: { type: 'hash', hash } }),
    )
    expect(await charge.verify(cheaper)).toMatchObject({ ok: false, reason: 'invalid_challenge' })
    // A retry is looked up by hash only for a credential whose challenge is ours as issued.
    expect(charge.identify(cheaper)).toBeUndefined()
    expect(charge.identify(pushCredential(response, hash, payer.address, CHAIN_ID))).toEqual({ hash, challengeId: challenge.id })
    const unknown = `0x${'ab'.repeat(32)}` as const
    expect(await charge.verify(pushCredential(response, unknown, payer.address, CHAIN_ID))).toMatchObject({
      ok: false,
      reason: 'payment_not_found',
    })
    const pull = Credential.serialize(Credential.from({ challenge, payload: { type: 'transaction', signature: '0x76aa' } }))
    expect(await charge.verify(pull)).toMatchObject({ ok: false, reason: 'unsupported_mode' })
    expect(await charge.verify('Payment not-base64-json')).toMatchObject({ ok: false, reason: 'invalid_payment' })
    // A malformed hash is refused before the RPC is asked (a node would answer it with an error, not a receipt).
    const asked = rpc.calls.length
    const short = Credential.serialize(Credential.from({ challenge, payload: { type: 'hash', hash: '0x1234' } }))
    expect(await charge.verify(short)).toMatchObject({ ok: false, reason: 'invalid_payment' })
    expect(rpc.calls.length).toBe(asked)
  })

  it('throws TempoRpcUnavailableError, not a refusal, when the RPC cannot be asked', async () => {
    const response = await challenged()
    const hash = await sendTransfers(tempoClient(rpc.url, CHAIN_ID), payer, [
      { to: RECIPIENT, amountAtomic: 20_000n, memo: attributionMemo(REALM, Challenge.fromResponse(response).id) },
    ])
    rpc.setDown(true)
    try {
      await expect(charge.verify(pushCredential(response, hash, payer.address, CHAIN_ID))).rejects.toBeInstanceOf(TempoRpcUnavailableError)
    } finally {
      rpc.setDown(false)
    }
    expect(await charge.verify(pushCredential(response, hash, payer.address, CHAIN_ID))).toMatchObject({ ok: true })
  })
})
