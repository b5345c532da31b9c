import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newKeyId, signApiKey, type KeyTier } from '../../src/auth/apiKey.ts'
import { importObservations } from '../../src/intel/importObservations.ts'
import { intelKeySubject } from '../../src/intel/usageSubjects.ts'
import { CorridorIntelligenceFree, CorridorIntelligencePro, ObservationLine } from '../../src/schemas/intelligence.ts'
import { Problem } from '../../src/schemas/problem.ts'
import { KEY_SECRET, NOW_MS, get, lazyMemoryStore, readJson, testApp, testDeps } from './testApp.ts'

const store = lazyMemoryStore()
const app = testApp({ store })
afterAll(() => store.sql.close())

const FIXTURE = new URL('../intel/fixtures/observations.jsonl', import.meta.url).pathname
const fixtureLines = readFileSync(FIXTURE, 'utf8').trim().split('\n')

beforeAll(async () => {
  await importObservations(testDeps({ store }), fixtureLines)
}, 120_000)

const keyOf = (tier: KeyTier): { key: string; id: string } => {
  const id = newKeyId()
  return { id, key: signApiKey(KEY_SECRET, { v: 1, id, tier, iat: Math.floor(NOW_MS / 1000) - 60 }) }
}
const intel = (path: string, ip: string, headers: Record<string, string> = {}): Promise<Response> =>
  get(app, `/api/v1/intelligence/corridor/${path}`, { 'x-forwarded-for': ip, ...headers })

/** percentile_disc by its definition, over the fixture, to hold the database's figures against. */
const percentileDisc = (values: readonly number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN
}
const fixture = fixtureLines.map((text) => ObservationLine.parse(JSON.parse(text)))

/** Seconds until 2026-12-01T00:00:00Z from the tests' fixed clock. */
const SECONDS_TO_DECEMBER = 907_200

describe('GET /api/v1/intelligence/corridor/{pair}, free tier', () => {
  it('answers the coarse signal without a key, counted against the IP with its monthly RateLimit fields', async () => {
    const response = await intel('bas-arb', '203.0.113.10')
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('ratelimit-policy')).toContain(`"intel-free";q=100;w=${30 * 86_400}`)
    expect(response.headers.get('ratelimit')).toContain(`"intel-free";r=99;t=${SECONDS_TO_DECEMBER}`)
    const body = await readJson(response)
    expect(Object.keys(body).sort()).toEqual(Object.keys(CorridorIntelligenceFree.shape).sort())
    expect(CorridorIntelligenceFree.parse(body)).toEqual({
      pair: 'BAS-ARB',
      from: { kind: 'chain', code: 'BAS' },
      to: { kind: 'chain', code: 'ARB' },
      tier: 'free',
      amount: null,
      basis: 'observed',
      sampleSize: 37,
      minSampleSize: 20,
      recommendedBridge: 'across',
      reliabilityBand: 'medium',
      asOf: '2026-11-20T12:00:00.000Z',
      notes: [
        'Figures from 37 settled transfers between 2026-08-22T12:00:00.000Z and 2026-11-20T12:00:00.000Z.',
        'Per-bridge p50/p95 settlement time and slippage, the optimal route for the amount and failure patterns need a pro key sent as Authorization: Bearer se_…; an operator issues pro keys.',
      ],
    })
    expect((await intel('BAS-ARB', '203.0.113.10')).headers.get('ratelimit')).toContain('"intel-free";r=98;')
  })

  it('refuses an unknown query parameter naming the one meant, and amount given twice, instead of answering over every size', async () => {
    const typo = await intel('bas-arb?amout=2500', '203.0.113.31')
    expect(typo.status).toBe(400)
    expect(await readJson(typo)).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: '(query)', message: expect.stringContaining('"amout" (did you mean amount?)') }],
    })
    const twice = await intel('bas-arb?amount=10&amount=20000', '203.0.113.31')
    expect(twice.status).toBe(400)
    expect(await readJson(twice)).toMatchObject({ code: 'invalid_request', errors: [{ field: 'amount' }] })
    expect((await intel('bas-arb?amount=2500', '203.0.113.31')).status).toBe(200)
    // A parameter with no name is a parameter all the same: refused, not dropped (and not counted against the quota).
    for (const query of ['?=5', '?amount=1&=5']) {
      const unnamed = await intel(`bas-arb${query}`, '203.0.113.32')
      expect(unnamed.status, query).toBe(400)
      expect(await readJson(unnamed)).toMatchObject({ code: 'invalid_request', errors: [{ field: '(query)' }] })
    }
    expect((await intel('bas-arb', '203.0.113.32')).headers.get('ratelimit')).toContain('"intel-free";r=99;')
  })

  it('falls back to the published priors below 20 settled transfers, and says so', async () => {
    const body = CorridorIntelligenceFree.parse(await readJson(await intel('ETH-BAS', '203.0.113.11')))
    expect(body).toMatchObject({
      pair: 'ETH-BAS',
      basis: 'published_priors',
      sampleSize: 5,
      reliabilityBand: 'unknown',
      recommendedBridge: 'across',
    })
    expect(body.notes[0]).toMatch(
      /^Only 5 settled transfers in this corridor over the window \(20 needed\): figures are the bridges' published settlement-time priors/,
    )
    const empty = CorridorIntelligenceFree.parse(await readJson(await intel('usd-trx', '203.0.113.11')))
    expect(empty).toMatchObject({ pair: 'USD-TRX', basis: 'published_priors', sampleSize: 0, recommendedBridge: null })
  })

  it('gives a free key sent as Bearer the free answer, counted against its IP, saying pro needs a pro key', async () => {
    const free = keyOf('free')
    const response = await intel('BAS-ARB', '203.0.113.12', { authorization: `Bearer ${free.key}` })
    expect(response.status).toBe(200)
    expect(response.headers.get('ratelimit')).toContain('"intel-free";r=99;')
    const body = CorridorIntelligenceFree.parse(await readJson(response))
    expect(body.tier).toBe('free')
    expect(body.notes).toContain(
      `This key (${free.id}) is free tier: this is the free answer, counted against this IP's 100 monthly calls. Per-bridge p50/p95 settlement time and slippage, the optimal route for the amount and failure patterns need a pro key sent as Authorization: Bearer se_…; an operator issues pro keys.`,
    )
    expect(await store.intel.usage('2026-11', intelKeySubject(free.id))).toEqual([])
  })

  it('reads keys from Bearer only: a pro key in x-swapeazi-key gets the free answer and a note', async () => {
    const pro = keyOf('pro')
    const body = CorridorIntelligenceFree.parse(await readJson(await intel('BAS-ARB', '203.0.113.13', { 'x-swapeazi-key': pro.key })))
    expect(body.tier).toBe('free')
    expect(body.notes.at(-1)).toMatch(/^Corridor intelligence reads keys from Authorization: Bearer, not x-swapeazi-key/)
  })

  it('answers 100 calls per IP per calendar month, then 429 with Retry-After until the month ends', async () => {
    const ip = '198.51.100.200'
    for (let call = 1; call <= 100; call++) {
      const response = await intel('OPT-POL', ip)
      if (response.status !== 200) throw new Error(`call ${call} answered ${response.status}`)
    }
    const refused = await intel('OPT-POL', ip)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.headers.get('retry-after')).toBe(String(SECONDS_TO_DECEMBER))
    // The 429 names its own policy (the month, 30 days in November), and only it: the per-minute one has quota left.
    expect(refused.headers.get('ratelimit-policy')).toBe('"intel-free";q=100;w=2592000')
    expect(refused.headers.get('ratelimit')).toBe(`"intel-free";r=0;t=${SECONDS_TO_DECEMBER}`)
    expect(Problem.parse(await readJson(refused))).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfterSec: SECONDS_TO_DECEMBER,
      limit: 100,
      policy: 'intel-free',
      windowSec: 2_592_000,
      resetsAt: '2026-12-01T00:00:00.000Z',
      detail:
        'The free tier answers 100 corridor-intelligence calls per IP per calendar month (UTC), and this IP has used them. Retry after 2026-12-01T00:00:00.000Z (907200 s), or send a pro key as Authorization: Bearer se_….',
    })
    // Refused calls are not counted, another IP is untouched, and a pro key still answers from this IP.
    expect((await intel('OPT-POL', ip)).status).toBe(429)
    expect((await intel('OPT-POL', '198.51.100.201')).status).toBe(200)
    expect((await intel('OPT-POL', ip, { authorization: `Bearer ${keyOf('pro').key}` })).status).toBe(200)
    // The next month starts a fresh count.
    const nextMonth = testApp({ store, clock: () => Date.parse('2026-12-01T00:00:00Z') })
    expect((await get(nextMonth, '/api/v1/intelligence/corridor/OPT-POL', { 'x-forwarded-for': ip })).status).toBe(200)
  }, 60_000)
})

describe('GET /api/v1/intelligence/corridor/{pair}, pro tier', () => {
  it('gives per-bridge p50/p95 settlement and slippage computed over the observations, and meters the key', async () => {
    const pro = keyOf('pro')
    const response = await intel('BAS-ARB', '203.0.113.20', { authorization: `Bearer ${pro.key}` })
    expect(response.status).toBe(200)
    expect(response.headers.get('ratelimit') ?? '').not.toContain('intel-free')
    const body = CorridorIntelligencePro.parse(await readJson(response))
    expect(body).toMatchObject({ tier: 'pro', basis: 'observed', sampleSize: 37, recommendedBridge: 'across', reliabilityBand: 'medium' })
    expect(body.outcomes).toEqual({ delivered: 34, refunded: 1, failed: 2, pending: 1, notFound: 1 })

    const delivered = fixture.filter(
      (o) => o.fromChain === 'BAS' && o.toChain === 'ARB' && o.bridge === 'across' && o.status === 'DONE' && o.substatus !== 'REFUNDED',
    )
    const seconds = delivered.map((o) => o.settledDurationSec ?? Number.NaN)
    const slippage = delivered.map((o) => o.realisedSlippageBps ?? Number.NaN)
    expect(body.bridges[0]).toEqual({
      bridge: 'across',
      basis: 'observed',
      sampleSize: 25,
      successRateBps: 9600,
      settlementSec: { p50: percentileDisc(seconds, 0.5), p95: percentileDisc(seconds, 0.95) },
      quotedSecP50: 4,
      slippageBps: { p50: percentileDisc(slippage, 0.5), p95: percentileDisc(slippage, 0.95) },
    })
    expect(body.bridges.map((b) => [b.bridge, b.basis, b.sampleSize])).toEqual([
      ['across', 'observed', 25],
      ['cctp-v2-fast', 'observed', 8],
      ['stargate-v2-taxi', 'observed', 4],
      ['stargate-v2-bus', 'published_priors', 0],
      ['cctp-v2-standard', 'published_priors', 0],
    ])
    expect(body.failurePatterns.map((p) => [p.status, p.substatus, p.count, p.bridges.map((b) => b.bridge).join(',')])).toEqual([
      ['DONE', 'REFUNDED', 1, 'cctp-v2-fast'],
      ['FAILED', 'OUT_OF_GAS', 1, 'stargate-v2-taxi'],
      ['FAILED', 'SLIPPAGE_EXCEEDED', 1, 'across'],
      ['NOT_FOUND', null, 1, 'across'],
      ['PENDING', 'WAIT_DESTINATION_TRANSACTION', 1, 'across'],
    ])
    expect(body.failurePatterns.find((p) => p.substatus === 'SLIPPAGE_EXCEEDED')).toMatchObject({
      shareBps: 256,
      exampleReason: 'fill price moved past toAmountMin',
    })

    await intel('BAS-ARB', '203.0.113.21', { authorization: `bearer ${pro.key}` })
    expect(await store.intel.usage('2026-11', intelKeySubject(pro.id))).toEqual([{ subject: intelKeySubject(pro.id), calls: 2 }])
  })

  it("ranks the optimal route for the amount within its USD size band, reading a currency side's amount in that currency", async () => {
    const pro = keyOf('pro')
    const byUsd = CorridorIntelligencePro.parse(
      await readJson(await intel('BAS-ARB?amount=20000', '203.0.113.22', { authorization: `Bearer ${pro.key}` })),
    )
    expect(byUsd.optimalRoute).toMatchObject({
      bridge: 'across',
      basis: 'observed',
      scope: 'corridor',
      amountBandUsd: { min: '10000', max: '100000' },
    })
    expect(byUsd.optimalRoute.reason).toMatch(/^Only 8 settled transfers of 10000 to 100000 USD \(20 needed\)/)
    // 900 EUR is 1,044 USD at the snapshot's 1.16: the 1,000 to 10,000 USD band.
    const byEur = CorridorIntelligencePro.parse(
      await readJson(await intel('EUR-ETH?amount=900', '203.0.113.22', { authorization: `Bearer ${pro.key}` })),
    )
    expect(byEur).toMatchObject({
      pair: 'EUR-ETH',
      amount: '900',
      basis: 'published_priors',
      sampleSize: 3,
      optimalRoute: { amountBandUsd: { min: '1000', max: '10000' } },
    })
    expect(byEur.notes.some((note) => note.includes('read as USD'))).toBe(false)
    // The amount is echoed as a number is written, as the pair is made canonical (audit of issue 15).
    const padded = CorridorIntelligencePro.parse(
      await readJson(await intel('eur-eth?amount=0900.50', '203.0.113.22', { authorization: `Bearer ${pro.key}` })),
    )
    expect(padded).toMatchObject({ pair: 'EUR-ETH', amount: '900.5' })
  })

  it('refuses a forged, malformed or revoked Bearer key with 401 invalid_key', async () => {
    const pro = keyOf('pro')
    const forged = `${pro.key.slice(0, -2)}${pro.key.endsWith('AA') ? 'BB' : 'AA'}`
    for (const authorization of [`Bearer ${forged}`, 'Bearer se_nope', 'Bearer not-a-key']) {
      const response = await intel('BAS-ARB', '203.0.113.30', { authorization })
      expect(response.status).toBe(401)
      expect(Problem.parse(await readJson(response))).toMatchObject({ code: 'invalid_key', status: 401 })
    }
    const basic = await intel('BAS-ARB', '203.0.113.30', { authorization: 'Basic dXNlcjpwYXNz' })
    expect(basic.status).toBe(401)
    expect(await readJson(basic)).toMatchObject({
      code: 'invalid_key',
      detail:
        'Send the key as Authorization: Bearer se_… (no other scheme is accepted here), or send no Authorization header for the free tier.',
    })
    await store.keys.revoke(pro.id, new Date(NOW_MS))
    const revoked = await intel('BAS-ARB', '203.0.113.30', { authorization: `Bearer ${pro.key}` })
    expect(revoked.status).toBe(401)
    expect(await readJson(revoked)).toMatchObject({ code: 'invalid_key', detail: expect.stringContaining('revoked') })
    expect(await store.intel.usage('2026-11', intelKeySubject(pro.id))).toEqual([])
  })
})

describe('GET /api/v1/intelligence/corridor/{pair}, bad requests', () => {
  it('answers an unknown pair code with 400 invalid_request listing the accepted codes, without counting it', async () => {
    const ip = '203.0.113.40'
    const response = await intel('USDC-BAS', ip)
    expect(response.status).toBe(400)
    expect(Problem.parse(await readJson(response))).toMatchObject({
      code: 'invalid_request',
      detail:
        '"USDC" is not a chain or currency code. A pair is <A>-<B>, source first; each side a chain code (ETH, BAS, POL, ARB, OPT, BNB, GNO, CEL, SOL, TRX) or a currency code (USD, EUR, GBP, ZAR, NGN, KES, SGD).',
      errors: [{ field: 'pair', message: '"USDC" is not a chain or currency code' }],
      acceptedCodes: {
        chains: ['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL', 'SOL', 'TRX'],
        currencies: ['USD', 'EUR', 'GBP', 'ZAR', 'NGN', 'KES', 'SGD'],
      },
    })
    for (const pair of ['USD', 'USD-BAS-ARB', 'usd%20-bas', '%E2%82%AC-BAS', 'x'.repeat(500)])
      expect((await intel(pair, ip)).status).toBe(400)
    expect((await intel('USD-BAS', ip)).headers.get('ratelimit')).toContain('"intel-free";r=99;')
  })

  it.each([
    ['-5', 'must be a positive decimal string', 'must be a positive decimal such as 1000'],
    ['1e3', 'must be a positive decimal string', 'must be a positive decimal such as 1000'],
    ['abc', 'must be a positive decimal string', 'must be a positive decimal such as 1000'],
    ['1,000', 'must be a positive decimal string', 'must be a positive decimal such as 1000'],
    ['.5', 'must be a positive decimal string', 'must be a positive decimal such as 1000'],
    ['', 'must be a positive decimal string', 'must be a positive decimal such as 1000'],
    ['0', 'must be greater than 0', 'must be greater than 0'],
    ['0.000', 'must be greater than 0', 'must be greater than 0'],
    ['1.1234567890123456789', 'has more than 18 fraction digits', 'has 19 fraction digits, and no token has more than 18'],
    [`1.${'0'.repeat(37)}1`, 'has more than 18 fraction digits', 'has 38 fraction digits, and no token has more than 18'],
  ])('answers amount=%j with 400 naming the field and what is wrong with it', async (amount, message, detail) => {
    const response = await intel(`USD-BAS?amount=${encodeURIComponent(amount)}`, '203.0.113.41')
    expect(response.status).toBe(400)
    const body = await readJson<{ detail: string }>(response)
    expect(body).toMatchObject({ code: 'invalid_request', errors: [{ field: 'amount', message }] })
    expect(body.detail).toContain(`amount ${detail}`)
  })

  it.each([`1${'0'.repeat(30)}`, `${'9'.repeat(400)}.5`, `000${'1'.repeat(20)}`])(
    'answers an amount larger than any transfer (%s) with 422 amount_out_of_range, however many digits',
    async (amount) => {
      const response = await intel(`USD-BAS?amount=${amount}`, '203.0.113.42')
      expect(response.status).toBe(422)
      expect(await readJson(response)).toMatchObject({ code: 'amount_out_of_range', field: 'amount', limit: 'token_supply' })
    },
  )

  it('takes an amount with up to 18 fraction digits, and leading zeros', async () => {
    for (const amount of ['2500.123456789012345678', '0002500', '0.5'])
      expect((await intel(`USD-BAS?amount=${amount}`, '203.0.113.43')).status, amount).toBe(200)
  })

  it('answers other methods with 405 and Allow: GET, HEAD', async () => {
    const response = await app.request('/api/v1/intelligence/corridor/USD-BAS', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
    expect(await readJson(response)).toMatchObject({ code: 'method_not_allowed' })
  })
})
