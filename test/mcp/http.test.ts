import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FREE_CALLS_PER_MONTH } from '../../src/service/getCorridorIntelligence.ts'
import { type TestApp, get, lazyMemoryStore, quoteBody, readJson, testApp } from '../http/testApp.ts'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { TOOL_NAMES, callTool, textOf } from './mcpHarness.ts'

// One PGlite for the file; the app has no MCP settings, so /mcp accepts loopback hosts only.
const store = lazyMemoryStore()
const app = testApp({ store })
let server: ListeningApp
let base = ''

beforeAll(async () => {
  server = await listenOnLoopback(app.fetch)
  base = server.base
})
afterAll(async () => {
  await server.close()
  await store.sql.close()
})

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
}
const toolCall = (id: number, name: string, args: Record<string, unknown>): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
})

/** A JSON-RPC POST to /mcp through app.request (no socket); `url` sets the Host the request is addressed to. */
function postMcp(on: TestApp, body: unknown, headers: Record<string, string> = {}, url = 'http://localhost/mcp'): Promise<Response> {
  return Promise.resolve(
    on.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    }),
  )
}

type RpcAnswer = { jsonrpc: string; id: number | null; result?: Record<string, unknown>; error?: { code: number; message: string } }

describe('/mcp over a real socket with the SDK StreamableHTTPClientTransport', () => {
  it('initializes, lists the six tools and quotes; stateless, so no session id is handed out', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`))
    const client = new Client({ name: 'swapeazi-http-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'swapeazi', version: '0.0.0-test' })
      expect(client.getInstructions()).toContain('swapeazi://capabilities')
      expect(transport.sessionId).toBeUndefined()
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES])
      const quote = await callTool(client, 'get_quote', quoteBody())
      expect(quote.isError, textOf(quote)).toBeFalsy()
      expect(quote.structuredContent).toMatchObject({
        supported: true,
        quote: { fromAmount: '1000', toAmount: '995', toAmountMin: '990.025' },
      })
      const refused = await callTool(client, 'get_quote', quoteBody({ fromChain: 'SOL' }))
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toMatch(/^SwapEazi answered 422 \(not_agent_callable\)/)
    } finally {
      await client.close()
    }
  })

  it('answers a POST with plain JSON (no SSE stream) carrying the request id', async () => {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(INITIALIZE),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('mcp-session-id')).toBeNull()
    const answer = (await response.json()) as RpcAnswer
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'swapeazi' } } })
  })
})

describe('/mcp methods', () => {
  it.each(['GET', 'DELETE'])('%s is 405: no sessions, no server-initiated stream', async (method) => {
    const response = await app.request('http://localhost/mcp', { method, headers: { accept: 'text/event-stream' } })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
    expect(await readJson(response)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST' },
      id: null,
    })
  })

  it('GET over the socket is 405 too, at once (a stateless GET must not open a stream that never ends)', async () => {
    const response = await fetch(`${base}/mcp`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5_000) })
    expect(response.status).toBe(405)
  })
})

describe('/mcp requests with malformed params', () => {
  it.each([
    ['tools/call', {}, 'params.name: expected string, received undefined'],
    ['tools/call', undefined, 'params: expected object, received undefined'],
    ['tools/call', { name: 42 }, 'params.name: expected string, received number'],
    ['tools/call', { name: 'get_quote', arguments: 'x' }, 'params.arguments: expected object, received string'],
    ['resources/read', {}, 'params.uri: expected string, received undefined'],
    ['tools/list', { cursor: 5 }, 'params.cursor: expected string, received number'],
    ['initialize', {}, 'params.protocolVersion: expected string, received undefined'],
  ])('%s with params %j is -32602 (invalid params) in words an agent can act on, not -32603 and raw JSON', async (method, params, what) => {
    const response = await postMcp(app, { jsonrpc: '2.0', id: 7, method, ...(params === undefined ? {} : { params }) })
    expect(response.status).toBe(200)
    const answer = await readJson<RpcAnswer>(response)
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } })
    expect(answer.error?.message).toContain(`Invalid params for ${method}: ${what}`)
    expect(answer.error?.message).not.toMatch(/[[{]/)
  })

  it('answers the rest of a batch as usual', async () => {
    const response = await postMcp(app, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      toolCall(3, 'probe_corridor', { fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'USDC' }),
    ])
    const answers = await readJson<RpcAnswer[]>(response)
    expect(answers.map((answer) => [answer.id, answer.error?.code ?? 'result'])).toEqual([
      [1, -32602],
      [2, 'result'],
      [3, 'result'],
    ])
  })

  // Review of issue 15: the SDK's transport answered -32700 (parse error) to JSON that is not a JSON-RPC message, and
  // 202 with no body to an empty batch; JSON-RPC 2.0 says -32600, as the stdio transport answers.
  it.each([
    ['a string', 'hello', null],
    ['a request whose id is null', { jsonrpc: '2.0', id: null, method: 'ping' }, null],
    ['an id without a method', { jsonrpc: '2.0', id: 1 }, null],
    ['a request with _meta that is no object', { jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: [] } }, 4],
    ['an empty batch', [], null],
    ['a batch with a non-message', [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 5], null],
  ])('answers %s with -32600 (invalid request), by its id where it has one', async (_name, body, id) => {
    const response = await postMcp(app, body)
    expect(response.status).toBe(400)
    expect(await readJson<RpcAnswer>(response)).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32600 } })
  })

  it('answers a body that is not JSON with -32700, and leaves the Accept and Content-Type checks to the SDK', async () => {
    const notJson = await app.request('http://localhost/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":',
    })
    expect(notJson.status).toBe(400)
    expect((await readJson<RpcAnswer>(notJson)).error?.code).toBe(-32700)
    const wrongType = await app.request('http://localhost/mcp', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: '"hello"',
    })
    expect(wrongType.status).toBe(415)
  })

  it('leaves a tool it does not know to the SDK (an isError result naming it), and methods it does not serve to -32601', async () => {
    const unknownTool = await readJson<RpcAnswer>(await postMcp(app, toolCall(8, 'nope', {})))
    expect(unknownTool.result?.['isError']).toBe(true)
    const unserved = await readJson<RpcAnswer>(await postMcp(app, { jsonrpc: '2.0', id: 9, method: 'prompts/get', params: {} }))
    expect(unserved.error?.code).toBe(-32601)
  })
})

describe('/mcp Host and Origin allow-list (DNS rebinding)', () => {
  const FORBIDDEN = {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Forbidden: this Host or Origin is not allowed (SWAPEAZI_MCP_ALLOWED_HOSTS)' },
    id: null,
  }

  it('refuses a Host of evil.example.com with 403 and a JSON-RPC error', async () => {
    const response = await postMcp(app, INITIALIZE, { host: 'evil.example.com' })
    expect(response.status).toBe(403)
    expect(await readJson(response)).toEqual(FORBIDDEN)
  })

  it('refuses the request addressed to evil.example.com itself', async () => {
    const response = await postMcp(app, INITIALIZE, {}, 'http://evil.example.com/mcp')
    expect(response.status).toBe(403)
  })

  it('refuses an Origin of http://evil.example.com on an allowed Host', async () => {
    const response = await postMcp(app, INITIALIZE, { host: 'localhost:8402', origin: 'http://evil.example.com' })
    expect(response.status).toBe(403)
    expect(await readJson(response)).toEqual(FORBIDDEN)
  })

  it('refuses a GET from a foreign host with 403 before the 405', async () => {
    const response = await app.request('http://localhost/mcp', { method: 'GET', headers: { host: 'evil.example.com' } })
    expect(response.status).toBe(403)
  })

  it('refuses look-alikes: a suffix, a userinfo trick and an opaque origin', async () => {
    for (const headers of [
      { host: 'localhost.evil.example.com' },
      { host: '127.0.0.1.nip.io' },
      { host: 'localhost', origin: 'http://localhost@evil.example.com' },
      { host: 'localhost', origin: 'null' },
    ])
      expect((await postMcp(app, INITIALIZE, headers)).status, JSON.stringify(headers)).toBe(403)
  })

  it.each([
    [{ host: 'localhost' }],
    [{ host: 'localhost:8402' }],
    [{ host: '127.0.0.1' }],
    [{ host: '127.0.0.1:8402', origin: 'http://127.0.0.1:8402' }],
    [{ host: '[::1]:8402' }],
    [{ host: 'LOCALHOST:3000', origin: 'http://localhost:5173' }],
  ])('accepts loopback %j', async (headers) => {
    const response = await postMcp(app, INITIALIZE, headers)
    expect(response.status).toBe(200)
    expect(await readJson<RpcAnswer>(response)).toMatchObject({ id: 1, result: { serverInfo: { name: 'swapeazi' } } })
  })

  it('accepts the hosts of a configured SWAPEAZI_MCP_ALLOWED_HOSTS, and only those', async () => {
    const configured = testApp({ store, mcp: { dailyBudgetAtomic: 0n, allowedHosts: ['mcp.swapeazi.example', 'agents.example.org'] } })
    expect((await postMcp(configured, INITIALIZE, { host: 'mcp.swapeazi.example' })).status).toBe(200)
    expect((await postMcp(configured, INITIALIZE, { host: 'agents.example.org:443', origin: 'https://mcp.swapeazi.example' })).status).toBe(
      200,
    )
    expect((await postMcp(configured, INITIALIZE, { host: 'evil.example.com' })).status).toBe(403)
    expect((await postMcp(configured, INITIALIZE, { host: 'mcp.swapeazi.example', origin: 'https://evil.example.com' })).status).toBe(403)
    // The list replaces the loopback default.
    expect((await postMcp(configured, INITIALIZE, { host: 'localhost' })).status).toBe(403)
  })
})

describe('/mcp counts per-IP limits against the remote agent', () => {
  it('two X-Forwarded-For callers each get their own free corridor-intelligence quota', async () => {
    const exhausted = '198.51.100.7'
    const other = '203.0.113.9'
    // Caller A spends its whole month on the HTTP endpoint.
    for (let call = 0; call < FREE_CALLS_PER_MONTH; call += 1) {
      const response = await get(app, '/api/v1/intelligence/corridor/BAS-ARB', { 'x-forwarded-for': exhausted })
      expect(response.status).toBe(200)
    }
    expect((await get(app, '/api/v1/intelligence/corridor/BAS-ARB', { 'x-forwarded-for': exhausted })).status).toBe(429)

    const viaMcp = async (ip: string | undefined, id: number): Promise<RpcAnswer> =>
      readJson<RpcAnswer>(
        await postMcp(app, toolCall(id, 'corridor_intelligence', { pair: 'BAS-ARB' }), ip === undefined ? {} : { 'x-forwarded-for': ip }),
      )

    // Through /mcp, A is still A: its tool call is refused with the quota's own words.
    const refused = await viaMcp(exhausted, 2)
    expect(refused.result?.['isError']).toBe(true)
    const [block] = (refused.result?.['content'] ?? []) as { text: string }[]
    expect(block?.text).toMatch(
      /^SwapEazi answered 429 \(rate_limited\): The free tier answers 100 corridor-intelligence calls per IP per calendar month \(UTC\), and this IP has used them\./,
    )
    // B, and a caller that names no IP, have their own quotas: the MCP server's requests do not pool them.
    for (const [ip, id] of [
      [other, 3],
      [undefined, 4],
    ] as const) {
      const answer = await viaMcp(ip, id)
      expect(answer.result?.['isError'], JSON.stringify(answer)).toBeUndefined()
      expect(answer.result?.['structuredContent']).toMatchObject({ tier: 'free', intelligence: { pair: 'BAS-ARB' } })
    }
  })
})
