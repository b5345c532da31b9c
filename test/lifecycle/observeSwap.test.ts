import { type Hex, keccak256, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { observeCompletedSwap } from '../../src/lifecycle/observeSwap.ts'
import { CorridorIntelligence } from '../../src/schemas/intelligence.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import type { LegPosition, LifecycleRecord } from '../../src/store/createStore.ts'
import type { Store } from '../../src/store/createStore.ts'
import { get, KEY_SECRET, NOW_MS, postJson, quoteBody, readJson, testApp, testDeps } from '../http/testApp.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'

// Issue 18 item 7: a tracked swap that reaches done (or failed) is a corridor observation at once, and after 20
// settled ones the corridor answers from them. Real lifecycle records, moved through the store as the tracker moves
// them; no chain is needed.

const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
const USDC_BAS = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const USDC_ARB = '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'
const CORRIDOR = { fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC' }

const hash = (label: string): Hex => keccak256(toHex(label))
const leg = (chain: string, label: string, blockNumber: bigint): LegPosition => ({
  chain,
  txHash: hash(label),
  blockNumber,
  blockHash: hash(`${label}:block`),
  logIndex: 0,
})
const at = (secondsAfterNow: number): Date => new Date(NOW_MS + secondsAfterNow * 1000)

describe.each(storeDrivers())('observeCompletedSwap on $name', (driver) => {
  let opened: OpenedStore
  let store: Store
  let app: ReturnType<typeof testApp>
  let deps: { store: Store; catalogue: ReturnType<typeof testDeps>['catalogue'] }
  beforeAll(async () => {
    opened = await driver.open()
    store = opened.store
    app = testApp({ store })
    deps = { store, catalogue: testDeps().catalogue }
  })
  afterAll(() => opened?.cleanup())

  async function buildSwap(fromAmount: string): Promise<SwapResult> {
    const quoted = await postJson(app, '/api/x402/quote', quoteBody({ ...CORRIDOR, fromAmount }))
    expect(quoted.status).toBe(200)
    const { quoteId } = await readJson<{ quoteId: string }>(quoted)
    const built = await postJson(app, '/api/v1/swap', { quoteId }, { 'x-swapeazi-key': KEY })
    expect(built.status, await built.clone().text()).toBe(200)
    return SwapResult.parse(await readJson(built))
  }

  /** Moves a built swap to pending at `minedSec` and to done/`substatus` at `deliveredSec`, as the tracker records them. */
  async function deliver(
    swap: SwapResult,
    parameters: { minedSec: number; deliveredSec: number; receivedAtomic: bigint; substatus?: 'completed' | 'partial' },
  ): Promise<LifecycleRecord> {
    const ref = swap.swapEaziRef
    const sent = { chain: 'BAS', token: USDC_BAS, amount: BigInt(swap.fromAmount.replace('.', '')) }
    expect(
      (
        await store.lifecycle.update(
          ref,
          { state: 'pending', legs: { source: leg('BAS', `${ref}:src`, 100n) }, sent, at: at(parameters.minedSec) },
          ['built'],
        )
      )?.updated,
    ).toBe(true)
    const done = await store.lifecycle.update(
      ref,
      {
        state: 'done',
        substatus: parameters.substatus ?? 'completed',
        legs: { destination: leg('ARB', `${ref}:dst`, 200n) },
        received: { chain: 'ARB', token: USDC_ARB, amount: parameters.receivedAtomic },
        at: at(parameters.deliveredSec),
      },
      ['pending'],
    )
    expect(done?.updated).toBe(true)
    if (done === undefined) throw new Error('unreachable')
    return done.record
  }

  async function corridor(): Promise<CorridorIntelligence> {
    const response = await get(app, '/api/v1/intelligence/corridor/BAS-ARB')
    expect(response.status).toBe(200)
    return CorridorIntelligence.parse(await readJson(response))
  }

  it('records the real duration (source block to delivery block), the slippage against the quote and the outcome', async () => {
    const swap = await buildSwap('1000')
    const quotedAtomic = BigInt(Math.round(Number(swap.toAmount) * 1e6))
    const record = await deliver(swap, { minedSec: 60, deliveredSec: 600, receivedAtomic: quotedAtomic - quotedAtomic / 1000n })
    // Block times from the chains: source block at NOW+30 s, delivery block at NOW+95 s.
    const blockTimeSec = async (chain: string, blockNumber: bigint): Promise<number> =>
      NOW_MS / 1000 + (chain === 'BAS' && blockNumber === 100n ? 30 : 95)
    const observed = await observeCompletedSwap({ ...deps, blockTimeSec }, record)
    expect(observed).toMatchObject({
      ok: true,
      swapStatus: 'done',
      observation: {
        id: swap.swapEaziRef,
        fromChain: 'BAS',
        toChain: 'ARB',
        bridge: swap.route.bridge,
        amount: '1000',
        status: 'DONE',
        substatus: 'COMPLETED',
        settledDurationSec: 65,
        realisedSlippageBps: 10,
        source: 'tracker',
      },
    })
    // Once: a swap completes once.
    expect(await observeCompletedSwap(deps, record)).toEqual({ ok: false, reason: 'not_pending', status: 'done' })
  })

  it('falls back to the transitions when no block time can be read, and records failed swaps with their reason', async () => {
    const swap = await buildSwap('250')
    const record = await deliver(swap, { minedSec: 10, deliveredSec: 130, receivedAtomic: 1n, substatus: 'partial' })
    const observed = await observeCompletedSwap({ ...deps, blockTimeSec: () => Promise.reject(new Error('rpc down')) }, record)
    expect(observed).toMatchObject({
      ok: true,
      observation: { status: 'DONE', substatus: 'PARTIAL', settledDurationSec: 120, realisedSlippageBps: null },
    })

    const reverted = await buildSwap('300')
    const failed = await store.lifecycle.update(
      reverted.swapEaziRef,
      { state: 'failed', reason: 'source transaction reverted: InsufficientOutput', legs: { source: leg('BAS', 'rev', 5n) }, at: at(30) },
      ['built'],
    )
    if (failed === undefined) throw new Error('not recorded')
    expect(await observeCompletedSwap(deps, failed.record)).toMatchObject({
      ok: true,
      swapStatus: 'failed',
      observation: { status: 'FAILED', substatus: 'SLIPPAGE_EXCEEDED', failureReason: 'source transaction reverted: InsufficientOutput' },
    })
  })

  it('makes nothing of an expired swap: it was never mined', async () => {
    const swap = await buildSwap('120')
    const expired = await store.lifecycle.update(swap.swapEaziRef, { state: 'expired', reason: 'deadline passed', at: at(700) }, ['built'])
    if (expired === undefined) throw new Error('not recorded')
    expect(await observeCompletedSwap(deps, expired.record)).toBeUndefined()
    // Not completed by intelligence: the lifecycle store marks an expired swap's record not_found itself.
    expect((await store.getSwap(swap.swapEaziRef))?.status).toBe('not_found')
  })

  it('turns the corridor to basis "observed" once 20 tracked swaps have settled, and not before', async () => {
    // The tests above settled 3 on BAS-ARB: a completed, a partial and a failed one (settled: it ended); not the expired.
    const settledBefore = (await corridor()).sampleSize
    expect(settledBefore).toBe(3)
    const bridges = new Set<string>()
    for (let k = settledBefore; k < 19; k += 1) {
      const swap = await buildSwap(String(100 + k))
      bridges.add(swap.route.bridge)
      await observeCompletedSwap(
        deps,
        await deliver(swap, { minedSec: 5, deliveredSec: 5 + 60 + k, receivedAtomic: BigInt(99 + k) * 1_000_000n }),
      )
    }
    const nineteen = await corridor()
    expect(nineteen).toMatchObject({ basis: 'published_priors', sampleSize: 19 })

    const last = await buildSwap('500')
    await observeCompletedSwap(deps, await deliver(last, { minedSec: 5, deliveredSec: 95, receivedAtomic: 498_000_000n }))
    const twenty = await corridor()
    expect(twenty).toMatchObject({ basis: 'observed', sampleSize: 20, minSampleSize: 20 })
    bridges.add(last.route.bridge)
    // Ranked over what happened: one of the bridges the tracked swaps went through.
    expect([...bridges]).toContain(twenty.recommendedBridge)
  })
})
