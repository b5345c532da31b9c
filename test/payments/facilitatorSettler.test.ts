import { type Address, type Hash, toHex } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type FacilitatorFetch, facilitatorSettler } from '../../src/payments/x402/facilitatorSettler.ts'
import type { ExternalSettlement, Settler, VerifiedPayment } from '../../src/payments/x402/settlement.ts'
import { ANVIL_MNEMONIC } from '../chain/anvil.ts'
import { type BaseUsdcChain, signedPayment, startBaseUsdc } from '../chain/baseUsdc.ts'
import { closedPort } from '../support/closedPort.ts'
import { type LocalFacilitator, startLocalFacilitator } from './localFacilitator.ts'

const FACILITATOR_ACCOUNT_INDEX = 3

let chain: BaseUsdcChain
let facilitator: LocalFacilitator
let settler: Settler & ExternalSettlement

const payer = (): (typeof chain.anvil.accounts)[number] => chain.anvil.accounts[1]!
const payTo = (): Address => chain.anvil.accounts[2]!.address
const sink = (): Address => chain.anvil.accounts[5]!.address

beforeAll(async () => {
  chain = await startBaseUsdc()
  await chain.mint(payer().address, 1_000_000n)
  const key = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: FACILITATOR_ACCOUNT_INDEX }).getHdKey().privateKey
  if (!key) throw new Error('no facilitator key')
  facilitator = await startLocalFacilitator({ rpcUrl: chain.anvil.rpcUrl, privateKey: toHex(key) })
  settler = facilitatorSettler({ url: facilitator.url })
}, 60_000)

afterAll(async () => {
  await facilitator?.close()
  await chain?.stop()
})

beforeEach(() => {
  facilitator.calls.length = 0
})

/** Forwards to the local facilitator, then replaces its answer to one endpoint (after it has acted on it). */
function answering(endpoint: 'verify' | 'settle', replace: () => Response): FacilitatorFetch {
  return async (url, init) => {
    const real = await fetch(url, init)
    if (!url.endsWith(`/${endpoint}`)) return real
    await real.text()
    return replace()
  }
}

/** A facilitator that never answers, until the settler's own timeout aborts the request. */
const hanging: FacilitatorFetch = (_url, init) =>
  new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)))

describe('facilitatorSettler against x402’s own facilitator on anvil', () => {
  it('verifies, then settles: 20000 moves from payer to payTo in the facilitator’s transaction', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const before = { payer: await chain.balanceOf(payer().address), payTo: await chain.balanceOf(payTo()) }

    expect(settler.mode).toBe('facilitator')
    expect(await settler.check(payment)).toEqual({ ok: true })
    const outcome = await settler.settle(payment, 'swp_1')

    if (!outcome.ok) throw new Error(`settle failed: ${outcome.message}`)
    const receipt = await chain.anvil.publicClient.getTransactionReceipt({ hash: outcome.transaction as Hash })
    expect(receipt.status).toBe('success')
    expect(receipt.from.toLowerCase()).toBe(chain.anvil.accounts[FACILITATOR_ACCOUNT_INDEX]!.address.toLowerCase())
    expect(await chain.balanceOf(payer().address)).toBe(before.payer - 20_000n)
    expect(await chain.balanceOf(payTo())).toBe(before.payTo + 20_000n)
    expect(facilitator.calls).toEqual(['/verify', '/settle'])
  })

  it('gets invalid_signature from /verify for a tampered authorization', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const authorization = payment.payload.payload.authorization
    // validBefore moved after signing: the signature no longer covers what is sent.
    const tampered: VerifiedPayment = {
      ...payment,
      payload: {
        ...payment.payload,
        payload: {
          ...payment.payload.payload,
          authorization: { ...authorization, validBefore: String(BigInt(authorization.validBefore) + 1n) },
        },
      },
    }
    expect(await settler.check(tampered)).toEqual({
      ok: false,
      reason: 'invalid_signature',
      message:
        'The payment facilitator rejected the payment: the signature does not verify for USDC on Base (facilitator reason "invalid_exact_evm_payload_signature").',
    })
    expect(facilitator.calls).toEqual(['/verify'])
  })

  it('gets insufficient_funds from /verify for a payer without USDC', async () => {
    const { payment } = await signedPayment({ payer: chain.anvil.accounts[4]!, payTo: payTo() })
    expect(await settler.check(payment)).toMatchObject({ ok: false, reason: 'insufficient_funds' })
    expect(facilitator.calls).toEqual(['/verify'])
  })

  it('reports success:false from /settle as a plain failure (the payer emptied the wallet after the check)', async () => {
    const { payment } = await signedPayment({ payer: chain.anvil.accounts[6]!, payTo: payTo() })
    await chain.mint(payment.payer, 20_000n)
    expect(await settler.check(payment)).toEqual({ ok: true })
    await chain.transfer(chain.anvil.accounts[6]!, sink(), 20_000n)
    const payToBalance = await chain.balanceOf(payTo())

    expect(await settler.settle(payment, 'swp_4')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'The payment facilitator could not settle the payment (insufficient_funds); nothing was charged.',
    })
    expect(await chain.balanceOf(payTo())).toBe(payToBalance)
    expect(facilitator.calls).toEqual(['/verify', '/settle'])
  })

  it('is ambiguous when /settle answers 500 (x402 settle threw on a replayed authorization)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    expect((await settler.settle(payment, 'swp_5')).ok).toBe(true)
    const again = await settler.settle(payment, 'swp_5b')
    expect(again).toEqual({
      ok: false,
      reason: 'settlement_failed',
      isAmbiguous: true,
      message:
        'The payment facilitator answered HTTP 500 to /settle; it may have broadcast the transfer, so the payment is being reconciled.',
    })
    expect(facilitator.calls).toEqual(['/settle', '/settle'])
  })

  it('is ambiguous when /settle answers garbage, and rightly so: the transfer did happen', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const balance = await chain.balanceOf(payer().address)
    const garbled = facilitatorSettler({ url: facilitator.url, fetch: answering('settle', () => new Response('<html>Bad Gateway</html>')) })

    expect(await garbled.settle(payment, 'swp_6')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      isAmbiguous: true,
      message:
        'The payment facilitator gave an unreadable answer to /settle; it may have broadcast the transfer, so the payment is being reconciled.',
    })
    expect(await chain.balanceOf(payer().address)).toBe(balance - 20_000n)
    expect(facilitator.calls).toEqual(['/settle'])
  })

  it('is ambiguous when /settle reports success without a transaction hash', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const hashless = facilitatorSettler({
      url: facilitator.url,
      fetch: answering('settle', () => Response.json({ success: true, transaction: '', network: 'base' })),
    })
    expect(await hashless.settle(payment, 'swp_7')).toMatchObject({ ok: false, reason: 'settlement_failed', isAmbiguous: true })
  })

  it('is ambiguous when /settle does not answer within timeoutMs', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const slow = facilitatorSettler({ url: facilitator.url, fetch: hanging, timeoutMs: 200 })
    expect(await slow.settle(payment, 'swp_8')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      isAmbiguous: true,
      message:
        'The payment facilitator did not answer /settle within 0.2 s; it may have broadcast the transfer, so the payment is being reconciled.',
    })
  })

  it('treats a facilitator that is down as settlement_failed on /verify and ambiguous on /settle', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const down = facilitatorSettler({ url: `http://127.0.0.1:${await closedPort()}/` })
    expect(await down.check(payment)).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'The payment facilitator could not be reached for /verify; nothing was charged. Retry shortly with the same payment.',
    })
    expect(await down.settle(payment, 'swp_9')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      isAmbiguous: true,
      message:
        'The payment facilitator could not be reached for /settle; it may have broadcast the transfer, so the payment is being reconciled.',
    })
    expect(facilitator.calls).toEqual([])
  })

  it.each([
    ['HTTP 500', () => new Response('Internal Server Error', { status: 500 }), 'The payment facilitator answered HTTP 500 to /verify'],
    ['garbage', () => new Response('not json'), 'The payment facilitator gave an unreadable answer to /verify'],
    ['a settle-shaped answer', () => Response.json({ success: true }), 'The payment facilitator gave an unreadable answer to /verify'],
  ])('never passes nor calls ambiguous a /verify answering %s', async (_name, replace, message) => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const broken = facilitatorSettler({ url: facilitator.url, fetch: answering('verify', replace) })
    expect(await broken.check(payment)).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: `${message}; nothing was charged. Retry shortly with the same payment.`,
    })
    expect(facilitator.calls).toEqual(['/verify'])
  })
})

describe('facilitatorSettler, the wire', () => {
  const requests: { url: string; headers: Headers; body: unknown }[] = []
  const recording =
    (answer: unknown, status = 200): FacilitatorFetch =>
    async (url, init) => {
      requests.push({ url, headers: new Headers(init.headers), body: JSON.parse(String(init.body)) })
      return Response.json(answer, { status })
    }
  beforeEach(() => {
    requests.length = 0
  })

  it('posts {x402Version: 1, paymentPayload, paymentRequirements} with the configured headers', async () => {
    const { payload, payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const withKey = facilitatorSettler({
      url: 'https://facilitator.test/x402/',
      fetch: recording({ isValid: true, payer: payment.payer }),
      headers: async (endpoint) => ({ authorization: `Bearer token-for-${endpoint}` }),
    })
    expect(await withKey.check(payment)).toEqual({ ok: true })
    expect(requests).toHaveLength(1)
    expect(requests[0]!.url).toBe('https://facilitator.test/x402/verify')
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer token-for-verify')
    expect(requests[0]!.headers.get('content-type')).toBe('application/json')
    expect(requests[0]!.body).toEqual({ x402Version: 1, paymentPayload: payload, paymentRequirements: payment.requirements })
  })

  it('settles without sending when the credentials cannot be made (not ambiguous)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const noKey = facilitatorSettler({
      url: 'https://facilitator.test',
      fetch: recording({}),
      headers: () => Promise.reject(new Error('key expired')),
    })
    const outcome = await noKey.settle(payment, 'swp_w')
    expect(outcome).toMatchObject({ ok: false, reason: 'settlement_failed' })
    expect(outcome).not.toHaveProperty('isAmbiguous')
    expect(requests).toEqual([])
  })

  // Review of issue 15: a failed transaction published the signed authorization, which stays valid and may still pay
  // (or paid through another's transaction first): held and reconciled, never released as "nothing was charged".
  it('holds a payment whose success:false answer names a transaction, as ambiguous, with that transaction', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const hash = `0x${'ab'.repeat(32)}`
    const failing = facilitatorSettler({
      url: 'https://facilitator.test',
      fetch: recording({ success: false, errorReason: 'invalid_transaction_state', transaction: hash, network: 'base' }),
    })
    expect(await failing.settle(payment, 'swp_x')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      isAmbiguous: true,
      transaction: hash,
      message: `The payment facilitator's settlement transaction ${hash} failed (invalid_transaction_state), but it published the signed authorization, which may still pay; it may have broadcast the transfer, so the payment is being reconciled.`,
    })
    // Without a transaction, nothing was broadcast: a plain failure, released.
    const refused = facilitatorSettler({
      url: 'https://facilitator.test',
      fetch: recording({ success: false, errorReason: 'invalid_transaction_state', network: 'base' }),
    })
    const plain = await refused.settle(payment, 'swp_y')
    expect(plain).toMatchObject({ ok: false, reason: 'settlement_failed' })
    expect(plain).not.toHaveProperty('isAmbiguous')
  })

  it.each([
    ['invalid_exact_evm_payload_signature', 'invalid_signature'],
    ['invalid_exact_evm_signature', 'invalid_signature'],
    ['invalid_exact_evm_payload_recipient_mismatch', 'recipient_mismatch'],
    ['invalid_exact_evm_payload_authorization_value', 'amount_mismatch'],
    ['invalid_exact_evm_payload_authorization_valid_before', 'authorization_expired'],
    ['invalid_exact_evm_payload_authorization_valid_after', 'authorization_not_yet_valid'],
    ['insufficient_funds', 'insufficient_funds'],
    ['invalid_exact_evm_insufficient_balance', 'insufficient_funds'],
    ['invalid_exact_evm_nonce_already_used', 'payment_already_used'],
    ['duplicate_settlement', 'payment_already_used'],
    ['invalid_exact_evm_payload_undeployed_smart_wallet', 'invalid_payment'],
    ['invalid_network', 'invalid_payment'],
    [null, 'invalid_payment'],
  ])('maps the facilitator reason %s to %s, quoting it', async (invalidReason, reason) => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    // Some facilitators answer an invalid payment with 400 and the VerifyResponse; it is a refusal all the same.
    const refusing = facilitatorSettler({ url: 'https://facilitator.test', fetch: recording({ isValid: false, invalidReason }, 400) })
    const outcome = await refusing.check(payment)
    expect(outcome).toMatchObject({ ok: false, reason })
    if (outcome.ok) return
    expect(outcome.message).toContain(`(facilitator reason "${invalidReason ?? 'none given'}")`)
  })
})
