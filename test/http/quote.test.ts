import { describe, expect, it } from 'vitest'
import { candidateRoutes, isEvmToken } from '../../src/engine/index.ts'
import { QuoteResult, UnsupportedPair } from '../../src/schemas/quote.ts'
import { verifyQuoteId } from '../../src/service/quoteToken.ts'
import {
  DECIMAL_STRING,
  FROM_ADDRESS,
  NOW_MS,
  QUOTE_SECRET,
  decimalToUnits,
  postJson,
  quoteBody,
  readJson,
  testApp,
  testDeps,
} from './testApp.ts'

const app = testApp()
const QUOTE_PATHS = ['/api/x402/quote', '/api/mpp/quote'] as const
const TTL_MS = 60_000

async function quote(overrides: Record<string, unknown>, path = '/api/x402/quote'): Promise<{ response: Response; body: QuoteResult }> {
  const response = await postJson(app, path, quoteBody(overrides))
  const text = await response.text()
  expect(response.status, text).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const parsed = QuoteResult.safeParse(JSON.parse(text))
  expect(parsed.success, text).toBe(true)
  return { response, body: JSON.parse(text) as QuoteResult }
}

describe.each(QUOTE_PATHS)('POST %s, ETH USDC -> USDT 1000', (path) => {
  it('quotes 995 after the 0.5% fee, 990.025 minimum at the default 0.005 slippage', async () => {
    const { body } = await quote({}, path)
    expect(body).toMatchObject({
      fromChain: 'ETH',
      toChain: 'ETH',
      fromToken: 'USDC',
      toToken: 'USDT',
      fromAmount: '1000',
      toAmount: '995',
      toAmountMin: '990.025',
      bridge: 'none',
      fee: { token: 'USDC', amount: '5', bps: 50 },
      expiresAt: new Date(NOW_MS + TTL_MS).toISOString(),
    })
    expect(Number.isInteger(body.estimatedDuration) && body.estimatedDuration > 0).toBe(true)
    expect(body.estimatedGasUSD).toMatch(DECIMAL_STRING)
    expect(decimalToUnits(body.estimatedGasUSD, 6)).toBeGreaterThan(0n)
    expect(body.route.steps).toHaveLength(1)
    expect(body.route.steps[0]).toMatchObject({
      type: 'swap',
      fromChain: 'ETH',
      toChain: 'ETH',
      fromToken: 'USDC',
      toToken: 'USDT',
      fromAmount: '1000',
    })
    expect(body.quoteId.startsWith('q1.')).toBe(true)
  })
})

describe('what a quote is priced on (issue 17)', () => {
  it('names the snapshot per chain of its route, and marks the bridge fees as snapshot figures', async () => {
    const { body } = await quote({ fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'USDC' })
    expect(body.pricedOn).toEqual([
      { chain: 'BAS', source: 'snapshot', asOf: testDeps().catalogue.asOf },
      { chain: 'POL', source: 'snapshot', asOf: testDeps().catalogue.asOf },
    ])
    const bridgeItems = body.route.realCost.items.filter((item) => item.kind === 'bridge_fee' || item.kind === 'bridge_fixed_fee')
    expect(bridgeItems.length).toBeGreaterThan(0)
    for (const item of body.route.realCost.items)
      expect(item.source).toBe(item.kind === 'bridge_fee' || item.kind === 'bridge_fixed_fee' ? 'snapshot' : undefined)
  })
})

describe('the MPP alias (spec rule 1)', () => {
  it('answers byte for byte what /api/x402/quote answers under the same clock', async () => {
    for (const overrides of [{}, { fromChain: 'BAS', toChain: 'POL' }, { fromToken: 'RLUSD', toToken: 'USDD' }]) {
      // Two apps, so neither answer comes from the other's quote memo: both are computed.
      const x402 = await postJson(testApp(), '/api/x402/quote', quoteBody(overrides))
      const mpp = await postJson(testApp(), '/api/mpp/quote', quoteBody(overrides))
      expect(mpp.status).toBe(x402.status)
      expect(await mpp.text()).toBe(await x402.text())
    }
  })
})

describe('chain codes in any case, as token symbols are', () => {
  it('quotes "bas" to "Pol" exactly as BAS to POL, naming the chains in upper case', async () => {
    const upper = await postJson(testApp(), '/api/x402/quote', quoteBody({ fromChain: 'BAS', toChain: 'POL', fromToken: 'usdc' }))
    const mixed = await postJson(testApp(), '/api/x402/quote', quoteBody({ fromChain: 'bas', toChain: 'Pol', fromToken: 'usdc' }))
    expect(mixed.status).toBe(200)
    expect(await mixed.text()).toBe(await upper.text())
    const unknown = await postJson(app, '/api/x402/quote', quoteBody({ fromChain: 'base' }))
    expect(unknown.status).toBe(400)
    expect(JSON.stringify(await readJson(unknown))).toContain('fromChain')
  })
})

describe('quoteId (DESIGN 7.12)', () => {
  it('verifies under the quote secret and binds the request, the route and the amounts in atomic units', async () => {
    const { body } = await quote({})
    const verified = verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS)
    expect(verified).toEqual({
      ok: true,
      claims: {
        fromChain: 'ETH',
        toChain: 'ETH',
        fromToken: 'USDC',
        toToken: 'USDT',
        fromAmount: '1000000000',
        fromAddress: FROM_ADDRESS,
        toAddress: null,
        slippageE18: '5000000000000000',
        routeId: body.route.id,
        toAmount: '995000000',
        toAmountMin: '990025000',
        asOf: testDeps().catalogue.asOf,
        market: 'ETH:snapshot',
        exp: NOW_MS / 1000 + 60,
      },
    })
  })

  it('binds the address lowercased, so a checksummed sender gets the same claims', async () => {
    const { body } = await quote({ fromAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
    const verified = verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS)
    expect(verified.ok && verified.claims.fromAddress).toBe('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')
  })

  it('binds toAddress when given, lowercased, and rejects a bad checksum in it', async () => {
    const { body } = await quote({ toAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' })
    const verified = verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS)
    expect(verified.ok && verified.claims.toAddress).toBe('0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')
    expect(verified.ok && verified.claims.fromAddress).toBe(FROM_ADDRESS)
    const bad = await postJson(app, '/api/x402/quote', quoteBody({ toAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }))
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ code: 'invalid_request', errors: [{ field: 'toAddress' }] })
  })

  it('fails with bad_signature when one character of the claims is changed', async () => {
    const { body } = await quote({})
    const [prefix, payload = '', signature = ''] = body.quoteId.split('.')
    // Change the amount claim inside the payload and re-encode it: the MAC no longer matches.
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>
    const forged = Buffer.from(JSON.stringify({ ...claims, toAmount: '999000000' })).toString('base64url')
    expect(verifyQuoteId(QUOTE_SECRET, `${prefix}.${forged}.${signature}`, NOW_MS)).toEqual({ ok: false, reason: 'bad_signature' })
    const flipped = payload.slice(0, 10) + (payload[10] === 'A' ? 'B' : 'A') + payload.slice(11)
    expect(verifyQuoteId(QUOTE_SECRET, `${prefix}.${flipped}.${signature}`, NOW_MS)).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it('fails with bad_signature under another secret', async () => {
    const { body } = await quote({})
    const other = new TextEncoder().encode('another-secret-another-secret-!!!!!')
    expect(verifyQuoteId(other, body.quoteId, NOW_MS)).toEqual({ ok: false, reason: 'bad_signature' })
  })

  it('is valid until the 60 s TTL runs out, then expired', async () => {
    const { body } = await quote({})
    expect(verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS + TTL_MS - 1).ok).toBe(true)
    expect(verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS + TTL_MS)).toEqual({ ok: false, reason: 'expired' })
    expect(verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS + 10 * TTL_MS)).toEqual({ ok: false, reason: 'expired' })
  })

  it('differs when the slippage differs, though the amounts quoted are otherwise the same', async () => {
    const a = await quote({ slippage: 0.005 })
    const b = await quote({ slippage: 0.01 })
    expect(a.body.toAmount).toBe(b.body.toAmount)
    expect(a.body.quoteId).not.toBe(b.body.quoteId)
  })
})

describe('routes and chains', () => {
  it('bridges for a cross-chain quote: BAS USDC -> POL USDC', async () => {
    const { body } = await quote({ fromChain: 'BAS', toChain: 'POL', toToken: 'USDC' })
    expect(body.bridge).not.toBe('none')
    expect(body.bridge).toMatch(/\S/)
    expect(body.toAmount).toBe('995')
    expect(body.route.steps.some((s) => s.type === 'bridge' && s.fromChain === 'BAS' && s.toChain === 'POL')).toBe(true)
  })

  it('matches token symbols case-insensitively and echoes them canonically (DESIGN 7.4)', async () => {
    const { body } = await quote({ fromChain: 'ETH', fromToken: 'usdc', toChain: 'GNO', toToken: 'eure' })
    expect(body.fromToken).toBe('USDC')
    expect(body.toToken).toBe('EURe')
    expect(body.route.steps.length).toBeGreaterThanOrEqual(2)
    expect(body.route.steps.at(-1)).toMatchObject({ toChain: 'GNO', toToken: 'EURe' })
    const verified = verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS)
    expect(verified.ok && [verified.claims.fromToken, verified.claims.toToken]).toEqual(['USDC', 'EURe'])
  })

  it('accepts GNO as toChain (DESIGN 7.1): ETH USDC -> GNO EURe routes over a bridge then a swap', async () => {
    const { body } = await quote({ toChain: 'GNO', toToken: 'EURe' })
    expect(body.toChain).toBe('GNO')
    expect(body.route.steps.length).toBeGreaterThanOrEqual(2)
    expect(body.bridge).not.toBe('none')
    // 1000 USDC at USD 1 into EURe at USD 1.16 (manifest/market.json), less 0.5%: floor(995 / 1.16) at 18 decimals.
    expect(body.toAmount).toBe('857.758620689655172413')
  })

  it('accepts GNO as fromChain: GNO EURe -> ETH USDC', async () => {
    const { body } = await quote({ fromChain: 'GNO', fromToken: 'EURe', toChain: 'ETH', toToken: 'USDC' })
    expect(body.fromChain).toBe('GNO')
    expect(body.route.steps.length).toBeGreaterThanOrEqual(2)
  })

  // Accepted (CEL is a chain quotes take), and refused honestly: the route costs more than the 0.5% fee earns.
  it('accepts CEL as toChain, and answers ARB USDC -> CEL cKES as not served, with the cost against the fee', async () => {
    const response = await postJson(app, '/api/x402/quote', quoteBody({ fromChain: 'ARB', toChain: 'CEL', toToken: 'ckes' }))
    expect(response.status).toBe(200)
    const body = (await response.json()) as UnsupportedPair
    expect(body).toMatchObject({
      supported: false,
      reason: 'no_route_found',
      pair: 'USDC->cKES',
      notServed: { reason: 'cost_exceeds_fee', feeBps: 50 },
    })
    expect(body.notServed?.costBps).toBeGreaterThan(50)
    expect(body.notServed?.detail).toMatch(/does not sell at a loss/)
  })

  it('handles 18-decimal USDC on BNB Chain: BNB USDC 1000 -> ETH USDC 995', async () => {
    const { body } = await quote({ fromChain: 'BNB', toToken: 'USDC' })
    expect(body).toMatchObject({ fromAmount: '1000', toAmount: '995', toAmountMin: '990.025', fee: { amount: '5' } })
    const verified = verifyQuoteId(QUOTE_SECRET, body.quoteId, NOW_MS)
    expect(verified.ok && verified.claims.fromAmount).toBe(`1000${'0'.repeat(18)}`)
    expect(verified.ok && verified.claims.toAmount).toBe('995000000')
  })

  it('accepts a fraction with all 18 digits on an 18-decimal token', async () => {
    const { body } = await quote({ fromChain: 'BNB', toToken: 'USDC', fromAmount: '1000.000000000000000001' })
    expect(body.fromAmount).toBe('1000.000000000000000001')
  })
})

describe('slippage (DESIGN 3, 7.5)', () => {
  it('0 makes toAmountMin equal toAmount', async () => {
    const { body } = await quote({ slippage: 0 })
    expect(body.toAmountMin).toBe(body.toAmount)
    expect(body.toAmount).toBe('995')
  })

  it('0.1 makes toAmountMin floor(0.9 x toAmount) on a 6-decimal token', async () => {
    const { body } = await quote({ slippage: 0.1 })
    expect(body.toAmountMin).toBe('895.5')
  })

  it('0.1 makes toAmountMin floor(0.9 x toAmount), every digit, on an 18-decimal token', async () => {
    const { body } = await quote({ toChain: 'GNO', toToken: 'EURe', slippage: 0.1 })
    const toAmount = decimalToUnits(body.toAmount, 18)
    expect(decimalToUnits(body.toAmountMin, 18)).toBe((toAmount * 9n) / 10n)
    expect(body.toAmountMin).toBe('771.982758620689655171')
  })

  it('default 0.005 rounds toAmountMin down on an 18-decimal token', async () => {
    const { body } = await quote({ toChain: 'GNO', toToken: 'EURe' })
    const toAmount = decimalToUnits(body.toAmount, 18)
    expect(decimalToUnits(body.toAmountMin, 18)).toBe((toAmount * 995n) / 1000n)
  })

  it('a small fraction such as 0.0001 is exact, not a float', async () => {
    const { body } = await quote({ slippage: 0.0001 })
    expect(body.toAmountMin).toBe('994.9005')
  })
})

describe('unsupported pair (spec 2.3, DESIGN 7.2)', () => {
  it('ETH RLUSD -> ETH USDD has no candidate route in the engine', () => {
    const { catalogue } = testDeps()
    const from = catalogue.tokens.get('ETH:RLUSD')
    const to = catalogue.tokens.get('ETH:USDD')
    if (!from || !to || !isEvmToken(from) || !isEvmToken(to)) throw new Error('RLUSD and USDD are EVM tokens of the catalogue')
    expect(candidateRoutes(catalogue, from, to)).toEqual([])
  })

  // The spec's three fields keep their meaning; why rides beside them as an extension (DESIGN 7.20).
  it.each(['/api/x402/quote', '/api/mpp/quote', '/api/v1/quote'])('%s answers 200 with the spec 2.3 object and why', async (path) => {
    const response = await postJson(app, path, quoteBody({ fromToken: 'RLUSD', toToken: 'USDD' }))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const body = await readJson(response)
    expect(body).toStrictEqual({
      supported: false,
      reason: 'no_route_found',
      pair: 'RLUSD->USDD',
      notServed: { reason: 'no_route', detail: 'no venue or bridge joins RLUSD on ETH to USDD on ETH' },
    })
    expect(UnsupportedPair.safeParse(body).success).toBe(true)
  })

  it('names the pair with canonical symbols when the caller wrote them in another case', async () => {
    const response = await postJson(app, '/api/x402/quote', quoteBody({ fromToken: 'rlusd', toToken: 'usdd' }))
    expect(await readJson(response)).toMatchObject({ supported: false, reason: 'no_route_found', pair: 'RLUSD->USDD' })
  })
})

describe('amount out of range (DESIGN 3)', () => {
  const small = { fromChain: 'BAS', toChain: 'ETH', toToken: 'USDC' }

  async function outOfRange(fromAmount: string): Promise<{ min: string; max: string; token: string }> {
    const response = await postJson(app, '/api/x402/quote', quoteBody({ ...small, fromAmount }))
    const body = await readJson<{ code: string; status: number; viableRange: { min: string; max: string; token: string } }>(response)
    expect(response.status, JSON.stringify(body)).toBe(422)
    expect(response.headers.get('content-type')).toBe('application/problem+json')
    expect(body.code).toBe('amount_out_of_range')
    expect(body.status).toBe(422)
    return body.viableRange
  }

  it('answers 0.5 USDC from Base into Ethereum with 422 and a viable range above it', async () => {
    const range = await outOfRange('0.5')
    expect(Object.keys(range).sort()).toEqual(['max', 'min', 'token'])
    expect(range.token).toBe('USDC')
    expect(range.min).toMatch(DECIMAL_STRING)
    expect(range.max).toMatch(DECIMAL_STRING)
    expect(decimalToUnits(range.min, 6)).toBeGreaterThan(decimalToUnits('0.5', 6))
    expect(decimalToUnits(range.max, 6)).toBeGreaterThan(decimalToUnits(range.min, 6))
  })

  it('quotes exactly viableRange.min and viableRange.max, and refuses one atomic unit outside either', async () => {
    const range = await outOfRange('0.5')
    const min = decimalToUnits(range.min, 6)
    const max = decimalToUnits(range.max, 6)
    const { body } = await quote({ ...small, fromAmount: range.min })
    expect(body.fromAmount).toBe(range.min)
    await quote({ ...small, fromAmount: range.max })
    const units = (value: bigint): string => `${value / 1_000_000n}.${(value % 1_000_000n).toString().padStart(6, '0')}`
    expect(await outOfRange(units(min - 1n))).toEqual(range)
    expect(await outOfRange(units(max + 1n))).toEqual(range)
  })

  // The answer names what binds on the side the amount fell, beside the range (DESIGN 7.20).
  it.each([
    ['0.5', 'fee', /fixed costs \(bridge fees, destination gas\) exceed what the fee earns/],
    ['900000000', 'bridge_maximum', /above the largest amount the bridges take/],
  ])('names the binding limit of %s USDC: %s', async (fromAmount, limit, text) => {
    const response = await postJson(app, '/api/x402/quote', quoteBody({ ...small, fromAmount }))
    const body = await readJson<{ code: string; limit: string; detail: string }>(response)
    expect(body).toMatchObject({ code: 'amount_out_of_range', limit })
    expect(body.detail).toMatch(text)
  })
})
