import { decodeFunctionData, getAddress, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { DEFAULT_ROUTER_ADDRESS } from '../../src/contracts/deployRouter.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { SwapRecordWire, SwapResult } from '../../src/schemas/swap.ts'
import { type QuoteClaims, signQuoteId, verifyQuoteId } from '../../src/service/quoteToken.ts'
import { createStore } from '../../src/store/createStore.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import type { Sql } from '../../src/store/sql.ts'
import {
  FROM_ADDRESS,
  get,
  KEY_SECRET,
  lazyMemoryStore,
  MANIFEST_DIR,
  NOW_MS,
  postJson,
  QUOTE_SECRET,
  quoteBody,
  readJson,
  ROUTER_ADDRESS,
  testApp,
} from './testApp.ts'

const store = lazyMemoryStore()
afterAll(() => store.sql.close())

let nowMs = NOW_MS
const app = testApp({ store, clock: () => nowMs })

const claimsOf = (id: string, tier: 'free' | 'pro' = 'free') => ({ v: 1 as const, id, tier, iat: NOW_MS / 1000 })
const KEY = signApiKey(KEY_SECRET, claimsOf('key_0123456789abcdef01234567'))
const OTHER_KEY = signApiKey(KEY_SECRET, claimsOf('key_76543210fedcba9876543210'))
const RECIPIENT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const listed = loadSanctionsList(`${MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`).addresses[0] ?? ''

async function quoteId(overrides: Record<string, unknown> = {}): Promise<string> {
  const response = await postJson(app, '/api/x402/quote', quoteBody(overrides))
  expect(response.status).toBe(200)
  return (await readJson<{ quoteId: string }>(response)).quoteId
}

const swap = (body: unknown, key: string | undefined = KEY): Promise<Response> =>
  postJson(app, '/api/v1/swap', body, key === undefined ? {} : { 'x-swapeazi-key': key })

beforeAll(() => {
  nowMs = NOW_MS
})

describe('POST /api/v1/swap: keys (spec endpoint 10, DESIGN 7.15)', () => {
  const free = claimsOf('key_00000000000000000000aaaa')
  const freeKey = signApiKey(KEY_SECRET, free)
  const revokedId = 'key_00000000000000000000bbbb'
  const cases: [string, () => Record<string, string>, string][] = [
    ['missing', () => ({}), 'missing'],
    ['malformed', () => ({ 'x-swapeazi-key': 'sk_live_not_ours' }), 'malformed'],
    [
      'forged (valid shape, wrong MAC)',
      () => ({ 'x-swapeazi-key': signApiKey(new TextEncoder().encode('another-deployment-secret-32-chars!'), free) }),
      'bad_signature',
    ],
    [
      'altered tier (free claims rewritten to pro, MAC kept)',
      () => ({
        'x-swapeazi-key': `se_${Buffer.from(JSON.stringify({ ...free, tier: 'pro' })).toString('base64url')}.${freeKey.split('.')[1]}`,
      }),
      'bad_signature',
    ],
    ['revoked', () => ({ 'x-swapeazi-key': signApiKey(KEY_SECRET, claimsOf(revokedId)) }), 'revoked'],
  ]

  it.each(cases)('refuses a %s key with 401 invalid_key, before reading the body', async (_name, headers, reason) => {
    await store.keys.revoke(revokedId, new Date(NOW_MS))
    const response = await postJson(app, '/api/v1/swap', { quoteId: await quoteId() }, headers())
    expect(response.status).toBe(401)
    const problem = await readJson(response)
    expect(problem).toMatchObject({ code: 'invalid_key', status: 401, reason })
    expect(String(problem['detail'])).toMatch(/POST \/api\/v1\/keys/)
    const empty = await postJson(app, '/api/v1/swap', {}, headers())
    expect(empty.status).toBe(401)
  })

  it('GET /api/v1/swap/{ref} needs a key too', async () => {
    const response = await get(app, '/api/v1/swap/swp_01KAAAAAAAAAAAAAAAAAAAAAAA')
    expect(response.status).toBe(401)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_key', reason: 'missing' })
  })
})

describe('POST /api/v1/swap: a signed quote becomes a transaction', () => {
  it('builds the quoted route with no agent fee, records it under the key, and reads it back', async () => {
    const id = await quoteId({ fromChain: 'BAS', toChain: 'POL', fromAmount: '500' })
    const response = await swap({ quoteId: id })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const result = SwapResult.parse(await readJson(response))
    const claims = verifyQuoteId(QUOTE_SECRET, id, nowMs)
    if (!claims.ok) throw new Error('the quote did not verify')
    expect(result).toMatchObject({
      status: 'built',
      fromChain: 'BAS',
      toChain: 'POL',
      fromAmount: '500',
      toAddress: getAddress(FROM_ADDRESS),
    })
    expect(result.route.id).toBe(claims.claims.routeId)
    expect(result.route.fees.agentCallFee).toBeNull()
    expect(result.toAmountMin).toBe((Number(claims.claims.toAmountMin) / 1e6).toString())

    expect(result.transactionRequest.to.toLowerCase()).toBe(ROUTER_ADDRESS)
    const call = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
    if (call.functionName !== 'execute') throw new Error(`decoded ${call.functionName}, not execute`)
    const [order] = call.args
    expect(order.amountIn).toBe(500_000_000n)
    expect(order.recipient.toLowerCase()).toBe(FROM_ADDRESS)
    expect(Buffer.from(order.ref.slice(2), 'hex').toString('utf8').replace(/\0+$/, '')).toBe(result.swapEaziRef)

    const stored = await store.getSwap(result.swapEaziRef)
    expect(stored).toMatchObject({ channel: 'api_key', keyId: 'key_0123456789abcdef01234567', payment: null, status: 'built' })

    const read = await get(app, `/api/v1/swap/${result.swapEaziRef}`, { 'x-swapeazi-key': KEY })
    expect(read.status).toBe(200)
    expect(read.headers.get('cache-control')).toBe('no-store')
    expect(read.headers.get('x-content-type-options')).toBe('nosniff')
    const record = SwapRecordWire.parse(await readJson(read))
    expect(record).toMatchObject({
      swapEaziRef: result.swapEaziRef,
      status: 'built',
      channel: 'api_key',
      fromAmount: '500',
      toAmountMin: result.toAmountMin,
    })
    expect(record.transactionRequest).toEqual(result.transactionRequest)

    // Another key cannot see it, nor can anyone see a reference that does not exist.
    for (const [ref, key] of [
      [result.swapEaziRef, OTHER_KEY],
      ['swp_01KAAAAAAAAAAAAAAAAAAAAAAA', KEY],
      ['not-a-ref', KEY],
    ] as const) {
      const hidden = await get(app, `/api/v1/swap/${ref}`, { 'x-swapeazi-key': key })
      expect(hidden.status).toBe(404)
      expect(await readJson(hidden)).toMatchObject({ code: 'not_found' })
    }
    // A batch's reference is pointed at the route that answers it.
    const batch = await get(app, '/api/v1/swap/dsb_01KAAAAAAAAAAAAAAAAAAAAAAA', { 'x-swapeazi-key': KEY })
    expect(batch.status).toBe(404)
    expect(String((await readJson(batch))['detail'])).toContain('GET /api/v1/swap/dsb_01KAAAAAAAAAAAAAAAAAAAAAAA/status')
  })

  it('says by when the transaction must run: its deadline, and the destination deadline when a swap follows the bridge', async () => {
    const sameChain = await swap({ quoteId: await quoteId() })
    expect(sameChain.status).toBe(200)
    const result = SwapResult.parse(await readJson(sameChain))
    const call = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
    if (call.functionName !== 'execute') throw new Error(`decoded ${call.functionName}, not execute`)
    // Ten minutes after the build, and the order's own: the router refuses the transaction in any later block.
    expect(result.deadline).toBe(new Date(nowMs + 600_000).toISOString())
    expect(call.args[0].deadline).toBe(BigInt(nowMs / 1000 + 600))
    expect(result.destinationDeadline).toBeUndefined()
    expect(result.nextSteps.at(-1)).toContain(`mined by ${result.deadline}`)
    // On one chain the router's minOut holds it: toAmountMin arrives or nothing moves.
    expect(result.nextSteps.at(-1)).toContain(
      `At least ${result.toAmountMin} ${result.toToken} arrives, or the router reverts the transaction`,
    )

    // Over a bridge alone, the bridge's own minimum is what is sure to arrive.
    const bridgeOnly = SwapResult.parse(
      await readJson(await swap({ quoteId: await quoteId({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC' }) })),
    )
    expect(bridgeOnly.route.steps.map((step) => step.type)).toEqual(['bridge'])
    expect(bridgeOnly.nextSteps.at(-1)).toMatch(
      /Once it is mined, the bridge delivers at least [0-9.]+ USDC to the recipient on ARB(, or refunds the sender on BAS if no relayer fills it)?; if it reverts, nothing moves\.$/,
    )

    const thenSwap = await swap({ quoteId: await quoteId({ fromChain: 'BAS', toChain: 'POL', toToken: 'EURe' }) })
    expect(thenSwap.status).toBe(200)
    const crossChain = SwapResult.parse(await readJson(thenSwap))
    expect(crossChain.route.steps.map((step) => step.type)).toEqual(['bridge', 'swap'])
    // The source may be mined until its deadline; the bridge then takes up to the route's p95; the margin is that p95
    // again, and at least 30 minutes.
    const p95 = crossChain.route.estimatedDurationP95
    expect(crossChain.deadline).toBe(new Date(nowMs + 600_000).toISOString())
    expect(crossChain.destinationDeadline).toBe(new Date(nowMs + (600 + p95 + Math.max(p95, 1800)) * 1000).toISOString())
    // toAmountMin is promised only if the swap on POL runs: when it cannot meet that minimum or the bridge is late,
    // the executor hands over the bridged USDC (DestinationFallback), of which the bridge guarantees a minimum.
    const last = crossChain.nextSteps.at(-1) ?? ''
    expect(last).not.toMatch(/arrives or the swap does not happen/)
    const bridged = /the bridge carries at least ([0-9.]+) USDC to POL/.exec(last)?.[1]
    expect(Number(bridged)).toBeGreaterThan(0)
    expect(Number(bridged)).toBeLessThanOrEqual(Number(crossChain.route.steps[0]?.toAmount))
    expect(last).toContain(
      `Once it is mined, the bridge carries at least ${bridged} USDC to POL, where a swap gives the recipient at least ${crossChain.toAmountMin} EURe; if that swap cannot meet this minimum, or the bridge delivers after ${crossChain.destinationDeadline}, it does not run and the recipient gets the bridged USDC instead (at least ${bridged} USDC).`,
    )
    expect(crossChain.nextSteps.filter((step) => step.includes('destinationDeadline') || step.startsWith('If the bridge'))).toEqual([])
  })

  it('lets a quote to its sender name a recipient, and holds a quote that named one to it', async () => {
    const open = await swap({ quoteId: await quoteId(), toAddress: RECIPIENT })
    expect(open.status).toBe(200)
    expect(SwapResult.parse(await readJson(open)).toAddress).toBe(RECIPIENT)

    const bound = await quoteId({ toAddress: RECIPIENT })
    expect((await swap({ quoteId: bound, toAddress: RECIPIENT.toLowerCase() })).status).toBe(200)
    const redirected = await swap({ quoteId: bound, toAddress: '0x3333333333333333333333333333333333333333' })
    expect(redirected.status).toBe(400)
    expect(await readJson(redirected)).toMatchObject({ code: 'invalid_request', errors: [{ field: 'toAddress' }] })
    const badChecksum = await swap({ quoteId: await quoteId(), toAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' })
    expect(badChecksum.status).toBe(400)
  })

  it('refuses an unknown field naming the field meant, so a misspelled recipient never builds to the sender', async () => {
    const misspelled = await swap({ quoteId: await quoteId(), recipient: RECIPIENT })
    expect(misspelled.status).toBe(400)
    const body = await readJson(misspelled)
    expect(body).toMatchObject({ code: 'invalid_request' })
    const messages = (errors: unknown): string => (errors as { message: string }[]).map((error) => error.message).join(' ')
    expect(messages(body['errors'])).toContain('"recipient" (did you mean toAddress?)')
    const amount = await readJson(await swap({ quoteId: await quoteId(), fromAmount: '5' }))
    expect(messages(amount['errors'])).toContain('quote again and send the new quoteId')
  })

  it('tells the agent first not to sign when the transaction calls the inert default router (no router of its own)', async () => {
    const deployed = SwapResult.parse(await readJson(await swap({ quoteId: await quoteId() })))
    expect(deployed.nextSteps.join(' ')).not.toContain('Do not sign')
    const inert = testApp({ store, clock: () => nowMs, routerOn: () => routerDeployment(DEFAULT_ROUTER_ADDRESS) })
    const response = await postJson(inert, '/api/v1/swap', { quoteId: await quoteId() }, { 'x-swapeazi-key': KEY })
    const result = SwapResult.parse(await readJson(response))
    expect(result.transactionRequest.to).toBe(DEFAULT_ROUTER_ADDRESS)
    expect(result.nextSteps[0]).toMatch(
      /^Do not sign these transactions: they call 0x239CdA85d5486f3EC101538b4b7A925113C15045 on [A-Z]{3}, SwapEazi's inert default router/,
    )
  })

  it('refuses an expired quote with 422 quote_expired', async () => {
    const id = await quoteId()
    nowMs = NOW_MS + 60_000
    try {
      const response = await swap({ quoteId: id })
      expect(response.status).toBe(422)
      expect(await readJson(response)).toMatchObject({ code: 'quote_expired', reason: 'expired' })
    } finally {
      nowMs = NOW_MS
    }
  })

  it.each([
    [
      'altered (amount raised, MAC kept)',
      (id: string) => {
        const [, payload = '', mac = ''] = id.split('.')
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as QuoteClaims
        return `q1.${Buffer.from(JSON.stringify({ ...claims, toAmountMin: '999999999999' })).toString('base64url')}.${mac}`
      },
      'bad_signature',
    ],
    [
      'signed by another deployment',
      (id: string) => {
        const [, payload = ''] = id.split('.')
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as QuoteClaims
        return signQuoteId(new TextEncoder().encode('someone-elses-quote-secret-32chars'), claims)
      },
      'bad_signature',
    ],
    ['not a quote id', () => 'hello', 'malformed'],
  ])('refuses a quote id that is %s with 400 invalid_quote', async (_name, alter, reason) => {
    const response = await swap({ quoteId: alter(await quoteId()) })
    expect(response.status).toBe(400)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_quote', reason })
  })

  it('re-checks the quote: a route no longer viable, or a promise the route cannot keep, is 422 quote_expired', async () => {
    const id = await quoteId()
    const verified = verifyQuoteId(QUOTE_SECRET, id, nowMs)
    if (!verified.ok) throw new Error('the quote did not verify')
    const resign = (changes: Partial<QuoteClaims>): string => signQuoteId(QUOTE_SECRET, { ...verified.claims, ...changes })

    const gone = await swap({ quoteId: resign({ routeId: 'ETH:USDC>no-such-venue>ETH:USDT' }) })
    expect(gone.status).toBe(422)
    expect(await readJson(gone)).toMatchObject({ code: 'quote_expired', reason: 'route_not_viable' })

    const moved = await swap({ quoteId: resign({ toAmountMin: (BigInt(verified.claims.toAmountMin) + 1n).toString() }) })
    expect(moved.status).toBe(422)
    const problem = await readJson(moved)
    expect(problem).toMatchObject({ code: 'quote_expired', reason: 'price_moved' })
    expect(String(problem['detail'])).toMatch(/Quote again/)

    expect((await swap({ quoteId: resign({}) })).status).toBe(200)
  })

  it.each([
    ['sender', { fromAddress: listed }, {}, 'fromAddress'],
    ['recipient named at the quote', { toAddress: listed }, {}, 'toAddress'],
    ['recipient named at the swap', {}, { toAddress: listed }, 'toAddress'],
  ])('screens the %s: 403 address_screened, nothing recorded', async (_name, quoteOverrides, swapExtra, field) => {
    const before = await store.sql.query('select count(*)::int as n from swaps')
    const response = await swap({ quoteId: await quoteId(quoteOverrides), ...swapExtra })
    expect(response.status).toBe(403)
    expect(await readJson(response)).toMatchObject({ code: 'address_screened', field })
    expect(await store.sql.query('select count(*)::int as n from swaps')).toEqual(before)
  })

  it.each([
    ['no quoteId', {}],
    ['a number for quoteId', { quoteId: 42 }],
    ['an unknown member', { quoteId: 'q1.a.b', fromAmount: '1' }],
    ['a bad toAddress', { quoteId: 'q1.a.b', toAddress: '0x12' }],
  ])('answers a body with %s with 400 invalid_request', async (_name, body) => {
    const response = await swap(body)
    expect(response.status).toBe(400)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_request' })
  })
})

describe('POST /api/v1/swap: concurrent swaps', () => {
  it('answers each of concurrent swaps only after the statement holding its record has committed, rows sharing statements', async () => {
    // The store's own connection, with every finished insert into swaps noted: which refs it carried.
    const committed = new Set<string>()
    let inserts = 0
    const noting: Sql = {
      ...store.sql,
      async query<Row>(text: string, params: readonly unknown[] = []) {
        const rows = await store.sql.query<Row>(text, params)
        if (text.startsWith('insert into swaps')) {
          inserts += 1
          for (const value of params) if (typeof value === 'string' && value.startsWith('swp_')) committed.add(value)
        }
        return rows
      },
    }
    const grouped = testApp({ store: createStore(noting), clock: () => nowMs })
    const id = await quoteId()
    const answeredBeforeCommit: string[] = []
    const refs = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const response = await postJson(grouped, '/api/v1/swap', { quoteId: id }, { 'x-swapeazi-key': KEY })
        expect(response.status).toBe(200)
        const { swapEaziRef } = await readJson<{ swapEaziRef: string }>(response)
        if (!committed.has(swapEaziRef)) answeredBeforeCommit.push(swapEaziRef)
        return swapEaziRef
      }),
    )
    expect(answeredBeforeCommit).toEqual([])
    expect(new Set(refs).size).toBe(12)
    expect(inserts).toBeLessThan(12)
    for (const ref of refs) expect(await store.getSwap(ref)).toMatchObject({ channel: 'api_key', keyId: 'key_0123456789abcdef01234567' })
  })
})

describe('/api/v1/swap/{ref}: other methods', () => {
  it('answers 405 with Allow: GET, HEAD, as the exact paths do', async () => {
    const response = await app.request('/api/v1/swap/swp_01KA0000000000000000000000', {
      method: 'DELETE',
      headers: { 'x-swapeazi-key': KEY },
    })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
    expect(await readJson(response)).toMatchObject({ code: 'method_not_allowed', allow: 'GET, HEAD' })
  })
})
