import { beforeAll, describe, expect, it } from 'vitest'
import { RankedQuote } from '../../src/schemas/quote.ts'
import { verifyQuoteId } from '../../src/service/quoteToken.ts'
import { NOW_MS, QUOTE_SECRET, microUsd, postJson, quoteBody, readJson, testApp } from './testApp.ts'

const app = testApp()
const BAS_TO_POL = { fromChain: 'BAS', toChain: 'POL', toToken: 'USDC', fromAmount: '1000' }

type Entry = RankedQuote['routes'][number]

/** DESIGN 4: what CHEAPEST minimises, the route's real cost plus the signer's source-chain gas, in micro-USD. */

describe('POST /api/v1/quote, BAS USDC -> POL USDC 1000', () => {
  let response: Response
  let body: RankedQuote
  let byRanking: Record<Entry['ranking'], Entry>

  beforeAll(async () => {
    response = await postJson(app, '/api/v1/quote', quoteBody(BAS_TO_POL))
    body = await readJson<RankedQuote>(response.clone())
    byRanking = Object.fromEntries(body.routes.map((entry) => [entry.ranking, entry])) as Record<Entry['ranking'], Entry>
  })

  it('answers 200 JSON that parses as RankedQuote', () => {
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const parsed = RankedQuote.safeParse(body)
    expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true)
  })

  it('has three routes ranked FASTEST, BALANCED, CHEAPEST in that order', () => {
    expect(body.routes.map((entry) => entry.ranking)).toEqual(['FASTEST', 'BALANCED', 'CHEAPEST'])
    expect(body.viableRoutes).toBeGreaterThanOrEqual(1)
    expect(body.candidateRoutes).toBeGreaterThanOrEqual(body.viableRoutes)
  })

  it('gives each route a full quote with its own verifying quoteId bound to that route', () => {
    // One quoteId per distinct route: a route that wins two rankings is the same quote twice.
    const ids = body.routes.map((entry) => entry.quoteId)
    expect(new Set(ids).size).toBe(new Set(body.routes.map((entry) => entry.route.id)).size)
    for (const entry of body.routes) {
      expect(entry).toMatchObject({ fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'USDC', fromAmount: '1000' })
      expect(entry.bridge).not.toBe('none')
      const verified = verifyQuoteId(QUOTE_SECRET, entry.quoteId, NOW_MS)
      expect(verified.ok && verified.claims.routeId, entry.ranking).toBe(entry.route.id)
    }
  })

  it('offers different routes where the rankings differ: here Across is both fastest and cheapest for the user', () => {
    expect(new Set(body.routes.map((entry) => entry.route.id)).size).toBe(2)
    expect(byRanking.CHEAPEST.route.id).toBe(byRanking.FASTEST.route.id)
    expect(byRanking.BALANCED.route.id).not.toBe(byRanking.FASTEST.route.id)
  })

  it('promises the same toAmount and toAmountMin on every route (the fee is all-in)', () => {
    for (const entry of body.routes) {
      expect(entry.toAmount).toBe('995')
      expect(entry.toAmountMin).toBe('990.025')
      expect(entry.fee).toEqual({ token: 'USDC', amount: '5', bps: 50 })
    }
  })

  it('FASTEST has the least p50 duration', () => {
    for (const entry of body.routes) expect(byRanking.FASTEST.estimatedDuration).toBeLessThanOrEqual(entry.estimatedDuration)
    expect(byRanking.FASTEST.estimatedDuration).toBeLessThan(byRanking.BALANCED.estimatedDuration)
  })

  // toAmount is the same on every route, so what differs for the user is what they pay on top: source gas and fees.
  it('CHEAPEST asks the least of the user: source gas and fees (compared as exact micro-USD)', () => {
    const cheapest = microUsd(byRanking.CHEAPEST.estimatedGasUSD)
    for (const entry of body.routes) expect(cheapest).toBeLessThanOrEqual(microUsd(entry.estimatedGasUSD))
    expect(cheapest).toBeLessThan(microUsd(byRanking.BALANCED.estimatedGasUSD))
  })

  it('reports each route as its own duration and cost, consistent inside the quote', () => {
    for (const entry of body.routes) {
      expect(entry.route.estimatedDurationP95).toBeGreaterThanOrEqual(entry.estimatedDuration)
      expect(entry.route.steps.some((step) => step.type === 'bridge')).toBe(entry.bridge !== 'none')
      const itemsMicroUsd = entry.route.realCost.items.reduce((sum, item) => sum + microUsd(item.usd), 0n)
      // Each item is rounded up to 6 places, so the sum is within one micro-dollar per item of the total.
      const slack = BigInt(entry.route.realCost.items.length)
      expect(itemsMicroUsd - microUsd(entry.route.realCost.usd)).toBeGreaterThanOrEqual(-slack)
      expect(itemsMicroUsd - microUsd(entry.route.realCost.usd)).toBeLessThanOrEqual(slack)
    }
  })

  it('gives the free quote the BALANCED route (DESIGN 4)', async () => {
    const free = await readJson<Record<string, unknown>>(await postJson(app, '/api/x402/quote', quoteBody(BAS_TO_POL)))
    const { ranking: _ranking, ...balanced } = byRanking.BALANCED
    expect(free).toEqual(balanced)
  })
})

describe('POST /api/v1/quote errors', () => {
  it('answers a too-small amount with 422 amount_out_of_range, like the free quote', async () => {
    const response = await postJson(app, '/api/v1/quote', quoteBody({ ...BAS_TO_POL, toChain: 'ETH', fromAmount: '0.5' }))
    expect(response.status).toBe(422)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(await readJson(response)).toMatchObject({ code: 'amount_out_of_range', viableRange: { token: 'USDC' } })
  })

  it('answers a bad body with 400 listing the field', async () => {
    const response = await postJson(app, '/api/v1/quote', quoteBody({ fromAmount: 1000 }))
    expect(response.status).toBe(400)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_request', errors: [{ field: 'fromAmount' }] })
  })
})
