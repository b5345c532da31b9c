import { describe, expect, it } from 'vitest'
import { buildPaymentRequirements } from '../../src/payments/x402/paymentRequirements.ts'
import {
  decodePaymentSignature,
  encodeBase64Json,
  normalisePaymentV2,
  paymentRequiredV2Of,
  requirementsV2Of,
  settleResponseV2Of,
} from '../../src/payments/x402/v2.ts'
import { PaymentRequiredV2, SettleResponseV2 } from '../../src/schemas/x402.ts'
import { USDC_BASE } from './signPayment.ts'

const PAY_TO = '0x1111111111111111111111111111111111111111'
const requirements = buildPaymentRequirements({
  resource: 'https://swapeazi.test/api/x402/swap',
  payTo: PAY_TO,
  asset: USDC_BASE,
  description: 'a swap build',
})
const authorization = {
  from: '0x2222222222222222222222222222222222222222',
  to: PAY_TO,
  value: '20000',
  validAfter: '0',
  validBefore: '1900000000',
  nonce: `0x${'ab'.repeat(32)}`,
} as const
const signature = `0x${'cd'.repeat(65)}` as const

function v2Payload(accepted: Record<string, unknown>): string {
  return encodeBase64Json({ x402Version: 2, resource: { url: requirements.resource }, accepted, payload: { signature, authorization } })
}

describe('x402 v2 wire forms', () => {
  it('offers the v1 requirement as a v2 PaymentRequired on eip155:8453', () => {
    const required = PaymentRequiredV2.parse(paymentRequiredV2Of(requirements, 'payment required'))
    expect(required).toEqual({
      x402Version: 2,
      error: 'payment required',
      resource: { url: requirements.resource, description: 'a swap build', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:8453',
          amount: '20000',
          asset: USDC_BASE,
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    })
  })

  it('normalises a payment that accepted exactly the offer into the internal v1 payment', () => {
    const decoded = decodePaymentSignature(
      v2Payload({ ...requirementsV2Of(requirements), payTo: PAY_TO.toUpperCase().replace('0X', '0x') }),
    )
    if (!decoded.ok) throw new Error(decoded.message)
    expect(normalisePaymentV2(decoded.payload, requirements)).toEqual({
      ok: true,
      payload: { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature, authorization } },
    })
  })

  it.each([
    [{ network: 'base' }, 'network_mismatch'],
    [{ amount: '1' }, 'amount_mismatch'],
    [{ payTo: '0x3333333333333333333333333333333333333333' }, 'recipient_mismatch'],
    [{ scheme: 'upto' }, 'unsupported_scheme'],
    [{ maxTimeoutSeconds: 3600 }, 'invalid_payment'],
    [{ extra: { name: 'USDC', version: '2' } }, 'invalid_payment'],
    [{ bonus: true }, 'invalid_payment'],
  ])('refuses an accepted entry that differs from the offer (%o → %s)', (change, reason) => {
    const decoded = decodePaymentSignature(v2Payload({ ...requirementsV2Of(requirements), ...change }))
    if (!decoded.ok) throw new Error(decoded.message)
    expect(normalisePaymentV2(decoded.payload, requirements)).toMatchObject({ ok: false, reason })
  })

  it('refuses a v1 payload, non-base64 and non-JSON in PAYMENT-SIGNATURE with what to send', () => {
    expect(decodePaymentSignature(encodeBase64Json({ x402Version: 1 }))).toMatchObject({
      ok: false,
      message: expect.stringContaining('X-PAYMENT'),
    })
    expect(decodePaymentSignature('not base64!')).toMatchObject({ ok: false, reason: 'invalid_payment' })
    expect(decodePaymentSignature(Buffer.from('{').toString('base64'))).toMatchObject({ ok: false, reason: 'invalid_payment' })
  })

  it('answers with a v2 SettleResponse', () => {
    const response = settleResponseV2Of({
      success: true,
      transaction: 'ledger:x',
      network: 'base',
      payer: authorization.from,
      settlement: 'ledger',
    })
    expect(SettleResponseV2.parse(response)).toMatchObject({ success: true, network: 'eip155:8453', payer: authorization.from })
  })
})
