import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Problem } from '../../src/schemas/problem.ts'
import { QuoteResult, RankedQuote, UnsupportedPair } from '../../src/schemas/quote.ts'
import { FROM_ADDRESS, decimalToUnits, postRaw, quoteBody, testApp, testDeps } from './testApp.ts'

/** DESIGN 6: a request never gets a 5xx for anything the client sent; every answer is JSON we can parse. */

const app = testApp()
const NUM_RUNS = 300
const PATHS = ['/api/x402/quote', '/api/v1/quote'] as const

const SUCCESS = {
  '/api/x402/quote': QuoteResult.or(UnsupportedPair),
  '/api/v1/quote': RankedQuote.or(UnsupportedPair),
} as const

/** POSTs a raw text and checks the answer: status in [200, 500), the right content type, a body its schema accepts. */
async function checkAnswer(path: (typeof PATHS)[number], text: string, contentType = 'application/json'): Promise<void> {
  const response = await postRaw(app, path, text, contentType)
  const body = await response.text()
  const context = `${path} ${contentType} ${text.slice(0, 300)} -> ${response.status} ${body.slice(0, 300)}`
  expect(response.status, context).toBeGreaterThanOrEqual(200)
  expect(response.status, context).toBeLessThan(500)
  expect(response.headers.get('x-request-id'), context).toMatch(/\S/)
  const parsed: unknown = JSON.parse(body)
  if (response.status === 200) {
    expect(response.headers.get('content-type'), context).toMatch(/^application\/json/)
    expect(SUCCESS[path].safeParse(parsed).success, context).toBe(true)
  } else {
    expect(response.headers.get('content-type'), context).toBe('application/problem+json')
    expect(Problem.safeParse(parsed).success, context).toBe(true)
    expect((parsed as { status: number }).status, context).toBe(response.status)
  }
}

const path = fc.constantFrom(...PATHS)

/** Values that are likely to get past one check and trip the next one. */
const plausibleString = fc.oneof(
  fc.constantFrom('ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL', 'SOL', 'TRX', 'eth', ''),
  fc.constantFrom(
    'USDC',
    'usdc',
    'USDT',
    'DAI',
    'EURe',
    'cKES',
    'ckes',
    'cNGN',
    'ZARP',
    'RLUSD',
    'USDD',
    'USDT-TRC20',
    'USDC.e',
    'cUSD',
    '__proto__',
    'constructor',
  ),
  fc.constantFrom('0', '1', '1000', '0.000001', '0.0000001', '1e3', '-1', '99999999999999999999', '1.000000000000000001', '00', '0.5'),
  fc.constantFrom(
    FROM_ADDRESS,
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0x0000000000000000000000000000000000000000',
  ),
  fc.stringMatching(/^[0-9]{1,30}(\.[0-9]{1,20})?$/),
  fc.string({ maxLength: 40 }),
)
const plausibleValue = fc.oneof(
  plausibleString,
  fc.constantFrom(0, 0.005, 0.1, 0.11, -0.1, 1e-19, 1e-18, 5e-324, 1e308, -0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 2 }),
)

/** Records over the QuoteParams keys (each present or not) with arbitrary values. */
const quoteShaped = fc.record(
  {
    fromChain: plausibleValue,
    toChain: plausibleValue,
    fromToken: plausibleValue,
    toToken: plausibleValue,
    fromAmount: plausibleValue,
    fromAddress: plausibleValue,
    slippage: plausibleValue,
  },
  { requiredKeys: [] },
)

/** A valid body with one or two keys replaced, deleted or added. */
const KEYS = ['fromChain', 'toChain', 'fromToken', 'toToken', 'fromAmount', 'fromAddress', 'slippage', 'extra'] as const
const mutation = fc.record({ key: fc.constantFrom(...KEYS), value: fc.option(plausibleValue, { nil: undefined }) })
const mutatedValid = fc.array(mutation, { minLength: 1, maxLength: 2 }).map((changes) => {
  const overrides: Record<string, unknown> = {}
  for (const { key, value } of changes) overrides[key] = value
  return quoteBody(overrides)
})

/** Any listed (chain, token) of an agent-callable chain, so requests get past validation and into the engine. */
const { catalogue } = testDeps()
const listedSides = (['ETH', 'POL', 'ARB', 'OPT', 'BAS', 'BNB', 'GNO', 'CEL'] as const).flatMap((chain) =>
  (catalogue.chains.get(chain)?.tokens ?? []).map((symbol) => ({
    chain,
    symbol,
    decimals: catalogue.tokens.get(`${chain}:${symbol}`)?.decimals ?? 0,
  })),
)
const side = fc.constantFrom(...listedSides)
const routableRequest = fc.record({
  from: side,
  to: side,
  fromAmount: fc.oneof(
    fc.stringMatching(/^[0-9]{1,9}(\.[0-9]{1,6})?$/),
    fc.stringMatching(/^[1-9][0-9]{0,30}$/),
    fc.constantFrom('1', '1000', '250000'),
  ),
  slippage: fc.integer({ min: 0, max: 10_000 }).map((n) => n / 100_000),
})

describe('fuzzing the quote endpoints (DESIGN 6: never a 5xx for client input)', () => {
  it('any JSON value as the body', async () => {
    await fc.assert(
      fc.asyncProperty(path, fc.jsonValue(), async (p, value) => checkAnswer(p, JSON.stringify(value))),
      { numRuns: NUM_RUNS },
    )
  })

  it('records over the QuoteParams keys with arbitrary values', async () => {
    await fc.assert(
      fc.asyncProperty(path, quoteShaped, async (p, value) => checkAnswer(p, JSON.stringify(value))),
      { numRuns: NUM_RUNS },
    )
  })

  it('mutations of a valid body', async () => {
    await fc.assert(
      fc.asyncProperty(path, mutatedValid, async (p, value) => checkAnswer(p, JSON.stringify(value))),
      { numRuns: NUM_RUNS },
    )
  })

  it('arbitrary strings as the raw body', async () => {
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.json().map((j) => j.slice(0, -1)),
    )
    await fc.assert(
      fc.asyncProperty(path, text, async (p, value) => checkAnswer(p, value)),
      { numRuns: NUM_RUNS },
    )
  })

  it('arbitrary content types', async () => {
    const contentType = fc.oneof(
      fc.constantFrom(
        'application/json',
        'APPLICATION/JSON',
        'application/json;charset=utf-8',
        'text/json',
        'application/problem+json',
        '',
      ),
      fc.string({ maxLength: 40 }).filter((s) => /^[\t\x20-\x7e]*$/.test(s)),
    )
    await fc.assert(
      fc.asyncProperty(path, contentType, async (p, type) => checkAnswer(p, JSON.stringify(quoteBody()), type)),
      { numRuns: 100 },
    )
  })

  it('listed tokens on any two callable chains, any amount: a quote, unsupported, or a 4xx; never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(path, routableRequest, async (p, { from, to, fromAmount, slippage }) => {
        const body = quoteBody({
          fromChain: from.chain,
          fromToken: from.symbol,
          toChain: to.chain,
          toToken: to.symbol,
          fromAmount,
          slippage,
        })
        await checkAnswer(p, JSON.stringify(body))
        const response = await postRaw(app, p, JSON.stringify(body))
        if (response.status !== 200) return
        const answer = (await response.json()) as { supported?: false; routes?: QuoteResult[] } & Partial<QuoteResult>
        if (answer.supported === false) return
        const quotes = p === '/api/v1/quote' ? (answer.routes ?? []) : [answer as QuoteResult]
        for (const quote of quotes) {
          // What was promised never exceeds itself after slippage, and the amounts echo the request exactly.
          expect(decimalToUnits(quote.fromAmount, from.decimals)).toBe(decimalToUnits(fromAmount, from.decimals))
          expect(decimalToUnits(quote.toAmountMin, to.decimals)).toBeLessThanOrEqual(decimalToUnits(quote.toAmount, to.decimals))
          expect(quote.toAmount).toBe(quotes[0]?.toAmount)
        }
      }),
      { numRuns: NUM_RUNS },
    )
  })
})
