import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import type { RateLimits } from '../../src/auth/rateLimits.ts'
import { MCP_FREE_KEY_ADVICE } from '../../src/mcp/serviceClient.ts'
import type { ToolContext } from '../../src/mcp/tool.ts'
import { createToolContext } from '../../src/mcp/toolContext.ts'
import { FREE_KEY_RAISES_LIMIT } from '../../src/schemas/keys.ts'
import { FROM_ADDRESS, get, KEY_SECRET, lazyMemoryStore, NOW_MS, testApp } from '../http/testApp.ts'
import { callTool, connectInMemory, inProcessClient, textOf } from './mcpHarness.ts'

// The /api/v1/* rate limit as MCP tools meet it: a configured key (SWAPEAZI_API_KEY) is sent on every /api/v1/* call,
// so the tools are counted under the key, not the anonymous per-IP limit; without one, the 429 a tool relays says what
// the operator of the MCP server can configure, since the tool's caller cannot send a key.

const LIMITS: RateLimits = { anonymous: 2, free: 10, pro: 20, holdRefusalsMs: 0 }
const store = lazyMemoryStore()
// The clock stands at the start of a minute's window: every count below is in one window, with 60 s left.
const app = testApp({ store, rateLimits: LIMITS })
const key = (id: string): string => signApiKey(KEY_SECRET, { v: 1, id, tier: 'free', iat: NOW_MS / 1000 })

const quote = { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000', fromAddress: FROM_ADDRESS }
/** One call of each tool that reads /api/v1/* anonymously unless the client sends the key. */
const V1_CALLS: readonly { tool: string; args: Record<string, unknown> }[] = [
  { tool: 'track_swap', args: { ref: 'swp_01ARZ3NDEKTSV4RRFFQ69G5FAV' } },
  { tool: 'probe_corridor', args: { fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC' } },
  { tool: 'get_quote', args: { ...quote, ranked: true } },
]

const toolContext = (ip: string, apiKey?: string): ToolContext =>
  createToolContext({
    client: inProcessClient(app, ip),
    settings: { dailyBudgetAtomic: 0n, ...(apiKey === undefined ? {} : { apiKey }) },
    budget: store.budget,
    clock: () => NOW_MS,
    log: pino({ level: 'silent' }),
  })

/** The RateLimit field the service answers a request from `ip` (with `apiKey` when given): whose count, how many left. */
async function rateLimitOf(ip: string, apiKey?: string): Promise<string | null> {
  const headers = { 'x-forwarded-for': ip, ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) }
  return (await get(app, '/api/v1/health', headers)).headers.get('ratelimit')
}

afterAll(async () => {
  await store.sql.close()
})

describe('MCP tools and the /api/v1/* rate limit', () => {
  it.each([
    // createToolContext, as stdio with the embedded service and /mcp build it.
    { label: 'from createToolContext', ip: '203.0.113.31', keyId: 'key_0123456789abcdef0123c001', bare: false },
    // A bare context, as stdio builds it for a remote service when no wallet is configured.
    { label: 'from a bare context', ip: '203.0.113.32', keyId: 'key_0123456789abcdef0123c002', bare: true },
  ])('counts every /api/v1/* call of a tool with a configured key under the key, not the IP ($label)', async ({ ip, keyId, bare }) => {
    const apiKey = key(keyId)
    const context = bare ? { client: inProcessClient(app, ip), apiKey } : toolContext(ip, apiKey)
    const connected = await connectInMemory(context)
    try {
      // Three calls past an anonymous limit of 2: under the key, none is refused for the rate.
      for (const call of V1_CALLS) {
        const result = await callTool(connected.client, call.tool, call.args)
        expect(JSON.stringify(result.content), call.tool).not.toMatch(/rate_limited/)
      }
    } finally {
      await connected.close()
    }
    // The key's count holds the three calls and this one (10 - 4 left); the IP's anonymous count only this one.
    expect(await rateLimitOf(ip, apiKey)).toBe('"free";r=6;t=60')
    expect(await rateLimitOf(ip)).toBe('"anonymous";r=1;t=60')
  })

  it('says over MCP what the operator configures to raise the anonymous limit, in place of sending a key', async () => {
    const ip = '203.0.113.33'
    for (let call = 0; call < LIMITS.anonymous; call++) expect(await rateLimitOf(ip)).not.toBeNull()
    const connected = await connectInMemory(toolContext(ip))
    try {
      const result = await callTool(connected.client, 'track_swap', { ref: 'swp_01ARZ3NDEKTSV4RRFFQ69G5FAV' })
      expect(result.isError).toBe(true)
      const text = textOf(result)
      expect(text).toContain(MCP_FREE_KEY_ADVICE)
      expect(text).not.toContain(FREE_KEY_RAISES_LIMIT)
      expect(text).toMatchInlineSnapshot(
        `"SwapEazi answered 429 (rate_limited): Requests without a key are limited to 2 per minute per IP, refused credentials included; ask the operator of this MCP server to raise it: set a free key (POST /api/v1/keys) in SWAPEAZI_API_KEY, plus SWAPEAZI_MCP_SHARE_API_KEY=true when agents call the server over HTTP at /mcp. Retry after 60 s."`,
      )
    } finally {
      await connected.close()
    }
  })
})
