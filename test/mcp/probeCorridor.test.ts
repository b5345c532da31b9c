import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lazyMemoryStore, testApp } from '../http/testApp.ts'
import { type ConnectedClient, callTool, connectToApp, textOf } from './mcpHarness.ts'

// What probe_corridor says about a pair when only the amount is wrong, and in which form it names bridges.
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

const probe = async (args: Record<string, string>): Promise<{ structured: Record<string, unknown>; text: string }> => {
  const result = await callTool(connected.client, 'probe_corridor', args)
  expect(result.isError).not.toBe(true)
  return { structured: result.structuredContent as Record<string, unknown>, text: textOf(result) }
}

const usdcBasPol = { fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'USDC' }
const usdcZarp = { fromChain: 'POL', toChain: 'POL', fromToken: 'USDC', toToken: 'ZARP' }
const WIRE_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/

describe('probe_corridor', () => {
  it('says an amount with too many decimals is the problem, with the decimals and a valid amount, not that the pair is not served', async () => {
    const { structured, text } = await probe({ ...usdcBasPol, amount: '1.1234567' })
    expect(structured).toMatchObject({
      supported: false,
      reason: 'invalid_request',
      detail: 'amount has more fraction digits than USDC on BAS has decimals (6); send at most 6, for example "1.123456".',
      viableRange: { min: '1.005026', max: '10000000', token: 'USDC' },
      sample: { fromAmount: '1.123456' },
      nearest: [],
    })
    expect(text).toMatch(
      /^USDC@BAS->USDC@POL: 1\.1234567 is not a valid amount \(invalid_request\): .* The pair is served: 1\.123456 USDC gives /,
    )
    expect(text).not.toMatch(/not served|Nearest served/)
  })

  it.each([
    ['0', 'amount must be greater than 0. The pair takes "1000", for example.'],
    [`1${'0'.repeat(78)}`, 'amount is more than a uint256 can hold in atomic units of USDC'],
    [`1${'0'.repeat(70)}.1234567`, 'amount USDC on BAS has 6 decimals; send at most 6 fraction digits.'],
  ])('says what is wrong with the amount %s, in the service words, with an amount the pair takes and its range', async (amount, says) => {
    const { structured, text } = await probe({ ...usdcBasPol, amount })
    expect(structured).toMatchObject({
      supported: false,
      reason: 'invalid_request',
      viableRange: { min: '1.005026', max: '10000000', token: 'USDC' },
      sample: { fromAmount: '1000' },
      nearest: [],
    })
    expect(structured['detail']).toContain(says)
    expect(structured['detail']).toMatch(/The pair takes "1000", for example\.$/)
    expect(structured['detail']).not.toContain('fromAmount')
    expect(text).toMatch(/ is not a valid amount \(invalid_request\): amount .* The pair is served: 1000 USDC gives 995 USDC /)
  })

  it('reads chain codes in any case, as the quote does', async () => {
    const lower = await probe({ ...usdcBasPol, fromChain: 'bas', toChain: 'pol' })
    const upper = await probe(usdcBasPol)
    expect(lower.structured['supported']).toBe(true)
    expect(lower.structured['viableRange']).toEqual(upper.structured['viableRange'])
    expect(lower.text).toMatch(/^USDC@BAS->USDC@POL is served/)
    // Tokens in any case too, named as the service names them.
    const zarp = await probe({ fromChain: 'pol', toChain: 'pol', fromToken: 'usdc', toToken: 'zarp' })
    expect(zarp.structured['pair']).toBe('USDC@POL->ZARP@POL')
  })

  it('names bridges as the quote does, and gives the range for a pair the corridor listing does not carry', async () => {
    const { structured } = await probe(usdcBasPol)
    const sample = structured['sample'] as { bridge: string }
    expect(structured['bridges']).toEqual([sample.bridge])
    expect(structured['viableRange']).toEqual({ min: '1.005026', max: '10000000', token: 'USDC' })
    const gnosis = await probe({ fromChain: 'BAS', toChain: 'GNO', fromToken: 'USDC', toToken: 'EURe' })
    const bridges = gnosis.structured['bridges'] as string[]
    expect(bridges.length).toBeGreaterThan(0)
    for (const bridge of bridges) expect(bridge).toMatch(WIRE_NAME)
    expect(bridges).toContain((gnosis.structured['sample'] as { bridge: string }).bridge)
  })

  it('points an amount out of range to the range, with a quote inside it, and never offers the corridor as its own alternative', async () => {
    const { structured, text } = await probe({ ...usdcZarp, amount: '1000000' })
    expect(structured).toMatchObject({
      supported: false,
      reason: 'amount_out_of_range',
      viableRange: { min: '0.000002', max: '4522.613136', token: 'USDC' },
      sample: { fromAmount: '4522.613136', bridge: 'none' },
      nearest: [],
    })
    expect(text).toMatch(
      /^USDC@POL->ZARP@POL does not take 1000000 \(amount_out_of_range\): .*Send between 0\.000002 and 4522\.613136 USDC\. For example, 4522\.613136 USDC gives /,
    )
    expect(text).not.toContain('Nearest served')
  })

  it('takes typicalDurationSec from the same place for every answer: the route of the sample quote', async () => {
    for (const args of [usdcBasPol, { ...usdcBasPol, amount: '0.5' }, usdcZarp, { ...usdcZarp, amount: '1000000' }]) {
      const { structured } = await probe(args)
      const sample = structured['sample'] as { fromAmount: string } | null
      expect(sample, JSON.stringify(args)).not.toBeNull()
      const { amount: _tested, ...pair } = { amount: '', ...args }
      const quote = await callTool(connected.client, 'get_quote', {
        ...pair,
        fromAmount: sample?.fromAmount,
        fromAddress: '0x0000000000000000000000000000000000000001',
      })
      const estimated = (quote.structuredContent as { quote: { estimatedDuration: number } }).quote.estimatedDuration
      expect(structured['typicalDurationSec'], JSON.stringify(args)).toBe(estimated)
    }
  })
})
