import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lazyMemoryStore, quoteBody, testApp } from '../http/testApp.ts'
import { type ConnectedClient, callTool, connectToApp, textOf } from './mcpHarness.ts'

// A cell the catalogue advertises but does not serve: every tool an agent would ask says so, and why, with figures.
const store = lazyMemoryStore()
const app = testApp({ store })
let connected: ConnectedClient

beforeAll(async () => {
  connected = await connectToApp(app, store)
})
afterAll(async () => {
  await connected.close()
  await store.sql.close()
})

describe('a corridor cell not served (USDC on ARB to cKES on CEL)', () => {
  const args = quoteBody({ fromChain: 'ARB', toChain: 'CEL', toToken: 'cKES' })

  it('probe_corridor says it is not served, why, and at what cost against the fee', async () => {
    const result = await callTool(connected.client, 'probe_corridor', {
      fromChain: 'ARB',
      toChain: 'CEL',
      fromToken: 'USDC',
      toToken: 'cKES',
      amount: '1000',
    })
    expect(result.isError).not.toBe(true)
    // The quote's code, as the output schema lists it; the cause leads the detail.
    expect(result.structuredContent).toMatchObject({
      supported: false,
      reason: 'no_route_found',
      detail: expect.stringMatching(/^cost_exceeds_fee: /),
    })
    expect(textOf(result)).toMatch(
      /is not served at 1000: no_route_found \(cost_exceeds_fee: USDC on ARB to cKES on CEL costs about \d+ bps .* 50 bps/,
    )
  })

  it('get_quote answers supported: false with the same why', async () => {
    const result = await callTool(connected.client, 'get_quote', args)
    expect(result.structuredContent).toMatchObject({ supported: false, notServed: { reason: 'cost_exceeds_fee', feeBps: 50 } })
    expect(textOf(result)).toMatch(/does not sell at a loss/)
  })
})

describe('the capability manifest and discover_routes', () => {
  it('keep the row as advertised and name the chain where it is not served, and why', async () => {
    const result = await callTool(connected.client, 'discover_routes', { token: 'cKES' })
    const corridors = (
      result.structuredContent as { corridors: { from: string; to: string; notServedOn?: { chain: string; reason: string }[] }[] }
    ).corridors
    const row = corridors.find((c) => c.from === 'USDC' && c.to === 'cKES')
    expect(row?.notServedOn).toEqual([expect.objectContaining({ chain: 'CEL', reason: 'cost_exceeds_fee' })])
    expect(textOf(result)).toMatch(/USDC→cKES \(CEL\), not served on CEL: .*does not sell at a loss/)
    // Served rows carry no such field.
    for (const corridor of corridors) if (corridor !== row) expect(corridor.notServedOn).toBeUndefined()
  })
})
