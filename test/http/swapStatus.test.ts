import { type Hex, keccak256, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { SwapStatusWire } from '../../src/schemas/swapStatus.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { deferredTracking, type HintSourceTransactionReturnType, type SwapTracking, trackingOf } from '../../src/service/swapTracking.ts'
import type { LegPosition, LifecycleUpdate, Store } from '../../src/store/createStore.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { agentTextOffences } from '../support/agentText.ts'
import { encodeHeader, signPayment } from '../payments/signPayment.ts'
import { FROM_ADDRESS, get, KEY_SECRET, NOW_MS, PAY_TO, postJson, quoteBody, readJson, type TestApp, testApp } from './testApp.ts'

// Issue 18 item 6: GET /api/v1/swap/{ref}/status for whoever holds the reference, and the hint of item 1. The
// lifecycles are real records of the store (store.lifecycle.update, as the tracker writes them); no chain is needed.

const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
const RECIPIENT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const USDC_ARB = '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'

const hash = (label: string): Hex => keccak256(toHex(label))
const leg = (chain: string, label: string, blockNumber: bigint): LegPosition => ({
  chain,
  txHash: hash(label),
  blockNumber,
  blockHash: hash(`${label}:block`),
  logIndex: 0,
})
const at = (secondsAfterNow: number): Date => new Date(NOW_MS + secondsAfterNow * 1000)

/** The tracking of a tracker following `follows` whose hint answers `hint`; the hints it was given are in `hints`. */
function tracking(parameters: {
  follows: ChainCode[]
  hint?: HintSourceTransactionReturnType
}): SwapTracking & { hints: [string, string][] } {
  const hints: [string, string][] = []
  const tracker = {
    chains: parameters.follows,
    async hintSourceTransaction(ref: string, txHash: string): Promise<HintSourceTransactionReturnType> {
      hints.push([ref, txHash])
      return parameters.hint ?? { ok: true, isFinal: true }
    },
  }
  return { ...trackingOf(tracker), hints }
}

describe.each(storeDrivers())('swap status on $name', (driver) => {
  let opened: OpenedStore
  let store: Store
  let app: TestApp
  beforeAll(async () => {
    opened = await driver.open()
    store = opened.store
    app = testApp({ store })
  })
  afterAll(() => opened?.cleanup())

  async function status(ref: string, target?: TestApp): Promise<{ response: Response; body: Record<string, unknown> }> {
    const response = await get(target ?? app, `/api/v1/swap/${ref}/status`)
    return { response, body: await readJson(response) }
  }

  async function keyedSwap(overrides: Record<string, unknown>): Promise<SwapResult> {
    const quoted = await postJson(app, '/api/x402/quote', quoteBody(overrides))
    expect(quoted.status).toBe(200)
    const { quoteId } = await readJson<{ quoteId: string }>(quoted)
    const built = await postJson(app, '/api/v1/swap', { quoteId, toAddress: RECIPIENT }, { 'x-swapeazi-key': KEY })
    expect(built.status, await built.clone().text()).toBe(200)
    return SwapResult.parse(await readJson(built))
  }

  async function move(ref: string, update: Omit<LifecycleUpdate, 'at'> & { at?: Date }, from: LifecycleUpdate['state'][]): Promise<void> {
    const moved = await store.lifecycle.update(ref, { at: at(60), ...update }, from)
    expect(moved?.updated).toBe(true)
  }

  describe('GET /api/v1/swap/{ref}/status', () => {
    it('answers a paid swap to anyone holding the reference, as built, with the deadline to sign by and no-store', async () => {
      const payer = privateKeyToAccount(generatePrivateKey())
      const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
      const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec: NOW_MS / 1000 })
      const paid = await postJson(app, '/api/x402/swap', body, { 'x-payment': encodeHeader(payload) })
      expect(paid.status, await paid.clone().text()).toBe(200)
      const swap = SwapResult.parse(await readJson(paid))

      const { response, body: answer } = await status(swap.swapEaziRef)
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(response.headers.get('ratelimit-policy')).not.toBeNull()
      const parsed = SwapStatusWire.parse(answer)
      expect(parsed).toMatchObject({ ref: swap.swapEaziRef, kind: 'swap', state: 'built', substatus: null, reason: null })
      expect(parsed.orders).toEqual([
        expect.objectContaining({
          ref: swap.swapEaziRef,
          state: 'built',
          isTracked: false,
          fromChain: 'ETH',
          toChain: 'ETH',
          sent: null,
          received: null,
          legs: [],
          transitions: [{ state: 'built', substatus: null, at: new Date(NOW_MS).toISOString() }],
        }),
      ])
      // The deadline is the router's, read from the calldata: the same the build answered.
      expect(parsed.next).toMatchObject({ action: 'sign_and_broadcast', deadline: swap.deadline, checkAgainSec: null })
      expect(parsed.next.message).toContain(`before ${swap.deadline}`)
      expect(parsed.next.message).toContain(
        "This service does not read ETH and has seen no tracker scan it in the last 10 minutes: this status updates once the transaction is mined only if a `swapeazi track` process with ETH's RPC runs on the same store; otherwise it stays built, so once it is broadcast read the transaction on the block explorer (https://etherscan.io) by the hash the wallet gave.",
      )
      // Only what the chains show: no addresses, transaction or payment.
      expect(JSON.stringify(answer).toLowerCase()).not.toContain(payer.address.slice(2).toLowerCase())
      expect(answer).not.toHaveProperty('transactionRequest')
      // The full record stays keyed.
      expect((await get(app, `/api/v1/swap/${swap.swapEaziRef}`)).status).toBe(401)
    })

    it('follows a keyed cross-chain swap from pending to done/completed: legs with explorer links, amounts, transitions', async () => {
      const swap = await keyedSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '1000' })
      const tracked = testApp({ store, tracking: tracking({ follows: ['BAS', 'ARB'] }) })
      await move(
        swap.swapEaziRef,
        {
          state: 'pending',
          legs: { source: leg('BAS', 'src', 123n) },
          sent: { chain: 'BAS', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: 1_000_000_000n },
        },
        ['built'],
      )
      const pending = SwapStatusWire.parse((await status(swap.swapEaziRef, tracked)).body)
      expect(pending).toMatchObject({ state: 'pending', next: { action: 'wait', checkAgainSec: 15, deadline: null } })
      expect(pending.orders[0]).toMatchObject({
        isTracked: true,
        sent: { chain: 'BAS', token: 'USDC', amount: '1000', atomic: '1000000000' },
        received: null,
        legs: [
          { role: 'source', chain: 'BAS', txHash: hash('src'), blockNumber: '123', explorerUrl: `https://basescan.org/tx/${hash('src')}` },
        ],
      })

      await move(
        swap.swapEaziRef,
        {
          state: 'done',
          substatus: 'completed',
          legs: { destination: leg('ARB', 'dst', 456n) },
          received: { chain: 'ARB', token: USDC_ARB, amount: 994_123_456n },
          at: at(180),
        },
        ['pending'],
      )
      const done = SwapStatusWire.parse((await status(swap.swapEaziRef, tracked)).body)
      expect(done).toMatchObject({ state: 'done', substatus: 'completed', next: { action: 'none', checkAgainSec: null } })
      expect(done.next.message).toBe('Delivered: the recipient got 994.123456 USDC on ARB. Nothing more to do.')
      const [order] = done.orders
      expect(order?.received).toEqual({ chain: 'ARB', token: 'USDC', amount: '994.123456', atomic: '994123456' })
      expect(order?.legs.map((l) => [l.role, l.chain, l.explorerUrl])).toEqual([
        ['source', 'BAS', `https://basescan.org/tx/${hash('src')}`],
        ['destination', 'ARB', `https://arbiscan.io/tx/${hash('dst')}`],
      ])
      expect(order?.transitions).toEqual([
        { state: 'built', substatus: null, at: new Date(NOW_MS).toISOString() },
        { state: 'pending', substatus: null, at: at(60).toISOString() },
        { state: 'done', substatus: 'completed', at: at(180).toISOString() },
      ])
    })

    it('a pending swap to a chain this service does not read says the status updates only where a tracker reads it, and where to look', async () => {
      const swap = await keyedSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '200' })
      const sourceOnly = testApp({ store, tracking: tracking({ follows: ['BAS'] }) })
      await move(swap.swapEaziRef, { state: 'pending', legs: { source: leg('BAS', 'no-dst', 7n) } }, ['built'])
      const pending = SwapStatusWire.parse((await status(swap.swapEaziRef, sourceOnly)).body)
      expect(pending.orders[0]?.isTracked).toBe(true)
      expect(pending.next).toMatchObject({ action: 'wait', checkAgainSec: 60, deadline: null })
      expect(pending.next.message).toBe(
        "The source transaction is mined and the money is on its way to ARB. This service does not read ARB and has seen no tracker read it for this swap yet: if a `swapeazi track` process with its RPC runs beside it, this status will update when the money arrives (read it again in 60 s); otherwise it stays pending, so look for USDC in the recipient's wallet on ARB (the bridge's own explorer shows the transfer).",
      )
      expect(pending.next.message).not.toContain('will not change')
    })

    it("a pending swap whose destination another process's tracker reads (its last look is in the store) waits as a followed one", async () => {
      const swap = await keyedSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '300' })
      // A replica that reads BAS only; `swapeazi track` beside it reads ARB and records each look at the destination.
      const replica = testApp({ store, tracking: tracking({ follows: ['BAS'] }) })
      await move(swap.swapEaziRef, { state: 'pending', legs: { source: leg('BAS', 'elsewhere', 8n) }, at: at(-3_600) }, ['built'])
      await move(swap.swapEaziRef, { state: 'pending', destinationFromBlock: 900n, at: at(-3_600) }, ['pending'])
      // Its last look an hour ago: that tracker may be gone.
      const stale = SwapStatusWire.parse((await status(swap.swapEaziRef, replica)).body)
      expect(stale.next).toMatchObject({ action: 'wait', checkAgainSec: 60 })
      await move(swap.swapEaziRef, { state: 'pending', destinationFromBlock: 950n, at: at(-5) }, ['pending'])
      const read = SwapStatusWire.parse((await status(swap.swapEaziRef, replica)).body)
      expect(read.next).toEqual({
        action: 'wait',
        message: 'The source transaction is mined and the money is on its way to ARB; nothing to do but wait. Check again in 15 s.',
        checkAgainSec: 15,
        deadline: null,
      })
    })

    it("a built swap on a chain this service does not read is followed when another process's tracker scans that chain", async () => {
      const swap = await keyedSwap({ fromChain: 'OPT', toChain: 'OPT', fromToken: 'USDC', toToken: 'USDT', fromAmount: '100' })
      const replica = testApp({ store, tracking: tracking({ follows: ['BAS'] }) })
      const cursorAt = async (secondsAgo: number): Promise<void> => {
        const cursor = { block: 1_000n, blockHash: hash(`opt:${secondsAgo}`), blockTime: at(-secondsAgo) }
        expect(await store.lifecycle.setCursor('OPT', cursor)).toBe(true)
      }
      const unseen = SwapStatusWire.parse((await status(swap.swapEaziRef, replica)).body)
      expect(unseen.orders[0]?.isTracked).toBe(false)
      expect(unseen.next.checkAgainSec).toBeNull()
      expect(unseen.next.message).toContain(
        "This service does not read OPT and has seen no tracker scan it in the last 10 minutes: this status updates once the transaction is mined only if a `swapeazi track` process with OPT's RPC runs on the same store; otherwise it stays built, so once it is broadcast read the transaction on the block explorer (https://optimistic.etherscan.io) by the hash the wallet gave.",
      )
      // A cursor last moved an hour ago: no tracker is seen scanning OPT now.
      await cursorAt(3_600)
      expect(SwapStatusWire.parse((await status(swap.swapEaziRef, replica)).body).orders[0]?.isTracked).toBe(false)
      await cursorAt(120)
      const scanned = SwapStatusWire.parse((await status(swap.swapEaziRef, replica)).body)
      expect(scanned.orders[0]?.isTracked).toBe(true)
      expect(scanned.next).toMatchObject({ action: 'sign_and_broadcast', checkAgainSec: 30 })
      expect(scanned.next.message).toContain(
        'This service does not read OPT, but a tracker elsewhere (`swapeazi track` on the same store) was seen scanning it in the last 10 minutes: this status updates once the transaction is mined, while that tracker runs;',
      )
    })

    it("follows the configured chains before the tracker is built: not told its swap is unfollowed in serve's first moments", async () => {
      const swap = await keyedSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '400' })
      const starting = testApp({ store, tracking: deferredTracking({ chains: ['BAS', 'ARB'], current: () => undefined }) })
      const built = SwapStatusWire.parse((await status(swap.swapEaziRef, starting)).body)
      expect(built.orders[0]?.isTracked).toBe(true)
      expect(built.next).toMatchObject({ action: 'sign_and_broadcast', checkAgainSec: 30 })
      await move(swap.swapEaziRef, { state: 'pending', legs: { source: leg('BAS', 'starting', 9n) } }, ['built'])
      const pending = SwapStatusWire.parse((await status(swap.swapEaziRef, starting)).body)
      expect(pending.next).toMatchObject({ action: 'wait', checkAgainSec: 15 })
      // A chain whose RPC serves another chain is not followed.
      const mismatched = testApp({
        store,
        tracking: deferredTracking({ chains: ['BAS', 'ARB'], isUsable: (chain) => chain !== 'ARB', current: () => undefined }),
      })
      expect(SwapStatusWire.parse((await status(swap.swapEaziRef, mismatched)).body).next.checkAgainSec).toBe(60)
    })

    it('says which token arrived on done/partial, and what the user can do', async () => {
      const swap = await keyedSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDT', fromAmount: '500' })
      await move(swap.swapEaziRef, { state: 'pending', legs: { source: leg('BAS', 'p-src', 10n) } }, ['built'])
      await move(
        swap.swapEaziRef,
        {
          state: 'done',
          substatus: 'partial',
          reason: 'the destination swap could not meet its minimum',
          received: { chain: 'ARB', token: USDC_ARB, amount: 497_000_000n },
        },
        ['pending'],
      )
      const partial = SwapStatusWire.parse((await status(swap.swapEaziRef)).body)
      expect(partial).toMatchObject({ state: 'done', substatus: 'partial', reason: 'the destination swap could not meet its minimum' })
      expect(partial.next.action).toBe('use_delivered_token')
      expect(partial.next.message).toMatchInlineSnapshot(
        `"The destination swap could not run, so the recipient got 497 USDC on ARB instead of USDT. The money is safe in the recipient's wallet: keep it, or swap it to USDT with a new quote."`,
      )
    })

    it('says a refunded swap went back to the sender, with the refund on the source chain as its last leg', async () => {
      const swap = await keyedSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '700' })
      await move(swap.swapEaziRef, { state: 'pending', legs: { source: leg('BAS', 'r-src', 10n) } }, ['built'])
      const refund = { chain: 'BAS', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: 700_000_000n }
      await move(
        swap.swapEaziRef,
        {
          state: 'done',
          substatus: 'refunded',
          reason: 'no relayer filled the Across deposit',
          legs: { destination: leg('BAS', 'refund', 90n) },
          received: refund,
        },
        ['pending'],
      )
      const refunded = SwapStatusWire.parse((await status(swap.swapEaziRef)).body)
      expect(refunded).toMatchObject({ state: 'done', substatus: 'refunded', next: { action: 'check_sender' } })
      expect(refunded.orders[0]?.legs.map((l) => [l.role, l.chain, l.explorerUrl])).toEqual([
        ['source', 'BAS', `https://basescan.org/tx/${hash('r-src')}`],
        ['refund', 'BAS', `https://basescan.org/tx/${hash('refund')}`],
      ])
      expect(refunded.next.message).toBe(
        'The bridge refunded the transfer to the sender (700 USDC on BAS): nothing reached the recipient. Get a new quote to try again.',
      )
    })

    it('tells an expired swap to quote again, and a failed one where the money is', async () => {
      const expired = await keyedSwap({})
      await move(expired.swapEaziRef, { state: 'expired', reason: 'the deadline passed with no Swapped event' }, ['built'])
      const answer = SwapStatusWire.parse((await status(expired.swapEaziRef)).body)
      expect(answer).toMatchObject({ state: 'expired', next: { action: 'quote_again', checkAgainSec: null } })
      expect(answer.next.message).toContain(expired.deadline)

      const failed = await keyedSwap({})
      await move(
        failed.swapEaziRef,
        { state: 'failed', reason: 'the source transaction reverted', legs: { source: leg('ETH', 'rev', 7n) } },
        ['built'],
      )
      const failedAnswer = SwapStatusWire.parse((await status(failed.swapEaziRef)).body)
      expect(failedAnswer).toMatchObject({ state: 'failed', reason: 'the source transaction reverted', next: { action: 'check_sender' } })
      expect(failedAnswer.orders[0]?.legs[0]?.explorerUrl).toBe(`https://etherscan.io/tx/${hash('rev')}`)
      // A reverted order is not spent: the same transaction may be sent again until its deadline.
      expect(failedAnswer.next).toMatchObject({ deadline: failed.deadline, checkAgainSec: null })
      expect(failedAnswer.next.message).toBe(
        `It failed: the source transaction reverted. A reverted transaction moves nothing, so the money is still with the sender: fix the cause (the approval or the balance, say) and send the same transactionRequest again before ${failed.deadline}, or get a new quote.`,
      )
    })

    it('answers a batch with every recipient: a transfer is done once the batch transaction is mined, a bridge leg waits', async () => {
      const built = await postJson(
        app,
        '/api/v1/batch/disburse',
        {
          fromChain: 'BAS',
          fromToken: 'USDC',
          fromAddress: FROM_ADDRESS,
          recipients: [
            { address: RECIPIENT, toChain: 'BAS', toToken: 'USDC', amount: '100' },
            { address: RECIPIENT, toChain: 'ARB', toToken: 'USDC', amount: '200' },
          ],
        },
        { 'x-swapeazi-key': KEY },
      )
      expect(built.status, await built.clone().text()).toBe(200)
      const batch = DisbursementResult.parse(await readJson(built))
      const ref = batch.disbursementRef
      const tracked = testApp({ store, tracking: tracking({ follows: ['BAS'] }) })

      const before = SwapStatusWire.parse((await status(ref, tracked)).body)
      expect(before).toMatchObject({ ref, kind: 'batch', state: 'built', next: { action: 'sign_and_broadcast', deadline: batch.deadline } })
      expect(before.orders.map((o) => [o.ref, o.state, o.isTracked])).toEqual([
        [`${ref}.0`, 'built', true],
        [`${ref}.1`, 'built', true],
      ])

      await move(`${ref}.1`, { state: 'pending', legs: { source: leg('BAS', 'batch', 99n) } }, ['built'])
      const during = SwapStatusWire.parse((await status(ref, tracked)).body)
      expect(during).toMatchObject({ state: 'pending', next: { action: 'wait' } })
      expect(during.orders.map((o) => [o.state, o.substatus, o.legs.map((l) => l.txHash)])).toEqual([
        ['done', 'completed', [hash('batch')]],
        ['pending', null, [hash('batch')]],
      ])
      // A transfer receives its amount less the fee: exact, as the batch answered it.
      expect(during.orders[0]?.received).toMatchObject({ chain: 'BAS', token: 'USDC', amount: batch.items[0]?.toAmount })
    })

    async function transferOnlyBatch(fromChain: ChainCode): Promise<string> {
      const built = await postJson(
        app,
        '/api/v1/batch/disburse',
        {
          fromChain,
          fromToken: 'USDC',
          fromAddress: FROM_ADDRESS,
          recipients: [
            { address: RECIPIENT, toChain: fromChain, toToken: 'USDC', amount: '10' },
            { address: FROM_ADDRESS, toChain: fromChain, toToken: 'USDC', amount: '20' },
          ],
        },
        { 'x-swapeazi-key': KEY },
      )
      expect(built.status, await built.clone().text()).toBe(200)
      return DisbursementResult.parse(await readJson(built)).disbursementRef
    }

    /** The step of a batch of transfers only, on whatever chain: nothing follows it, so it says where to look instead. */
    const transfersOnlyStep = (explorer: string): string =>
      `No tracker follows this order (a batch of plain transfers only holds no swap or bridge order for one to move), so this status stays built whatever happens on chain: once it is broadcast, check the transaction on the block explorer (${explorer}) by the hash the wallet gave.`

    it('answers a batch of transfers only on a chain this service reads as never moving: no order of it is a swap a tracker follows', async () => {
      const disbursementRef = await transferOnlyBatch('BAS')
      const tracked = testApp({ store, tracking: tracking({ follows: ['BAS'] }) })
      const answer = SwapStatusWire.parse((await status(disbursementRef, tracked)).body)
      expect(answer).toMatchObject({ kind: 'batch', state: 'built', next: { action: 'sign_and_broadcast', checkAgainSec: null } })
      expect(answer.orders.map((o) => [o.ref, o.isTracked])).toEqual([
        [`${disbursementRef}.0`, false],
        [`${disbursementRef}.1`, false],
      ])
      expect(answer.next.message).toMatch(/^Sign and broadcast the batch transactionRequest \(executeBatch\) before /)
      // It reads BAS: it is not told it does not, nor that a tracker beside it would move this status.
      expect(answer.next.message).toContain(transfersOnlyStep('https://basescan.org'))
      expect(answer.next.message).not.toContain('does not read')
      expect(answer.next.message).not.toContain('swapeazi track')
    })

    it('answers a batch of transfers only on a chain this service does not read as never moving, even where a tracker elsewhere scans it', async () => {
      const disbursementRef = await transferOnlyBatch('ARB')
      const replica = testApp({ store, tracking: tracking({ follows: ['BAS'] }) })
      const unseen = SwapStatusWire.parse((await status(disbursementRef, replica)).body)
      expect(unseen.orders.map((o) => o.isTracked)).toEqual([false, false])
      expect(unseen.next).toMatchObject({ action: 'sign_and_broadcast', checkAgainSec: null })
      expect(unseen.next.message).toContain(transfersOnlyStep('https://arbiscan.io'))
      expect(unseen.next.message).not.toContain('swapeazi track')
      // A tracker elsewhere scanning ARB moves swaps there, not this batch: the answer is the same.
      expect(await store.lifecycle.setCursor('ARB', { block: 5_000n, blockHash: hash('arb:now'), blockTime: at(-30) })).toBe(true)
      const scanned = SwapStatusWire.parse((await status(disbursementRef, replica)).body)
      expect(scanned.orders.map((o) => o.isTracked)).toEqual([false, false])
      expect(scanned.next).toEqual(unseen.next)
    })

    it('is 404 problem+json for a well-formed reference nobody recorded, and 400 naming ref for a malformed one', async () => {
      // In any case: the ULID is case-insensitive, and the answer names it as recorded.
      for (const ref of ['swp_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'dsb_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'swp_01arz3ndektsv4rrffq69g5fav']) {
        const { response, body } = await status(ref)
        expect(response.status).toBe(404)
        expect(response.headers.get('content-type')).toBe('application/problem+json')
        expect(body).toMatchObject({ code: 'not_found', ref: `${ref.slice(0, 4)}${ref.slice(4).toUpperCase()}` })
      }
      for (const ref of ['swp_short', 'abc_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'dsb_01ARZ3NDEKTSV4RRFFQ69G5FAV.1']) {
        const { response, body } = await status(ref)
        expect(response.status, ref).toBe(400)
        expect(body).toMatchObject({ code: 'invalid_request', errors: [{ field: 'ref' }] })
      }
    })

    it('reads a reference in any case (a ULID is case-insensitive), answering it as the build did', async () => {
      const swap = await keyedSwap({})
      const lower = `swp_${swap.swapEaziRef.slice(4).toLowerCase()}`
      const { response, body } = await status(lower)
      expect(response.status).toBe(200)
      expect(body['ref']).toBe(swap.swapEaziRef)
      const record = await get(app, `/api/v1/swap/${lower}`, { 'x-swapeazi-key': KEY })
      expect(record.status).toBe(200)
      expect((await readJson(record))['swapEaziRef']).toBe(swap.swapEaziRef)
    })

    it('is counted as an anonymous read: over the per-IP limit it is 429', async () => {
      const limited = testApp({ store, rateLimits: { anonymous: 1, free: 1, pro: 1, holdRefusalsMs: 0 } })
      // The in-process caller's minute may already be counted by the tests before: the first read spends what is left.
      await status('swp_01ARZ3NDEKTSV4RRFFQ69G5FAV', limited)
      const { response, body } = await status('swp_01ARZ3NDEKTSV4RRFFQ69G5FAV', limited)
      expect(response.status).toBe(429)
      expect(body['code']).toBe('rate_limited')
    })
  })

  describe('POST /api/v1/swap/{ref}/transaction', () => {
    const hintOf = (target: typeof app, ref: string, body: unknown) => postJson(target, `/api/v1/swap/${ref}/transaction`, body)

    it('passes a valid hash to the tracker and answers 202 with the status', async () => {
      const swap = await keyedSwap({})
      const follower = tracking({ follows: ['ETH'] })
      const response = await hintOf(testApp({ store, tracking: follower }), swap.swapEaziRef, { txHash: hash('hinted') })
      expect(response.status, await response.clone().text()).toBe(202)
      expect(response.headers.get('cache-control')).toBe('no-store')
      expect(SwapStatusWire.parse(await readJson(response))).toMatchObject({ ref: swap.swapEaziRef, state: 'built' })
      expect(follower.hints).toEqual([[swap.swapEaziRef, hash('hinted')]])
    })

    it('refuses a chain beside the hash as an unknown field, saying the chain is the record own', async () => {
      const swap = await keyedSwap({})
      const follower = tracking({ follows: ['ETH'] })
      const response = await hintOf(testApp({ store, tracking: follower }), swap.swapEaziRef, { txHash: hash('x'), chain: 'ETH' })
      expect(response.status).toBe(400)
      const { detail } = (await readJson(response)) as { detail: string }
      expect(detail).toContain(`"chain" (the chain is read from the swap's record, its source chain)`)
      expect(detail).not.toContain('Unrecognized key')
      expect(follower.hints).toEqual([])
    })

    it("hands a batch's reference to the tracker as it is, and answers the batch", async () => {
      const built = await postJson(
        app,
        '/api/v1/batch/disburse',
        {
          fromChain: 'BAS',
          fromToken: 'USDC',
          fromAddress: FROM_ADDRESS,
          recipients: [{ address: RECIPIENT, toChain: 'ARB', toToken: 'USDC', amount: '50' }],
        },
        { 'x-swapeazi-key': KEY },
      )
      const { disbursementRef } = DisbursementResult.parse(await readJson(built))
      const follower = tracking({ follows: ['BAS'] })
      const response = await hintOf(testApp({ store, tracking: follower }), disbursementRef, { txHash: hash('batch-hint') })
      expect(response.status).toBe(202)
      expect(SwapStatusWire.parse(await readJson(response))).toMatchObject({ ref: disbursementRef, kind: 'batch' })
      expect(follower.hints).toEqual([[disbursementRef, hash('batch-hint')]])
    })

    it('is 422 transaction_mismatch when the receipt holds no matching Swapped event', async () => {
      const swap = await keyedSwap({})
      const follower = tracking({
        follows: ['ETH'],
        hint: { ok: false, reason: 'not_this_swap', detail: 'its receipt holds no Swapped event of this reference from our router' },
      })
      const response = await hintOf(testApp({ store, tracking: follower }), swap.swapEaziRef, { txHash: hash('other') })
      expect(response.status).toBe(422)
      const body = await readJson(response)
      expect(body).toMatchObject({ code: 'transaction_mismatch', reason: 'not_this_swap', field: 'txHash', chain: 'ETH' })
      expect(agentTextOffences(String(body['detail']))).toEqual([])
      expect(body['detail']).toBe(
        `Transaction ${hash('other')} on ETH is not the source of ${swap.swapEaziRef}: its receipt holds no Swapped event of this reference from our router. Send the hash of the transaction that transactionRequest became, on ETH.`,
      )
    })

    it('is 422 transaction_mismatch too for a transaction not mined yet, and says to send it again once it is', async () => {
      const swap = await keyedSwap({})
      const follower = tracking({
        follows: ['ETH'],
        hint: { ok: false, reason: 'transaction_not_found', detail: 'it is not mined on ETH (yet)' },
      })
      const response = await hintOf(testApp({ store, tracking: follower }), swap.swapEaziRef, { txHash: hash('early') })
      expect(response.status).toBe(422)
      const body = await readJson(response)
      expect(body).toMatchObject({ code: 'transaction_mismatch', reason: 'transaction_not_found' })
      expect(body['detail']).toContain('send the hint again once it is mined')
    })

    it('is 422 chain_not_tracked, with no Retry-After, when this service reads no RPC of the source chain', async () => {
      const swap = await keyedSwap({})
      for (const target of [app, testApp({ store, tracking: tracking({ follows: ['BAS'] }) })]) {
        const response = await hintOf(target, swap.swapEaziRef, { txHash: hash('x') })
        // Asking again cannot help: only the operator's configuration changes what this service reads.
        expect(response.status).toBe(422)
        expect(response.headers.get('retry-after')).toBeNull()
        const body = await readJson(response)
        expect(body).toMatchObject({ code: 'chain_not_tracked', chain: 'ETH', field: 'txHash' })
        expect(String(body['detail'])).toContain('sending the hint again here will not change that')
        expect(String(body['detail'])).toContain('block explorer')
        expect(agentTextOffences(String(body['detail']))).toEqual([])
      }
    })

    it('is 503 tracking_unavailable with Retry-After 5 while the tracker is still being built, saying so', async () => {
      const swap = await keyedSwap({})
      const starting = testApp({ store, tracking: deferredTracking({ chains: ['ETH'], current: () => undefined }) })
      const response = await hintOf(starting, swap.swapEaziRef, { txHash: hash('starting') })
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('5')
      const body = await readJson(response)
      expect(body).toMatchObject({ code: 'tracking_unavailable', chain: 'ETH' })
      expect(String(body['detail'])).toContain('its tracker is not ready')
      expect(agentTextOffences(String(body['detail']))).toEqual([])
    })

    it('is 503 tracking_unavailable with a short Retry-After when the RPC failed during the check (never "not mined")', async () => {
      const swap = await keyedSwap({})
      const down = testApp({
        store,
        tracking: tracking({
          follows: ['ETH'],
          hint: { ok: false, reason: 'rpc_unavailable', detail: "ETH's RPC could not be read just now" },
        }),
      })
      const response = await hintOf(down, swap.swapEaziRef, { txHash: hash('y') })
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('30')
      const body = await readJson(response)
      expect(body).toMatchObject({ code: 'tracking_unavailable', chain: 'ETH' })
      expect(String(body['detail'])).toContain('nothing was decided')
      expect(agentTextOffences(String(body['detail']))).toEqual([])
    })

    it('is 503 tracking_unavailable with Retry-After 5 when too many hints are being checked, saying so (not that the RPC failed)', async () => {
      const swap = await keyedSwap({})
      const busy = testApp({
        store,
        tracking: tracking({ follows: ['ETH'], hint: { ok: false, reason: 'busy', detail: 'too many hints are being checked at once' } }),
      })
      const response = await hintOf(busy, swap.swapEaziRef, { txHash: hash('z') })
      expect(response.status).toBe(503)
      expect(response.headers.get('retry-after')).toBe('5')
      const body = await readJson(response)
      expect(String(body['detail'])).toContain('Too many transaction hints are being checked')
      expect(String(body['detail'])).not.toContain('RPC')
    })

    it('refuses a hash that is not 32 bytes of hex (400 naming txHash), and an unknown reference (404)', async () => {
      const swap = await keyedSwap({})
      const follower = tracking({ follows: ['ETH'] })
      const target = testApp({ store, tracking: follower })
      for (const txHash of ['0x1234', `${hash('a')}00`, 'not hex', 42]) {
        const response = await hintOf(target, swap.swapEaziRef, { txHash })
        expect(response.status, String(txHash)).toBe(400)
        expect(await readJson(response)).toMatchObject({ code: 'invalid_request', errors: [{ field: 'txHash' }] })
      }
      expect((await hintOf(target, 'swp_01ARZ3NDEKTSV4RRFFQ69G5FAV', { txHash: hash('a') })).status).toBe(404)
      expect(follower.hints).toEqual([])
    })
  })
})
