import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { type ApiKeyClaims, signApiKey } from '../../src/auth/apiKey.ts'
import { Problem } from '../../src/schemas/problem.ts'
import { X402Challenge } from '../../src/schemas/x402.ts'
import { callTool, connectInMemory, inProcessClient, textOf } from '../mcp/mcpHarness.ts'
import { encodeHeader, signPayment } from '../payments/signPayment.ts'
import { decimalToUnits, get, KEY_SECRET, lazyMemoryStore, PAY_TO, postJson, quoteBody, readJson, testApp } from './testApp.ts'

/**
 * Issue 15 item 3 on the quote and swap bodies: an amount a uint256 cannot hold in atomic units is 400 on
 * `fromAmount`, one above what the token could ever hold (docs/money.md) is 422 `amount_out_of_range` with
 * `limit: "token_supply"`, on every path that takes QuoteParams, before any payment is asked; never a 5xx.
 */

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })
const claims: ApiKeyClaims = { v: 1, id: 'key_b1b1b1b1b1b1b1b1b1b1b1b1', tier: 'pro', iat: 1_795_000_000 }
const KEY = signApiKey(KEY_SECRET, claims)

const TWO_256 = 2n ** 256n

/** Atomic units as the shortest decimal of a token with `decimals` places. */
function decimalOf(atomic: bigint, decimals: number): string {
  const unit = 10n ** BigInt(decimals)
  const fraction = (atomic % unit).toString().padStart(decimals, '0').replace(/0+$/, '')
  return fraction === '' ? (atomic / unit).toString() : `${atomic / unit}.${fraction}`
}

/** Every path whose body is QuoteParams; the swaps answer these before asking for a payment. */
const PATHS = ['/api/x402/quote', '/api/mpp/quote', '/api/v1/quote', '/api/x402/swap', '/api/mpp/swap'] as const
const post = (path: string, overrides: Record<string, unknown>): Promise<Response> =>
  postJson(app, path, quoteBody(overrides), path.startsWith('/api/v1/') ? { 'x-swapeazi-key': KEY } : {})

async function problemOf(response: Response, status: number): Promise<Problem> {
  const text = await response.text()
  expect(response.status, text).toBe(status)
  expect(response.headers.get('content-type')).toBe('application/problem+json')
  return Problem.parse(JSON.parse(text))
}

describe.each(PATHS)('%s: fromAmount is bounded', (path) => {
  it.each([
    ['USDC (6 decimals): 2^256 atomic units', { fromToken: 'USDC', toToken: 'USDT' }, decimalOf(TWO_256, 6)],
    ['USDC: 2^256 - 1 whole tokens', { fromToken: 'USDC', toToken: 'USDT' }, (TWO_256 - 1n).toString()],
    ['DAI (18 decimals): 2^256 atomic units', { fromToken: 'DAI', toToken: 'USDC' }, decimalOf(TWO_256, 18)],
  ])('%s: 400 on fromAmount, saying what a uint256 holds', async (_name, tokens, fromAmount) => {
    const problem = await problemOf(await post(path, { ...tokens, fromAmount }), 400)
    expect(problem.code).toBe('invalid_request')
    expect(problem.errors).toEqual([
      { field: 'fromAmount', message: expect.stringMatching(/more than a uint256 can hold in atomic units/) },
    ])
  })

  it.each([
    ['USDC: 2^256 - 1 atomic units (fits a uint256)', { fromToken: 'USDC', toToken: 'USDT' }, decimalOf(TWO_256 - 1n, 6), '1000000000000'],
    ['USDC: 1e71, as reported', { fromToken: 'USDC', toToken: 'USDT' }, `1${'0'.repeat(71)}`, '1000000000000'],
    ['USDC: one atomic unit above 10^12', { fromToken: 'USDC', toToken: 'USDT' }, '1000000000000.000001', '1000000000000'],
    ['DAI: one atomic unit above 10^12', { fromToken: 'DAI', toToken: 'USDC' }, '1000000000000.000000000000000001', '1000000000000'],
    [
      'EURC on Base (a euro token): one atomic unit above 10^11',
      { fromChain: 'BAS', toChain: 'BAS', fromToken: 'EURC', toToken: 'USDC' },
      '100000000000.000001',
      '100000000000',
    ],
  ])('%s: 422 token_supply with the bound and what to send', async (_name, tokens, fromAmount, maxAmount) => {
    const problem = await problemOf(await post(path, { ...tokens, fromAmount }), 422)
    expect(problem).toMatchObject({ code: 'amount_out_of_range', field: 'fromAmount', limit: 'token_supply', maxAmount })
    expect(problem.detail).toMatch(/could ever hold: one amount carries at most/)
    expect(problem.detail).toContain('whole tokens, not atomic units')
    // The route's own range, no wider than the bound, is what to send instead.
    const range = problem.viableRange
    expect(range).toBeDefined()
    const decimals = tokens.fromToken === 'DAI' ? 18 : 6
    expect(decimalToUnits(range?.max ?? '', decimals)).toBeLessThanOrEqual(decimalToUnits(maxAmount, decimals))
    expect(problem.detail).toContain(`Send between ${range?.min} and ${range?.max}`)
  })

  it('the bound itself is not token_supply: 10^12 USDC falls to the route, which names its own limit', async () => {
    const problem = await problemOf(await post(path, { fromAmount: '1000000000000' }), 422)
    expect(problem).toMatchObject({ code: 'amount_out_of_range', field: 'fromAmount' })
    expect(['liquidity', 'bridge_maximum']).toContain(problem.limit)
  })
})

describe('MCP: get_quote goes through the same bound', () => {
  it('answers 1e71 USDC with an error the model can act on', async () => {
    const connected = await connectInMemory({ client: inProcessClient(app) })
    try {
      const result = await callTool(connected.client, 'get_quote', quoteBody({ fromAmount: `1${'0'.repeat(71)}` }))
      expect(result.isError).toBe(true)
      const text = textOf(result)
      expect(text).toMatch(/^SwapEazi answered 422 \(amount_out_of_range\): /)
      expect(text).toMatch(/at most 1000000000000 USDC/)
      expect(text).toMatch(/whole tokens, not atomic units/)
    } finally {
      await connected.close()
    }
  })
})

describe('GET /api/v1/intelligence/corridor/{pair}?amount=: bounded like a token amount', () => {
  const intel = (path: string, ip: string): Promise<Response> =>
    get(app, `/api/v1/intelligence/corridor/${path}`, { 'x-forwarded-for': ip })

  it.each([
    ['BAS-ARB', '1000000000000', '1000000000000.000000000000000001', '1000000000000'],
    ['NGN-BAS', '1000000000000000', '1000000000000001', '1000000000000000'],
  ])('%s: %s is answered, %s is 422 token_supply on amount', async (pair, largest, above, maxAmount) => {
    expect((await intel(`${pair}?amount=${largest}`, '203.0.113.91')).status).toBe(200)
    const problem = await problemOf(await intel(`${pair}?amount=${above}`, '203.0.113.92'), 422)
    expect(problem).toMatchObject({ code: 'amount_out_of_range', field: 'amount', limit: 'token_supply', maxAmount })
    expect(problem.detail).toMatch(/leave it out for figures over all sizes/)
  })
})

describe('X-PAYMENT: authorization values a uint256 cannot hold', () => {
  const payer = privateKeyToAccount(generatePrivateKey())
  const wallClockApp = testApp({ store, clock: Date.now })

  it.each(['value', 'validAfter', 'validBefore'] as const)(
    '%s of 2^256: 402 invalid_payment naming the field, nothing reserved',
    async (field) => {
      const nowSec = Math.floor(Date.now() / 1000)
      const { payload } = await signPayment(payer, { payTo: PAY_TO, nowSec })
      const inner = payload['payload'] as { authorization: Record<string, string> }
      inner.authorization[field] = TWO_256.toString()
      const response = await postJson(wallClockApp, '/api/x402/swap', quoteBody({ fromAddress: payer.address.toLowerCase() }), {
        'x-payment': encodeHeader(payload),
      })
      expect(response.status).toBe(402)
      const challenge = X402Challenge.parse(await readJson(response))
      expect(challenge.error).toBe('invalid_payment')
      expect(challenge.detail).toContain(`payload.authorization.${field} must fit a uint256`)
      const [row] = await store.sql.query<{ n: number }>('select count(*)::int as n from x402_payments')
      expect(row?.n).toBe(0)
    },
  )
})

// Audit of issue 15: whole atomic units make the fee (rounded up) and what is promised (rounded down) step, so a few
// amounts inside viableRange are not viable; their refusal said "Send between min and max", which the caller had.
describe('an amount inside the viable range that no route serves', () => {
  it('names the nearest amounts next to it that route, each of which quotes, and never says to send what was sent', async () => {
    const pair = { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'EURC' }
    const edge = await problemOf(await post('/api/x402/quote', { ...pair, fromAmount: '0.000001' }), 422)
    const range = edge.viableRange
    if (range === undefined) throw new Error('no viableRange')
    const minUnits = decimalToUnits(range.min, 6)
    const holes: Problem[] = []
    for (let k = 0n; k < 40n && holes.length < 3; k++) {
      const response = await post('/api/x402/quote', { ...pair, fromAmount: decimalOf(minUnits + k, 6) })
      if (response.status === 422) holes.push(await problemOf(response, 422))
    }
    expect(holes.length).toBeGreaterThan(0)
    for (const hole of holes) {
      expect(hole.detail).not.toContain('Send between')
      expect(hole.detail).toContain(`not viable): `)
      expect(hole.limit).toBe('fee')
      expect(hole.viableNearby?.length).toBeGreaterThan(0)
      for (const amount of hole.viableNearby ?? []) {
        expect(hole.detail).toContain(amount)
        expect((await post('/api/x402/quote', { ...pair, fromAmount: amount })).status).toBe(200)
      }
    }
  })

  it('near the top of the range, says depth binds, and names amounts next to it that route', async () => {
    const pair = { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'XSGD' }
    const edge = await problemOf(await post('/api/x402/quote', { ...pair, fromAmount: '100000000' }), 422)
    const maxUnits = decimalToUnits(edge.viableRange?.max ?? '0', 6)
    const holes: Problem[] = []
    for (let k = 0n; k < 40n && holes.length < 2; k++) {
      const response = await post('/api/x402/quote', { ...pair, fromAmount: decimalOf(maxUnits - k, 6) })
      if (response.status === 422) holes.push(await problemOf(response, 422))
    }
    expect(holes.length).toBeGreaterThan(0)
    for (const hole of holes) {
      expect(hole.limit).toBe('liquidity')
      expect(hole.detail).not.toContain('Send between')
      for (const amount of hole.viableNearby ?? [])
        expect((await post('/api/x402/quote', { ...pair, fromAmount: amount })).status).toBe(200)
    }
  })
})
