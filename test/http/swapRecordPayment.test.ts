import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import type { SwapRecord } from '../../src/store/createStore.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { FROM_ADDRESS, get, KEY_SECRET, lazyMemoryStore, NOW_MS, PAY_TO, testApp } from './testApp.ts'

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })
const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })

// Review of issue 15: a paid swap is recorded with its payment's reservation, before any money moves. Its record
// (with its transaction) must not be readable by a key holding its reference until the payment is settled.
describe('GET /api/v1/swap/{ref} of a paid swap', () => {
  it('is 404 while its payment is reserved or unsettled, and the record once it is settled', async () => {
    const ref = newSwapRef(Date.now())
    const nonce = `0x${'5'.repeat(64)}`
    const swap: SwapRecord = {
      ref,
      channel: 'x402',
      status: 'built',
      fromChain: 'BAS',
      toChain: 'BAS',
      fromToken: 'USDC',
      toToken: 'EURC',
      fromAmount: '100',
      toAmount: '90',
      toAmountMin: '89',
      fromAddress: FROM_ADDRESS,
      toAddress: FROM_ADDRESS,
      quote: {},
      transactionRequest: { to: PAY_TO, data: '0x', value: '0', chainId: 8453 },
      createdAt: new Date(),
    }
    const reservation = {
      payer: FROM_ADDRESS,
      nonce,
      value: 20_000n,
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: PAY_TO,
      validAfter: 0n,
      validBefore: 2_000_000_000n,
      signature: '0x',
      settlementMode: 'onchain',
      swapRef: ref,
      reservedAt: new Date(),
    }
    expect(await store.reservePayment(reservation, swap)).toBe(true)
    const read = () => get(app, `/api/v1/swap/${ref}`, { 'x-swapeazi-key': KEY })
    expect((await read()).status).toBe(404)
    await store.markPaymentUnsettled(FROM_ADDRESS, nonce, { error: 'not confirmed yet' })
    expect((await read()).status).toBe(404)
    expect(
      await store.settleUnsettledPayment(
        FROM_ADDRESS,
        nonce,
        { transaction: `0x${'7'.repeat(64)}`, settledAt: new Date() },
        { swapRef: ref, transaction: null },
      ),
    ).toBe(true)
    const settled = await read()
    expect(settled.status).toBe(200)
  })
})
