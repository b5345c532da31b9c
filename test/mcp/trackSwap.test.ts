import { type Hex, keccak256, toHex } from 'viem'
import { pino } from 'pino'
import * as z from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { trackSwap } from '../../src/mcp/tools/trackSwap.ts'
import { createToolContext } from '../../src/mcp/toolContext.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { SwapStatusWire } from '../../src/schemas/swapStatus.ts'
import type { LegPosition } from '../../src/store/createStore.ts'
import { agentTextOffences } from '../support/agentText.ts'
import { KEY_SECRET, lazyMemoryStore, NOW_MS, postJson, quoteBody, readJson, testApp } from '../http/testApp.ts'
import { type ConnectedClient, callTool, connectInMemory, connectToApp, inProcessClient, LEAK_PATTERNS, textOf } from './mcpHarness.ts'

// Issue 18 item 6: track_swap answers the status of GET /api/v1/swap/{ref}/status in words a user can be told, with
// the status as structured content; through a real SDK Client, over lifecycles the store records as the tracker does.

const store = lazyMemoryStore()
const app = testApp({
  store,
  tracking: { follows: (chain) => chain === 'BAS' || chain === 'ARB', hintSourceTransaction: async () => ({ ok: true, isFinal: true }) },
})
let connected: ConnectedClient

beforeAll(async () => {
  connected = await connectToApp(app, store, 1_000_000n)
})
afterAll(async () => {
  await connected.close()
  await store.sql.close()
})

const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
const hash = (label: string): Hex => keccak256(toHex(label))
const leg = (chain: string, label: string, blockNumber: bigint): LegPosition => ({
  chain,
  txHash: hash(label),
  blockNumber,
  blockHash: hash(`${label}:block`),
  logIndex: 0,
})

async function buildSwap(overrides: Record<string, unknown>): Promise<SwapResult> {
  const quoted = await postJson(app, '/api/x402/quote', quoteBody(overrides))
  const { quoteId } = await readJson<{ quoteId: string }>(quoted)
  const built = await postJson(app, '/api/v1/swap', { quoteId }, { 'x-swapeazi-key': KEY })
  expect(built.status, await built.clone().text()).toBe(200)
  return SwapResult.parse(await readJson(built))
}

async function track(ref: string): Promise<{ text: string; status: SwapStatusWire }> {
  const result = await callTool(connected.client, 'track_swap', { ref })
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
  const text = textOf(result)
  expect(agentTextOffences(text)).toEqual([])
  for (const leak of LEAK_PATTERNS) expect(text).not.toMatch(leak)
  // The client checked structuredContent against the announced output schema; this checks it strictly, too.
  expect(() => z.strictObject(trackSwap.outputSchema).parse(result.structuredContent)).not.toThrow()
  return { text, status: SwapStatusWire.parse(result.structuredContent) }
}

describe('track_swap', () => {
  it('is listed read-only with its input pattern and output schema', async () => {
    const { tools } = await connected.client.listTools()
    const tool = tools.find((each) => each.name === 'track_swap')
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true })
    const properties = (tool?.inputSchema.properties ?? {}) as Record<string, { pattern?: string }>
    expect(properties['ref']?.pattern).toBe('^(swp|dsb)_[0-9A-Z]{26}$')
    expect(Object.keys(tool?.outputSchema?.properties ?? {})).toEqual(['ref', 'kind', 'state', 'substatus', 'reason', 'orders', 'next'])
  })

  it('tells a built swap to be signed before its deadline, then where the money is as it moves, then that it arrived', async () => {
    const swap = await buildSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '1000' })
    const ref = swap.swapEaziRef

    const built = await track(ref)
    expect(built.status).toMatchObject({ ref, state: 'built', next: { action: 'sign_and_broadcast', deadline: swap.deadline } })
    expect(built.text).toBe(
      `Swap ${ref} is built. Nothing has moved yet: the money is still in the sender's wallet. Next: Sign and broadcast the transactionRequest before ${swap.deadline} (approve the token first if the approval says so); after that the router refuses it and nothing moves.`,
    )

    const sent = { chain: 'BAS', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount: 1_000_000_000n }
    await store.lifecycle.update(ref, { state: 'pending', legs: { source: leg('BAS', 'src', 11n) }, sent, at: new Date(NOW_MS + 30_000) }, [
      'built',
    ])
    const pending = await track(ref)
    expect(pending.text).toBe(
      `Swap ${ref} is pending. 1000 USDC on BAS left the sender (source transaction https://basescan.org/tx/${hash('src')}) and is on its way to ARB. Next: The source transaction is mined and the money is on its way to ARB; nothing to do but wait. Check again in 15 s.`,
    )

    const received = { chain: 'ARB', token: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', amount: 995_500_000n }
    await store.lifecycle.update(
      ref,
      { state: 'done', substatus: 'completed', legs: { destination: leg('ARB', 'dst', 22n) }, received, at: new Date(NOW_MS + 120_000) },
      ['pending'],
    )
    const done = await track(ref)
    expect(done.status.orders[0]?.legs.map((l) => l.role)).toEqual(['source', 'destination'])
    expect(done.text).toBe(
      `Swap ${ref} is done (completed). The recipient got 995.5 USDC on ARB (destination transaction https://arbiscan.io/tx/${hash('dst')}). Next: Delivered: the recipient got 995.5 USDC on ARB. Nothing more to do.`,
    )
  })

  it('does not say the money is untouched when no tracker follows the source chain, before or after the deadline', async () => {
    // ETH is not followed here: a transaction broadcast and mined leaves this status built, so "nothing has moved"
    // would tell an agent that already sent it to build again, and pay twice.
    const swap = await buildSwap({ fromChain: 'ETH', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '1000' })
    const ref = swap.swapEaziRef
    const unknown = `Swap ${ref} is built. No tracker is known to follow this order on ETH, so this status cannot show whether its transaction was sent: the money is still in the sender's wallet only if it was never broadcast (the next step says where to look before building again).`
    const before = await track(ref)
    expect(before.status.orders[0]?.isTracked).toBe(false)
    expect(before.text.startsWith(`${unknown} Next: Sign and broadcast`)).toBe(true)

    const late = await connectInMemory(
      createToolContext({
        client: inProcessClient(
          testApp({
            store,
            clock: () => NOW_MS + 11 * 60_000,
            tracking: { follows: () => false, hintSourceTransaction: async () => ({ ok: true, isFinal: true }) },
          }),
        ),
        settings: { dailyBudgetAtomic: 1_000_000n },
        budget: store.budget,
        clock: Date.now,
        log: pino({ level: 'silent' }),
      }),
    )
    try {
      const result = await callTool(late.client, 'track_swap', { ref })
      const text = textOf(result)
      expect(text).not.toContain('Nothing has moved yet')
      expect(text.startsWith(`${unknown} Next: The deadline (${swap.deadline}) has passed.`)).toBe(true)
      expect(text).toContain('cannot show whether the transaction ran')
    } finally {
      await late.close()
    }
  })

  it('says which token arrived on a partial delivery, and what the user can do', async () => {
    const swap = await buildSwap({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDT', fromAmount: '300' })
    await store.lifecycle.update(swap.swapEaziRef, { state: 'pending', legs: { source: leg('BAS', 'p', 3n) }, at: new Date(NOW_MS) }, [
      'built',
    ])
    const received = { chain: 'ARB', token: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', amount: 298_000_000n }
    await store.lifecycle.update(swap.swapEaziRef, { state: 'done', substatus: 'partial', received, at: new Date(NOW_MS) }, ['pending'])
    const { text, status } = await track(swap.swapEaziRef)
    expect(status).toMatchObject({ state: 'done', substatus: 'partial', next: { action: 'use_delivered_token' } })
    expect(text).toContain('The recipient got 298 USDC on ARB instead of the token asked for')
    expect(text).toContain('keep it, or swap it to USDT with a new quote')
  })

  it('tells a batch recipient by recipient', async () => {
    const built = await postJson(
      app,
      '/api/v1/batch/disburse',
      {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: '0x1111111111111111111111111111111111111111',
        recipients: [
          { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', toChain: 'BAS', toToken: 'USDC', amount: '100' },
          { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', toChain: 'ARB', toToken: 'USDC', amount: '200' },
        ],
      },
      { 'x-swapeazi-key': KEY },
    )
    expect(built.status, await built.clone().text()).toBe(200)
    const { disbursementRef: ref } = DisbursementResult.parse(await readJson(built))
    await store.lifecycle.update(`${ref}.1`, { state: 'pending', legs: { source: leg('BAS', 'batch', 5n) }, at: new Date(NOW_MS) }, [
      'built',
    ])
    const { text, status } = await track(ref)
    expect(status).toMatchObject({ ref, kind: 'batch', state: 'pending' })
    expect(text).toMatch(
      new RegExp(`^Batch ${ref} \\(2 recipients\\) is pending\\. ${ref}\\.0: done \\(completed\\)\\. The recipient got 99\\.5 USDC on BAS`),
    )
    expect(text).toContain(
      `${ref}.1: pending. The money left the sender (source transaction https://basescan.org/tx/${hash('batch')}) and is on its way to ARB.`,
    )
    expect(text).toMatch(/Next: Recipient dsb_\w+\.1: The source transaction is mined/)
  })
})
