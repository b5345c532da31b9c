import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MCP_FREE_KEY_ADVICE } from '../../src/mcp/serviceClient.ts'
import { NO_WALLET } from '../../src/mcp/tools/buildSwap.ts'
import { createToolContext } from '../../src/mcp/toolContext.ts'
import { agentTextOffences as offences } from '../support/agentText.ts'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { APP_URL, FROM_ADDRESS, KEY_SECRET, lazyMemoryStore, NOW_MS, type TestApp, testApp } from '../http/testApp.ts'
import { type ConnectedClient, TOOL_NAMES, callTool, connectInMemory, inProcessClient } from './mcpHarness.ts'

/**
 * Issue 14 item 12 for the MCP tools: a model reads these texts, and the tool has its own settings, so a text names no
 * HTTP header (X-PAYMENT, x-swapeazi-key, Authorization:) besides what test/support/agentText.ts forbids.
 */
const HEADER_NAMES = /X-PAYMENT|x-swapeazi-key|Authorization:/i
const ENV_NAME = /\bSWAPEAZI_[A-Z_]+\b/g
/**
 * The allowances, texts that tell the operator (who configures this server) what to set: build_swap's no-wallet
 * message names the wallet and budget variables, and corridor_intelligence's pro-key hints (said instead of the HTTP
 * header, see forTheTool) name SWAPEAZI_API_KEY beside "the operator of this MCP server". So does the anonymous rate
 * limit's advice (MCP_FREE_KEY_ADVICE, said instead of "a free key raises that", which a tool's caller cannot send),
 * with SWAPEAZI_MCP_SHARE_API_KEY, without which the operator's key does not serve /mcp's callers. Any other
 * environment variable name in any other text fails the scan.
 */
function allowedEnv(text: string): readonly string[] {
  if (text === NO_WALLET) return ['SWAPEAZI_WALLET_PRIVATE_KEY', 'SWAPEAZI_DAILY_BUDGET_USDC']
  if (text.includes(MCP_FREE_KEY_ADVICE)) return ['SWAPEAZI_API_KEY', 'SWAPEAZI_MCP_SHARE_API_KEY']
  if (/operator of this MCP server (sets|set a pro key) in SWAPEAZI_API_KEY/.test(text)) return ['SWAPEAZI_API_KEY']
  return []
}

const store = lazyMemoryStore()
const app = testApp({ store })
/** The same service with an anonymous limit of one request a minute (the clock stands still), for the 429's text. */
const limitedApp = testApp({ store, rateLimits: { anonymous: 1, free: 1_000_000, pro: 1_000_000, holdRefusalsMs: 0 } })
/** The caller IP that has made its one anonymous request of the minute on limitedApp before the scan. */
const LIMITED_IP = '198.51.100.79'
/** The caller IP whose free corridor-intelligence calls are used up before the scan. */
const EXHAUSTED_IP = '198.51.100.77'
const FREE_KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef0123aaaa', tier: 'free', iat: NOW_MS / 1000 })

/**
 * The connections the calls go through: no wallet nor key; a free key; an IP past its monthly free calls; an IP past
 * the anonymous rate limit.
 */
type Via = 'plain' | 'freeKey' | 'exhausted' | 'limited'
const connections = new Map<Via, ConnectedClient>()

function connect(options: { apiKey?: string; forwardedFor?: string; app?: TestApp } = {}): Promise<ConnectedClient> {
  return connectInMemory(
    createToolContext({
      client: inProcessClient(options.app ?? app, options.forwardedFor),
      settings: { dailyBudgetAtomic: 1_000_000n, ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }) },
      budget: store.budget,
      clock: Date.now,
      log: pino({ level: 'silent' }),
    }),
  )
}

beforeAll(async () => {
  connections.set('plain', await connect())
  connections.set('freeKey', await connect({ apiKey: FREE_KEY, forwardedFor: '198.51.100.78' }))
  connections.set('exhausted', await connect({ forwardedFor: EXHAUSTED_IP }))
  connections.set('limited', await connect({ forwardedFor: LIMITED_IP, app: limitedApp }))
  const first = await limitedApp.request('/api/v1/health', { headers: { 'x-forwarded-for': LIMITED_IP } })
  if (first.status !== 200) throw new Error(`the limited IP's first request answered ${first.status}`)
  for (let call = 1; call <= 100; call++) {
    const response = await app.request('/api/v1/intelligence/corridor/OPT-POL', { headers: { 'x-forwarded-for': EXHAUSTED_IP } })
    if (response.status !== 200) throw new Error(`call ${call} answered ${response.status}`)
  }
})
afterAll(async () => {
  for (const connected of connections.values()) await connected.close()
  await store.sql.close()
})

const quote = { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000', fromAddress: FROM_ADDRESS }

/**
 * A failing or refusing call of each tool, and (answer: true) free-tier answers whose notes say what to do for more,
 * which a model reads just the same.
 */
const CALLS: readonly {
  label: string
  tool: (typeof TOOL_NAMES)[number]
  args: Record<string, unknown>
  via?: Via
  answer?: true
}[] = [
  { label: 'discover_routes on an unknown chain', tool: 'discover_routes', args: { chain: 'XYZ' } },
  {
    label: 'probe_corridor for a Tron pair',
    tool: 'probe_corridor',
    args: { fromChain: 'TRX', toChain: 'BAS', fromToken: 'USDT', toToken: 'USDC' },
  },
  {
    label: 'probe_corridor for an unlisted token',
    tool: 'probe_corridor',
    args: { fromChain: 'ETH', toChain: 'ETH', fromToken: 'DOGE', toToken: 'USDC' },
  },
  { label: 'get_quote for an unlisted token', tool: 'get_quote', args: { ...quote, fromToken: 'DOGE' } },
  { label: 'get_quote for ARB USDC to CEL cKES', tool: 'get_quote', args: { ...quote, fromChain: 'ARB', toChain: 'CEL', toToken: 'cKES' } },
  { label: 'get_quote for a Tron pair', tool: 'get_quote', args: { ...quote, fromChain: 'TRX', fromToken: 'USDT', toToken: 'USDC' } },
  { label: 'get_quote beyond the range', tool: 'get_quote', args: { ...quote, fromAmount: '900000000000' } },
  {
    label: 'get_quote with a mistyped address',
    tool: 'get_quote',
    args: { ...quote, fromAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' },
  },
  { label: 'build_swap without a wallet', tool: 'build_swap', args: quote },
  { label: 'track_swap for a reference nobody recorded', tool: 'track_swap', args: { ref: 'swp_01ARZ3NDEKTSV4RRFFQ69G5FAV' } },
  {
    label: 'track_swap past the anonymous rate limit',
    tool: 'track_swap',
    args: { ref: 'swp_01ARZ3NDEKTSV4RRFFQ69G5FAV' },
    via: 'limited',
  },
  { label: 'corridor_intelligence with a bad pair', tool: 'corridor_intelligence', args: { pair: 'NOPE-ZZZ' } },
  { label: 'corridor_intelligence past the free calls', tool: 'corridor_intelligence', args: { pair: 'OPT-POL' }, via: 'exhausted' },
  { label: 'corridor_intelligence on the free tier', tool: 'corridor_intelligence', args: { pair: 'BAS-ARB' }, answer: true },
  {
    label: 'corridor_intelligence with a free key',
    tool: 'corridor_intelligence',
    args: { pair: 'BAS-ARB' },
    via: 'freeKey',
    answer: true,
  },
]

/** Every text a model reads in a result: the text blocks and each string inside structuredContent. */
function textsOf(result: CallToolResult): string[] {
  const texts = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []))
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value)
    else if (Array.isArray(value)) value.forEach(walk)
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk)
  }
  walk(result.structuredContent)
  return texts
}

function mcpOffences(text: string): string[] {
  const found = offences(text)
  if (HEADER_NAMES.test(text)) found.push(String(HEADER_NAMES))
  const allowed = allowedEnv(text)
  for (const name of text.match(ENV_NAME) ?? []) if (!allowed.includes(name)) found.push(name)
  return found
}

describe('agent-facing MCP texts (issue 14 item 12)', () => {
  const results = new Map<string, CallToolResult>()
  beforeAll(async () => {
    for (const call of CALLS) {
      const connected = connections.get(call.via ?? 'plain')
      if (connected === undefined) throw new Error(`no connection ${call.via}`)
      results.set(call.label, await callTool(connected.client, call.tool, call.args))
    }
  })

  it('calls every tool at least once', () => {
    expect(new Set(CALLS.map((call) => call.tool))).toEqual(new Set(TOOL_NAMES))
  })

  it('refuses or fails each call', () => {
    for (const call of CALLS.filter((each) => each.answer === undefined)) {
      const result = results.get(call.label)
      const structured = result?.structuredContent as { supported?: unknown; corridors?: unknown[] } | undefined
      // discover_routes does not fail on a chain it does not know: it answers no corridor, and says how to see them all.
      const refused = result?.isError === true || structured?.supported === false || structured?.corridors?.length === 0
      expect(refused, `${call.label}: ${JSON.stringify(result)}`).toBe(true)
    }
  })

  it('names no file, source, specification, lowercase, header or environment variable (save the operator allowance)', () => {
    const bad = CALLS.flatMap((call) =>
      textsOf(results.get(call.label) ?? { content: [] })
        .map((text) => ({ label: call.label, text, offences: mcpOffences(text) }))
        .filter((each) => each.offences.length > 0),
    )
    expect(bad).toEqual([])
  })

  it('tells the operator to set the pro key where the service tells HTTP callers to send a header', () => {
    const texts = [
      'corridor_intelligence past the free calls',
      'corridor_intelligence on the free tier',
      'corridor_intelligence with a free key',
    ]
      .flatMap((label) => textsOf(results.get(label) ?? { content: [] }))
      .filter((text) => text.includes('pro key'))
    expect(texts.length).toBeGreaterThanOrEqual(3)
    for (const text of texts) expect(text).toMatch(/operator of this MCP server (sets|set a pro key) in SWAPEAZI_API_KEY/)
  })

  it('answers a Tron pair as app-only with the app URL, not as an unserved amount', () => {
    for (const label of ['probe_corridor for a Tron pair', 'get_quote for a Tron pair']) {
      const text = textsOf(results.get(label) ?? { content: [] })[0] ?? ''
      expect(text, label).toContain(APP_URL)
      expect(text, label).not.toMatch(/not served at|amount.*(unserved|not served)/i)
    }
  })

  it('says a checksum failure is probably mistyped and asks for the address again', () => {
    const text = textsOf(results.get('get_quote with a mistyped address') ?? { content: [] }).join(' ')
    expect(text).toMatch(/mistyped/i)
    expect(text).toMatch(/cop(y|ied) (it )?again/i)
  })
})
