import { describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { Problem } from '../../src/schemas/problem.ts'
import { APP_URL, get, KEY_SECRET, NOW_MS, postJson, postRaw, quoteBody, readJson, testApp } from './testApp.ts'

const app = testApp()
const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
const QUOTE = '/api/x402/quote'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

type ProblemBody = Problem & Record<string, unknown>

/**
 * Asserts an RFC 9457 answer: status, problem+json, the stable code, the status echoed in the body, a request id on
 * the response, and for 400 the offending fields. Returns the body for further checks.
 */
async function expectProblem(
  response: Response | Promise<Response>,
  status: number,
  code: string,
  fields?: string[],
): Promise<ProblemBody> {
  const res = await response
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(res.headers.get('content-type')).toBe('application/problem+json')
  expect(res.headers.get('x-request-id')).toMatch(/\S/)
  const body = JSON.parse(text) as ProblemBody
  const parsed = Problem.safeParse(body)
  expect(parsed.success, text).toBe(true)
  expect(body).toMatchObject({ status, code, type: `https://docs.swapeazi.com/errors/${code}` })
  expect(body.title).toMatch(/\S/)
  expect(body.detail).toMatch(/\S/)
  expect(body.requestId).toBe(res.headers.get('x-request-id'))
  if (fields) expect((body.errors ?? []).map((e) => e.field)).toEqual(fields)
  return body
}

const postQuote = (overrides: Record<string, unknown>) => postJson(app, QUOTE, quoteBody(overrides))

describe('x-request-id', () => {
  it('is set on every kind of response', async () => {
    const responses = await Promise.all([
      get(app, '/api/v1/health'),
      postQuote({}),
      postQuote({ fromAmount: 1 }),
      get(app, '/nowhere'),
      get(app, QUOTE),
      postRaw(app, QUOTE, 'x'.repeat(70_000)),
    ])
    for (const response of responses) expect(response.headers.get('x-request-id'), String(response.status)).toMatch(UUID)
  })

  it('echoes a sane caller-supplied id, up to 128 characters', async () => {
    for (const id of ['abc-123', 'trace.A:b_c-9', 'x'.repeat(128)]) {
      const ok = await get(app, '/api/v1/health', { 'x-request-id': id })
      expect(ok.headers.get('x-request-id')).toBe(id)
      const bad = await postJson(app, QUOTE, {}, { 'x-request-id': id })
      expect(bad.headers.get('x-request-id')).toBe(id)
      expect((await readJson(bad)).requestId).toBe(id)
    }
  })

  it.each([
    ['200 characters', 'a'.repeat(200)],
    ['129 characters', 'a'.repeat(129)],
    ['spaces', 'has spaces in it'],
    ['a slash', 'a/b'],
    ['quotes and angle brackets', '"<script>"'],
  ])('replaces an id with %s by a fresh UUID', async (_label, id) => {
    const response = await get(app, '/api/v1/health', { 'x-request-id': id })
    expect(response.headers.get('x-request-id')).toMatch(UUID)
  })

  it('gives two requests without an id two different ids', async () => {
    const [a, b] = await Promise.all([get(app, '/api/v1/health'), get(app, '/api/v1/health')])
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'))
  })
})

describe('POST /api/x402/quote: the body itself (DESIGN 6, 7.2)', () => {
  it('missing body with Content-Type application/json: 400 naming (body)', async () => {
    const response = app.request(QUOTE, { method: 'POST', headers: { 'content-type': 'application/json' } })
    const body = await expectProblem(response, 400, 'invalid_request', ['(body)'])
    expect(body.detail).toMatchInlineSnapshot(`"The request body is empty; send QuoteParams as a JSON object."`)
  })

  it('whitespace-only body: 400 naming (body)', async () => {
    await expectProblem(postRaw(app, QUOTE, '  \n '), 400, 'invalid_request', ['(body)'])
  })

  it('missing body and no Content-Type: 400 naming (body), not 415 (the body is what is missing)', async () => {
    await expectProblem(app.request(QUOTE, { method: 'POST' }), 400, 'invalid_request', ['(body)'])
  })

  it('non-JSON "{": 400 naming (body)', async () => {
    const body = await expectProblem(postRaw(app, QUOTE, '{'), 400, 'invalid_request', ['(body)'])
    expect(body.detail).toMatchInlineSnapshot(`"The request body is not valid JSON."`)
  })

  it('Content-Type text/plain, even with a valid JSON body: 415', async () => {
    const body = await expectProblem(postRaw(app, QUOTE, JSON.stringify(quoteBody()), 'text/plain'), 415, 'unsupported_media_type')
    expect(body.received).toBe('text/plain')
  })

  it.each([
    ['application/x-www-form-urlencoded', 'fromChain=ETH'],
    ['multipart/form-data; boundary=x', '--x--'],
    ['application/jsonp', JSON.stringify(quoteBody())],
  ])('Content-Type %s: 415', async (contentType, text) => {
    await expectProblem(postRaw(app, QUOTE, text, contentType), 415, 'unsupported_media_type')
  })

  it('accepts application/json with a charset parameter', async () => {
    const response = await postRaw(app, QUOTE, JSON.stringify(quoteBody()), 'application/json; charset=utf-8')
    expect(response.status).toBe(200)
    expect((await postRaw(app, QUOTE, JSON.stringify(quoteBody()), 'application/json;charset="UTF8"')).status).toBe(200)
  })

  it.each(['application/json; charset=latin1', 'application/json; charset=utf-16'])(
    'Content-Type %s: 415, as the body is read as UTF-8 (review of issue 15)',
    async (contentType) => {
      await expectProblem(postRaw(app, QUOTE, JSON.stringify(quoteBody()), contentType), 415, 'unsupported_media_type')
    },
  )

  it('a Content-Encoding other than identity: 415, as the body is not decompressed', async () => {
    const response = app.request(QUOTE, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: JSON.stringify(quoteBody()),
    })
    const body = await expectProblem(response, 415, 'unsupported_media_type')
    expect(body.detail).toContain('uncompressed')
  })

  it.each([
    ['a field at the top', (text: string) => text.replace('{', '{"toAddress":"0x3333333333333333333333333333333333333333",')],
    ['a field spelt with an escape', (text: string) => text.replace('{', '{"fromAmo\\u0075nt":"5",')],
  ])('a body naming %s twice: 400 on (body), never the last one silently (review of issue 15)', async (_label, twice) => {
    const text = twice(JSON.stringify(quoteBody({ toAddress: '0x2222222222222222222222222222222222222222' })))
    const body = await expectProblem(postRaw(app, QUOTE, text), 400, 'invalid_request', ['(body)'])
    expect(body.detail).toContain('twice')
  })

  it('a colon-quote inside a string value is no repeated key', async () => {
    // The text holds more `":` than members, so it is scanned: the scan finds each key once.
    const response = await postRaw(app, QUOTE, JSON.stringify(quoteBody({ fromToken: 'US":DC' })))
    expect(response.status).not.toBe(500)
    expect(JSON.stringify(await readJson(response))).not.toContain('twice')
  })

  it.each([
    ['an array', [quoteBody()]],
    ['a number', 1000],
    ['a string', 'ETH USDC'],
    ['null', null],
    ['true', true],
  ])('JSON %s as the body: 400 naming (body)', async (_label, value) => {
    await expectProblem(postJson(app, QUOTE, value), 400, 'invalid_request', ['(body)'])
  })

  it('an empty object: 400 naming each required field', async () => {
    await expectProblem(postJson(app, QUOTE, {}), 400, 'invalid_request', [
      'fromChain',
      'toChain',
      'fromToken',
      'toToken',
      'fromAmount',
      'fromAddress',
    ])
  })

  it('a 1 MiB body: 413 payload_too_large with the limit', async () => {
    const big = JSON.stringify({ ...quoteBody(), padding: 'x'.repeat(1024 * 1024) })
    const body = await expectProblem(postRaw(app, QUOTE, big), 413, 'payload_too_large')
    expect(body.limitBytes).toBe(64 * 1024)
  })

  it('a 1 MiB body streamed without Content-Length (chunked): 413 payload_too_large', async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ ...quoteBody(), padding: 'x'.repeat(1024 * 1024) }))
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += 16_384) controller.enqueue(bytes.slice(offset, offset + 16_384))
        controller.close()
      },
    })
    const response = app.request(QUOTE, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' })
    await expectProblem(response, 413, 'payload_too_large')
  })

  // Review of issue 15, defect 9: the messages are right on every path that reads a body, not only the quotes.
  it.each(['/api/x402/quote', '/api/v1/swap/swp_01KA0000000000000000000000/transaction', '/mcp'])(
    "a body over 64 KiB to %s: 413 whose message names no other endpoint's body",
    async (path) => {
      const body = await expectProblem(postRaw(app, path, 'x'.repeat(64 * 1024 + 1)), 413, 'payload_too_large')
      expect(body.detail).toBe(
        'The body is larger than 65536 bytes, the most any request to this service may carry; every body it reads fits in far less.',
      )
    },
  )

  it.each([
    ['/api/v1/quote', 'QuoteParams'],
    ['/api/v1/swap/swp_01KA0000000000000000000000/transaction', 'TransactionHint'],
  ])('an empty body to %s: 400 naming its own body, %s', async (path, bodyName) => {
    const body = await expectProblem(postRaw(app, path, ''), 400, 'invalid_request', ['(body)'])
    expect(body.detail).toBe(`The request body is empty; send ${bodyName} as a JSON object.`)
  })

  it('a body just under 64 KiB is read (and here quoted)', async () => {
    // Padded with whitespace, which JSON allows between tokens: an unknown field would be refused.
    const base = JSON.stringify(quoteBody())
    const text = `{${' '.repeat(64 * 1024 - base.length)}${base.slice(1)}`
    expect(text.length).toBe(64 * 1024)
    expect((await postRaw(app, QUOTE, text)).status).toBe(200)
  })

  // Found in the session after issue 15's review: the check for repeated keys walked the body recursively.
  it.each([
    ['arrays', (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`, []],
    ['objects', (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, []],
    [
      'arrays under a field named twice',
      (depth: number) => `{"fromChain":${'['.repeat(depth)}${']'.repeat(depth)},"fromChain":1}`,
      ['twice'],
    ],
  ])('a body of %s nested as deep as 64 KiB allows: 400, not the stack overflowing into a 500', async (_label, nest, says) => {
    const text = nest(Math.floor((64 * 1024 - 40) / 6))
    expect(text.length).toBeLessThanOrEqual(64 * 1024)
    const body = await expectProblem(postRaw(app, QUOTE, text), 400, 'invalid_request')
    for (const word of says) expect(body.detail).toContain(word)
  })

  const withBytes = (text: string, marker: string, bytes: number[]): Uint8Array => {
    const encoded = new TextEncoder().encode(text)
    const at = text.indexOf(marker)
    return new Uint8Array([...encoded.slice(0, at), ...bytes, ...encoded.slice(at + marker.length)])
  }
  const postBytes = (bytes: Uint8Array, headers: Record<string, string> = {}) =>
    app.request(QUOTE, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: bytes })

  it.each([
    ['a lone 0xFF', [0xff]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['a UTF-16 surrogate encoded as UTF-8', [0xed, 0xa0, 0x80]],
  ])('a body whose bytes are not UTF-8 (%s): 400 on (body), never echoed as U+FFFD', async (_label, bytes) => {
    const body = await expectProblem(
      postBytes(withBytes(JSON.stringify(quoteBody({ fromToken: 'US#DC' })), '#', bytes)),
      400,
      'invalid_request',
      ['(body)'],
    )
    expect(body.detail).toMatch(/^The request body is not valid UTF-8/)
    expect(JSON.stringify(body)).not.toContain('\uFFFD')
  })

  it('bytes that are not UTF-8 under a Content-Encoding: the 415 that says why, not the UTF-8 400', async () => {
    const response = postBytes(withBytes(JSON.stringify(quoteBody()), 'ETH', [0x1f, 0x8b, 0x08]), { 'content-encoding': 'gzip' })
    await expectProblem(response, 415, 'unsupported_media_type')
  })

  it('a byte-order mark is skipped; U+FFFD sent as such is refused as bytes that are not UTF-8 are, escaped it is data', async () => {
    const withBom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JSON.stringify(quoteBody()))])
    expect((await postBytes(withBom)).status).toBe(200)
    await expectProblem(postJson(app, QUOTE, quoteBody({ fromToken: 'US\uFFFDDC' })), 400, 'invalid_request', ['(body)'])
    const escaped = JSON.stringify(quoteBody({ fromToken: 'US#DC' })).replace('#', '\\uFFFD')
    const body = await expectProblem(postRaw(app, QUOTE, escaped), 422, 'unsupported_token')
    expect(body.detail).toContain('US\uFFFDDC')
  })
})

describe('POST /api/x402/quote: fields (spec 2.1, DESIGN 3, 7.1-7.5)', () => {
  it('fromAmount as a number: 400 on fromAmount', async () => {
    const body = await expectProblem(postQuote({ fromAmount: 1000 }), 400, 'invalid_request', ['fromAmount'])
    expect(body.detail).toMatchInlineSnapshot(
      `"The request body failed validation: fromAmount Invalid input: expected string, received number."`,
    )
  })

  it.each(['1e3', '-1', ' 1', '1 ', '', '1.', '.5', '1,000', '0x10', 'NaN', 'Infinity', '１'])(
    'fromAmount %j: 400 on fromAmount',
    async (fromAmount) => {
      await expectProblem(postQuote({ fromAmount }), 400, 'invalid_request', ['fromAmount'])
    },
  )

  it.each(['0', '0.0', '000.000000'])('fromAmount %j (zero): 400 on fromAmount', async (fromAmount) => {
    const body = await expectProblem(postQuote({ fromAmount }), 400, 'invalid_request', ['fromAmount'])
    expect(body.errors?.[0]?.message).toBe('must be greater than 0')
  })

  it('fromAmount with 7 fraction digits for 6-decimal USDC: 400, never rounded', async () => {
    const body = await expectProblem(postQuote({ fromAmount: '1.0000001' }), 400, 'invalid_request', ['fromAmount'])
    expect(body.detail).toMatchInlineSnapshot(`"fromAmount USDC on ETH has 6 decimals; send at most 6 fraction digits."`)
  })

  it('fromAmount with 19 fraction digits for 18-decimal DAI: 400', async () => {
    await expectProblem(postQuote({ fromToken: 'DAI', fromAmount: '1.0000000000000000001' }), 400, 'invalid_request', ['fromAmount'])
  })

  it('fromAmount longer than 80 characters: 400', async () => {
    await expectProblem(postQuote({ fromAmount: '1'.repeat(81) }), 400, 'invalid_request', ['fromAmount'])
  })

  it.each([
    ['fromChain', 'XYZ'],
    ['toChain', 'XYZ'],
    ['fromChain', 'base'],
    ['fromChain', ''],
    ['toChain', 42],
  ])('%s %j (not a chain code): 400 on that field', async (field, value) => {
    await expectProblem(postQuote({ [field]: value }), 400, 'invalid_request', [field])
  })

  it("an unknown token on a known chain: 422 unsupported_token listing the chain's tokens", async () => {
    const body = await expectProblem(postQuote({ toChain: 'ARB', toToken: 'EURe' }), 422, 'unsupported_token')
    expect(body).toMatchObject({ field: 'toToken', chain: 'ARB', symbol: 'EURe', listed: ['USDC', 'USDT', 'DAI', 'USDe', 'sUSDe'] })
    expect(body.detail).toMatchInlineSnapshot(`"EURe is not listed on ARB. Tokens on ARB: USDC, USDT, DAI, USDe, sUSDe."`)
  })

  it('an unknown fromToken: 422 unsupported_token on fromToken', async () => {
    const body = await expectProblem(postQuote({ fromToken: 'DOGE' }), 422, 'unsupported_token')
    expect(body.field).toBe('fromToken')
    expect(body.detail).toContain('USDC, USDT, DAI')
  })

  it.each([
    ['fromChain', { fromChain: 'SOL' }],
    ['toChain', { toChain: 'SOL', toToken: 'USDC' }],
    ['fromChain', { fromChain: 'TRX', fromToken: 'USDT-TRC20', toChain: 'BAS', toToken: 'USDC' }],
    ['toChain', { toChain: 'TRX', toToken: 'USDT-TRC20' }],
  ])('SOL or TRX as %s: 422 not_agent_callable with the appUrl (DESIGN 7.1)', async (field, overrides) => {
    const body = await expectProblem(postQuote(overrides), 422, 'not_agent_callable')
    expect(body).toMatchObject({ field, appUrl: APP_URL })
    expect(body.detail).toContain(APP_URL)
  })

  // Audit of issue 15: with the chain's own (base58) addresses, the request these corridors really get, the answer was
  // 400 "must be 0x followed by 40 hex characters" on the address, which sent agents to invent an EVM wallet.
  it.each([
    [
      'fromChain',
      { fromChain: 'TRX', fromToken: 'USDT-TRC20', toChain: 'BAS', toToken: 'USDC', fromAddress: 'TN3W4H6rK2ce4vX9YnFQHwKENnHjoxb3m9' },
    ],
    ['toChain', { toChain: 'sol', toToken: 'USDC', toAddress: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV' }],
    ['fromChain', { fromChain: 'SOL', fromAddress: '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV', fromAmount: 'lots' }],
  ])(
    "SOL or TRX as %s with that chain's own addresses: still 422 not_agent_callable, not a 400 on the address",
    async (field, overrides) => {
      for (const path of ['/api/x402/quote', '/api/v1/quote', '/api/x402/swap']) {
        const response = await postJson(app, path, quoteBody(overrides), path === '/api/v1/quote' ? { 'x-swapeazi-key': KEY } : {})
        const body = await expectProblem(Promise.resolve(response), 422, 'not_agent_callable')
        expect(body).toMatchObject({ field, appUrl: APP_URL })
      }
    },
  )

  it('SOL as fromChain: pinned detail', async () => {
    const body = await expectProblem(postQuote({ fromChain: 'SOL' }), 422, 'not_agent_callable')
    expect(body.detail).toMatchInlineSnapshot(
      `"SOL is listed for discovery but is not agent-callable: it needs a user-signed flow. Direct the user to https://app.example.test."`,
    )
  })

  it.each(['0x123', 'hello', '', `0x${'g'.repeat(40)}`, '1111111111111111111111111111111111111111', ` ${`0x${'1'.repeat(40)}`}`, 42])(
    'fromAddress %j: 400 on fromAddress',
    async (fromAddress) => {
      await expectProblem(postQuote({ fromAddress }), 400, 'invalid_request', ['fromAddress'])
    },
  )

  it('fromAddress with a mixed-case checksum that does not match: 400 on fromAddress', async () => {
    // 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed is the EIP-55 example; one letter's case changed.
    const body = await expectProblem(postQuote({ fromAddress: '0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }), 400, 'invalid_request', [
      'fromAddress',
    ])
    expect(body.errors?.[0]?.message).toContain('checksum')
  })

  it('fromAddress all lowercase or correctly checksummed: accepted', async () => {
    for (const fromAddress of ['0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'])
      expect((await postQuote({ fromAddress })).status, fromAddress).toBe(200)
  })

  it('fromAddress in all-uppercase hex carries no checksum and is accepted, like all-lowercase', async () => {
    const response = await postQuote({ fromAddress: '0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED' })
    expect(response.status).toBe(200)
  })

  it.each([
    ['-0.1', -0.1],
    ['0.11', 0.11],
    ['1', 1],
    ['the string "0.005"', '0.005'],
    ['null', null],
    ['true', true],
  ])('slippage %s: 400 on slippage', async (_label, slippage) => {
    await expectProblem(postQuote({ slippage }), 400, 'invalid_request', ['slippage'])
  })

  it('slippage below 1e-18 (not representable in 18-decimal fixed point): 400 on slippage', async () => {
    await expectProblem(postRaw(app, QUOTE, JSON.stringify(quoteBody()).replace(/}$/, ',"slippage":1e-19}')), 400, 'invalid_request', [
      'slippage',
    ])
  })

  it('the same token on the same chain: 400 on toToken', async () => {
    const body = await expectProblem(postQuote({ toToken: 'usdc' }), 400, 'invalid_request', ['toToken'])
    expect(body.detail).toContain('same token')
  })

  it('several bad fields at once: 400 naming each', async () => {
    const body = await expectProblem(postQuote({ fromChain: 'XYZ', fromAmount: 1, slippage: 2 }), 400, 'invalid_request')
    expect((body.errors ?? []).map((e) => e.field).sort()).toEqual(['fromAmount', 'fromChain', 'slippage'])
  })
})

describe('routing errors', () => {
  it('an unknown path: 404 not_found problem', async () => {
    const body = await expectProblem(get(app, '/api/v2/quote'), 404, 'not_found')
    expect(body.instance).toBe('/api/v2/quote')
    expect(body.detail).toMatchInlineSnapshot(
      `"No endpoint at /api/v2/quote. GET /openapi.json lists every endpoint of the HTTP API (MCP is at /mcp)."`,
    )
  })

  it('POST to an unknown path: 404, the body is never read', async () => {
    await expectProblem(postJson(app, '/api/x402/swap-now', quoteBody()), 404, 'not_found')
  })

  it.each([
    ['GET', '/api/x402/quote', 'POST'],
    ['PUT', '/api/mpp/quote', 'POST'],
    ['DELETE', '/api/v1/quote', 'POST'],
    ['POST', '/api/mpp/routes', 'GET, HEAD'],
    ['POST', '/api/v1/health', 'GET, HEAD'],
    ['PATCH', '/openapi.json', 'GET, HEAD'],
  ])('%s %s: 405 with Allow: %s', async (method, path, allow) => {
    const response = await app.request(path, { method })
    expect(response.headers.get('allow')).toBe(allow)
    const body = await expectProblem(response, 405, 'method_not_allowed')
    expect(body.allow).toBe(allow)
  })

  it('answers a CORS preflight for the quote endpoint', async () => {
    const response = await app.request(QUOTE, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
    expect(response.headers.get('access-control-allow-methods')).toContain('POST')
  })

  it('answers an OPTIONS without Origin as any other method: 405 with Allow, not as a preflight', async () => {
    // Review of issue 15: Access-Control-Request-Method alone was answered 204 as if a browser had asked.
    for (const path of [QUOTE, '/api/v1/swap/swp_00000000000000000000000000000000']) {
      const response = await app.request(path, { method: 'OPTIONS', headers: { 'access-control-request-method': 'GET' } })
      expect(response.headers.get('access-control-allow-methods')).toBeNull()
      await expectProblem(response, 405, 'method_not_allowed')
    }
  })
})
