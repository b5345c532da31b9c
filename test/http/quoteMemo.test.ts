// The quote memo seen from outside: identical requests within a second get exactly what a fresh computation gives,
// each with its own request id; a new second gets a new quote; failures are never remembered.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { QuoteResult } from '../../src/schemas/quote.ts'
import { verifyQuoteId } from '../../src/service/quoteToken.ts'
import { createApp } from '../../src/http/createApp.ts'
import { NOW_MS, QUOTE_SECRET, postJson, postRaw, quoteBody, testApp, testDeps } from './testApp.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe('identical quote requests within one second', () => {
  it('answer byte for byte what an app that never saw the request computes, each response with its own request id', async () => {
    const app = testApp()
    const cases = [{}, { fromChain: 'BAS', toChain: 'POL' }, { fromToken: 'RLUSD', toToken: 'USDD' }]
    for (const overrides of cases) {
      const texts: string[] = []
      const ids = new Set<string>()
      for (const path of ['/api/x402/quote', '/api/mpp/quote', '/api/x402/quote']) {
        const response = await postJson(app, path, quoteBody(overrides))
        expect(response.status).toBe(200)
        expect(response.headers.get('content-type')).toBe('application/json')
        ids.add(response.headers.get('x-request-id') ?? '')
        texts.push(await response.text())
      }
      const fresh = await (await postJson(testApp(), '/api/x402/quote', quoteBody(overrides))).text()
      expect(texts).toEqual([fresh, fresh, fresh])
      expect([...ids].every((id) => UUID.test(id))).toBe(true)
      expect(ids.size).toBe(3)
    }
  })

  it('on the keyed ranked quote too: byte for byte what a fresh app computes, and counted against the key each time', async () => {
    const app = testApp()
    const texts: string[] = []
    const remaining: string[] = []
    for (let k = 0; k < 3; k++) {
      const response = await postJson(app, '/api/v1/quote', quoteBody({ fromChain: 'BAS', toChain: 'POL' }))
      expect(response.status).toBe(200)
      remaining.push(response.headers.get('ratelimit') ?? '')
      texts.push(await response.text())
    }
    const fresh = await (await postJson(testApp(), '/api/v1/quote', quoteBody({ fromChain: 'BAS', toChain: 'POL' }))).text()
    expect(texts).toEqual([fresh, fresh, fresh])
    expect(new Set(remaining).size).toBe(3)
  })

  it('are told apart by their text: another amount, slippage or recipient is another quote', async () => {
    const app = testApp()
    const answer = async (overrides: Record<string, unknown>): Promise<QuoteResult> =>
      JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody(overrides))).text()) as QuoteResult
    const base = await answer({})
    expect((await answer({ fromAmount: '1000.5' })).fromAmount).toBe('1000.5')
    expect((await answer({ slippage: 0.01 })).toAmountMin).not.toBe(base.toAmountMin)
    const other = await answer({ toAddress: '0x3333333333333333333333333333333333333333' })
    expect(other.quoteId).not.toBe(base.quoteId)
    const claims = verifyQuoteId(QUOTE_SECRET, other.quoteId, NOW_MS)
    expect(claims.ok && claims.claims.toAddress).toBe('0x3333333333333333333333333333333333333333')
  })
})

describe('the memo is what answers', () => {
  it('repeats the first answer for the rest of its second even when a recomputation would differ, then recomputes', async () => {
    // The memo's premise is an unchanged market; changing the catalogue in place, under the memo's eyes, makes a
    // recomputation visible.
    let now = NOW_MS
    const deps = testDeps({ clock: () => now, catalogue: { ...testDeps().catalogue, pricing: { ...testDeps().catalogue.pricing } } })
    const app = createApp(deps)
    const first = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    ;(deps.catalogue.pricing as { quoteTtlSec: number }).quoteTtlSec = 120
    const sameSecond = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    now += 1_000
    const next = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    expect(Date.parse(first.expiresAt) - NOW_MS).toBe(60_000)
    expect(sameSecond).toEqual(first)
    expect(Date.parse(next.expiresAt) - now).toBe(120_000)
  })

  it('recomputes within the second when the market is replaced (the live market after a refresh)', async () => {
    const deps = testDeps()
    const app = createApp(deps)
    const first = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    deps.catalogue = { ...deps.catalogue, pricing: { ...deps.catalogue.pricing, quoteTtlSec: 120 } }
    const replaced = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    expect(Date.parse(first.expiresAt) - NOW_MS).toBe(60_000)
    expect(Date.parse(replaced.expiresAt) - NOW_MS).toBe(120_000)
  })
})

describe('a new second', () => {
  it('gets a quote signed in that second, never the answer from the second before', async () => {
    let now = NOW_MS
    const app = testApp({ clock: () => now })
    const first = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    now += 999
    const sameSecond = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    now += 1
    const next = JSON.parse(await (await postJson(app, '/api/x402/quote', quoteBody())).text()) as QuoteResult
    expect(sameSecond).toEqual(first)
    expect(Date.parse(next.expiresAt) - Date.parse(first.expiresAt)).toBe(1_000)
    expect(next.quoteId).not.toBe(first.quoteId)
    const verified = verifyQuoteId(QUOTE_SECRET, next.quoteId, now)
    expect(verified.ok && verified.claims.exp).toBe(Date.parse(next.expiresAt) / 1000)
  })
})

describe('failures are not remembered', () => {
  it('answers each identical bad or unservable request afresh, with its own request id in the problem', async () => {
    const app = testApp()
    const bad = [
      () => postRaw(app, '/api/x402/quote', '{"fromChain":'),
      () => postJson(app, '/api/x402/quote', quoteBody({ fromAmount: '1e3' })),
      () => postJson(app, '/api/x402/quote', quoteBody({ fromAmount: '0.000001' })),
      () => postRaw(app, '/api/x402/quote', JSON.stringify(quoteBody()), 'text/plain'),
    ]
    for (const send of bad) {
      const first = await send()
      const second = await send()
      expect(first.status).toBeGreaterThanOrEqual(400)
      expect(second.status).toBe(first.status)
      const [a, b] = [
        (await first.json()) as { code: string; requestId: string },
        (await second.json()) as { code: string; requestId: string },
      ]
      expect(b.code).toBe(a.code)
      expect(a.requestId).toBe(first.headers.get('x-request-id'))
      expect(b.requestId).toBe(second.headers.get('x-request-id'))
      expect(b.requestId).not.toBe(a.requestId)
    }
  })

  it('then answers the same text once it is sent as JSON: a refused content type left nothing behind', async () => {
    const app = testApp()
    const text = JSON.stringify(quoteBody())
    expect((await postRaw(app, '/api/x402/quote', text, 'text/plain')).status).toBe(415)
    const ok = await postRaw(app, '/api/x402/quote', text)
    expect(ok.status).toBe(200)
    expect((JSON.parse(await ok.text()) as QuoteResult).toAmount).toBe('995')
  })
})

describe('the memo never changes an answer (property)', () => {
  const chains = ['ETH', 'POL', 'ARB', 'OPT', 'BAS', 'BNB', 'GNO', 'CEL'] as const
  const tokens = ['USDC', 'USDT', 'EURe', 'EURC', 'DAI', 'GBPe', 'cKES', 'PYUSD'] as const
  // Pairs that route (two of them refuse large amounts with 422), and any pair of chains and tokens at all.
  type Pair = [string, string, string, string]
  const routed = fc.constantFrom<Pair>(
    ['ETH', 'ETH', 'USDC', 'USDT'],
    ['BAS', 'POL', 'USDC', 'USDC'],
    ['ARB', 'OPT', 'USDC', 'USDC'],
    ['ETH', 'ARB', 'USDC', 'USDC'],
    ['BAS', 'BAS', 'USDC', 'EURC'],
    ['ETH', 'GNO', 'USDC', 'EURe'],
    ['POL', 'ARB', 'USDT', 'USDC'],
    ['BNB', 'BAS', 'USDT', 'USDC'],
  )
  const anyPair = fc
    .tuple(fc.constantFrom(...chains), fc.constantFrom(...chains), fc.constantFrom(...tokens), fc.constantFrom(...tokens))
    .map((pair): Pair => [...pair])
  const request = fc
    .record({
      pair: fc.oneof({ arbitrary: routed, weight: 3 }, { arbitrary: anyPair, weight: 1 }),
      fromAmount: fc
        .tuple(fc.integer({ min: 0, max: 200_000 }), fc.integer({ min: 0, max: 999_999 }))
        .map(([whole, fraction]) => `${whole}.${String(fraction).padStart(6, '0')}`),
      slippage: fc.constantFrom(0, 0.001, 0.005, 0.1),
    })
    .map(({ pair: [fromChain, toChain, fromToken, toToken], ...rest }) => ({ fromChain, toChain, fromToken, toToken, ...rest }))

  it('a second identical request answers what a fresh app computes: the same status, and the same text when it is a 200', async () => {
    const app = testApp()
    let quotes = 0
    await fc.assert(
      fc.asyncProperty(request, async (overrides) => {
        const first = await postJson(app, '/api/x402/quote', quoteBody(overrides))
        const again = await postJson(app, '/api/x402/quote', quoteBody(overrides))
        const fresh = await postJson(testApp(), '/api/x402/quote', quoteBody(overrides))
        const [firstText, againText, freshText] = await Promise.all([first.text(), again.text(), fresh.text()])
        expect([first.status, again.status]).toEqual([fresh.status, fresh.status])
        if (fresh.status === 200) expect([firstText, againText]).toEqual([freshText, freshText])
        if (fresh.status === 200 && freshText.includes('"quoteId"')) quotes += 1
        else expect((JSON.parse(againText) as { code: string }).code).toBe((JSON.parse(freshText) as { code: string }).code)
      }),
      { numRuns: 150 },
    )
    // Not only refusals: a good share of the runs were real quotes the memo answered.
    expect(quotes).toBeGreaterThan(50)
  })
})
