import { keccak256, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { SwapResult } from '../../src/schemas/swap.ts'
import { SwapStatusWire } from '../../src/schemas/swapStatus.ts'
import { trackingOf } from '../../src/service/swapTracking.ts'
import { encodeHeader, signPayment } from '../payments/signPayment.ts'
import { get, lazyMemoryStore, NOW_MS, PAY_TO, postJson, quoteBody, readJson, testApp } from './testApp.ts'

const store = lazyMemoryStore()
afterAll(() => store.sql.close())

// Audit of issue 15: just past the deadline the status said "no transaction seen: get a new quote and build again"
// while the tracker had read final blocks only up to before the deadline, so a transaction mined in its last blocks
// could still turn pending: an agent building again would have the user's money move twice.
describe('the status of a built swap past its deadline goes by how far the tracker has read', () => {
  it('waits while the final blocks read are before the deadline, then says quote again once they pass it', async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: NOW_MS / 1000 })
    const paid = await postJson(testApp({ store }), '/api/x402/swap', quoteBody({ fromAddress: payer.address.toLowerCase() }), {
      'x-payment': encodeHeader(payload),
    })
    expect(paid.status, await paid.clone().text()).toBe(200)
    const swap = SwapResult.parse(await readJson(paid))
    const deadlineMs = Date.parse(swap.deadline)
    // This service's own tracker follows ETH, the swap's source chain.
    const tracking = trackingOf({ chains: ['ETH'], hintSourceTransaction: async () => ({ ok: true, isFinal: false }) })
    const reader = testApp({ store, tracking, clock: () => deadlineMs + 30_000 })
    const next = async () => SwapStatusWire.parse(await readJson(await get(reader, `/api/v1/swap/${swap.swapEaziRef}/status`))).next

    const cursor = (block: bigint, timeMs: number) => ({ block, blockHash: keccak256(toHex(`b${block}`)), blockTime: new Date(timeMs) })
    expect(await store.lifecycle.setCursor('ETH', cursor(100n, deadlineMs - 120_000), null)).toBe(true)
    expect(await next()).toMatchObject({ action: 'wait', checkAgainSec: 30 })

    expect(await store.lifecycle.setCursor('ETH', cursor(120n, deadlineMs + 5_000), 100n)).toBe(true)
    const after = await next()
    expect(after.action).toBe('quote_again')
    expect(after.message).toContain('has passed with no transaction seen')
  })
})
