import * as z from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NO_WALLET } from '../../src/mcp/tools/buildSwap.ts'
import { TOOLS } from '../../src/mcp/tools/index.ts'
import { CAPABILITIES_URI } from '../../src/mcp/tool.ts'
import { CapabilityManifest } from '../../src/schemas/discovery.ts'
import { get, lazyMemoryStore, quoteBody, readJson, testApp } from '../http/testApp.ts'
import {
  type ConnectedClient,
  LEAK_PATTERNS,
  TOOL_NAMES,
  callTool,
  clientOver,
  connectInMemory,
  connectToApp,
  textOf,
} from './mcpHarness.ts'

// One PGlite for the file (it opens slowly); the app runs on the fixed test clock, no wallet configured.
const store = lazyMemoryStore()
const app = testApp({ store })
let connected: ConnectedClient

beforeAll(async () => {
  connected = await connectToApp(app, store, 1_000_000n)
})
afterAll(async () => {
  await connected.close()
  await store.sql.close()
})

/** The tool definition behind a name, for its zod output shape. */
function toolNamed(name: string): (typeof TOOLS)[number] {
  const tool = TOOLS.find((each) => each.name === name)
  if (tool === undefined) throw new Error(`no tool ${name}`)
  return tool
}

describe('tools/list', () => {
  it('lists exactly the six tools, each with a description, an input schema and an object output schema', async () => {
    const { tools } = await connected.client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES])
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(80)
      expect(tool.title, tool.name).toBeTruthy()
      expect(tool.inputSchema.type, tool.name).toBe('object')
      expect(Object.keys(tool.inputSchema.properties ?? {}).length, tool.name).toBeGreaterThan(0)
      expect(tool.outputSchema?.type, tool.name).toBe('object')
      expect(Object.keys(tool.outputSchema?.properties ?? {}).length, tool.name).toBeGreaterThan(0)
    }
  })

  it("stays under 52,000 characters in all, most of it the output schemas (docs/mcp.md: over DESIGN 8's 16,000 budget)", async () => {
    const { tools } = await connected.client.listTools()
    const size = JSON.stringify({ tools }).length
    const outputs = tools.reduce((sum, tool) => sum + JSON.stringify(tool.outputSchema ?? {}).length, 0)
    expect(size).toBeLessThan(52_000)
    expect(outputs / size).toBeGreaterThan(0.7)
  })

  it('carries the annotations of DESIGN 8: read-only tools say so, build_swap spends irreversibly and is not idempotent', async () => {
    const { tools } = await connected.client.listTools()
    const annotations = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]))
    for (const name of ['discover_routes', 'probe_corridor', 'get_quote', 'track_swap', 'corridor_intelligence'])
      expect(annotations[name], name).toMatchObject({ readOnlyHint: true, openWorldHint: true })
    expect(annotations['build_swap']).toMatchObject({
      readOnlyHint: false,
      idempotentHint: false,
      destructiveHint: true,
      openWorldHint: true,
    })
  })

  it('publishes the zod input constraints, so a model sees what a field accepts', async () => {
    const { tools } = await connected.client.listTools()
    const quote = tools.find((tool) => tool.name === 'get_quote')
    const properties = quote?.inputSchema.properties as Record<string, { enum?: unknown; pattern?: unknown }>
    expect(properties['fromChain']?.enum).toEqual(expect.arrayContaining(['ETH', 'BAS', 'GNO', 'CEL']))
    expect(properties['fromAmount']?.pattern).toBe('^[0-9]+(\\.[0-9]+)?$')
    expect(quote?.inputSchema.required).toEqual(
      expect.arrayContaining(['fromChain', 'toChain', 'fromToken', 'toToken', 'fromAmount', 'fromAddress']),
    )
  })
})

describe('the capability manifest resource', () => {
  it('lists swapeazi://capabilities and reads back the manifest GET /api/mpp/routes serves', async () => {
    const { resources } = await connected.client.listResources()
    expect(resources.map((resource) => resource.uri)).toEqual([CAPABILITIES_URI])
    const read = await connected.client.readResource({ uri: CAPABILITIES_URI })
    expect(read.contents).toHaveLength(1)
    const [content] = read.contents
    expect(content).toMatchObject({ uri: CAPABILITIES_URI, mimeType: 'application/json' })
    const manifest = CapabilityManifest.parse(JSON.parse(String((content as { text?: unknown }).text)))
    expect(manifest).toEqual(CapabilityManifest.parse(await readJson(await get(app, '/api/mpp/routes'))))
    expect(manifest.corridors.length).toBeGreaterThan(5)
  })
})

const GOOD: [string, Record<string, unknown>, (structured: Record<string, unknown>, text: string) => void][] = [
  [
    'discover_routes',
    {},
    (structured, text) => {
      expect((structured['corridors'] as unknown[]).length).toBeGreaterThan(10)
      expect(structured['manifestResource']).toBe('swapeazi://capabilities')
      expect(text).toMatch(/^\d+ corridors on \d+ chains: /)
    },
  ],
  [
    'discover_routes',
    { chain: 'gno', token: 'eure', agentCallable: true },
    (structured, text) => {
      const corridors = structured['corridors'] as { from: string; to: string; chains: string[] }[]
      expect(corridors.length).toBeGreaterThan(0)
      for (const corridor of corridors) {
        expect(corridor.chains).toContain('GNO')
        expect([corridor.from, corridor.to]).toContain('EURe')
      }
      expect((structured['chains'] as { id: string }[]).map((chain) => chain.id)).toEqual(['GNO'])
      expect(text).toContain('for chain GNO, token eure, agent-callable')
    },
  ],
  [
    'probe_corridor',
    { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT' },
    (structured, text) => {
      expect(structured).toMatchObject({
        pair: 'USDC@ETH->USDT@ETH',
        supported: true,
        agentCallable: true,
        reason: null,
        amountTested: '1000',
      })
      expect(structured['sample']).toMatchObject({ fromAmount: '1000', toAmount: '995', bridge: 'none' })
      expect(text).toMatch(/^USDC@ETH->USDT@ETH is served: 1000 USDC gives 995 USDT/)
    },
  ],
  [
    'probe_corridor',
    { fromChain: 'TRX', toChain: 'BAS', fromToken: 'USDT', toToken: 'USDC' },
    (structured, text) => {
      // Tron is discovery-only: the probe says so as an answer, with where the user signs and what is served nearby.
      expect(structured).toMatchObject({
        supported: false,
        agentCallable: false,
        reason: 'not_agent_callable',
        appUrl: 'https://app.example.test',
      })
      expect((structured['nearest'] as unknown[]).length).toBeGreaterThan(0)
      expect(text).toContain('not_agent_callable')
      expect(text).toContain('Nearest served:')
    },
  ],
  [
    'get_quote',
    quoteBody(),
    (structured, text) => {
      expect(structured['supported']).toBe(true)
      expect(structured['quote']).toMatchObject({
        fromChain: 'ETH',
        toChain: 'ETH',
        fromToken: 'USDC',
        toToken: 'USDT',
        fromAmount: '1000',
        toAmount: '995',
        toAmountMin: '990.025',
      })
      expect(text).toBe(
        '1000 USDC on ETH → 995 USDT on ETH (at least 990.025) via uniswap, about 12 s, fee 5 USDC. Quote valid until 2026-11-20T12:01:00.000Z; build_swap builds it for USD 0.02.',
      )
    },
  ],
  [
    'probe_corridor',
    { fromChain: 'ARB', toChain: 'GNO', fromToken: 'USDT', toToken: 'cKES', amount: '50' },
    (structured, text) => {
      // A token the chain does not list is an answer for the probe, with the reason and what is served nearby.
      expect(structured).toMatchObject({
        supported: false,
        reason: 'unsupported_token',
        detail: 'cKES is not listed on GNO. Tokens on GNO: EURe, GBPe.',
        amountTested: '50',
        sample: null,
      })
      expect(text).toMatch(/^USDT@ARB->cKES@GNO is not served at 50: unsupported_token .* Nearest served: /)
    },
  ],
  [
    'get_quote',
    quoteBody({ fromChain: 'CEL', toChain: 'ETH', fromToken: 'cKES', toToken: 'EURe' }),
    (structured, text) => {
      // Both tokens exist, but no route joins them: an answer (supported: false), not an error.
      expect(structured).toMatchObject({ supported: false, reason: 'no_route_found', pair: 'cKES->EURe' })
      // Why, in the agent's words: the same sentence the HTTP answer carries beside the spec's fields.
      const why = (structured as { notServed?: { detail?: string } }).notServed?.detail
      expect(why).toMatch(/cKES on CEL to EURe on ETH/)
      expect(text).toBe(`No route joins cKES->EURe on those chains: ${why}. Call probe_corridor for the nearest corridors SwapEazi serves.`)
    },
  ],
  [
    'get_quote',
    { ...quoteBody({ toChain: 'BAS', toToken: 'USDC' }), ranked: true },
    (structured, text) => {
      expect(structured['supported']).toBe(true)
      expect(structured['quote']).toBeUndefined()
      expect((structured['routes'] as { ranking: string }[]).map((route) => route.ranking)).toEqual(['FASTEST', 'BALANCED', 'CHEAPEST'])
      expect(text).toMatch(/^FASTEST: .+\. BALANCED: .+\. CHEAPEST: .+\.$/)
    },
  ],
  [
    'corridor_intelligence',
    { pair: 'BAS-ARB' },
    (structured, text) => {
      expect(structured['tier']).toBe('free')
      expect(structured['intelligence']).toMatchObject({ pair: 'BAS-ARB', basis: 'published_priors', tier: 'free' })
      expect(text).toMatch(/^BAS-ARB: \w+ recommended, reliability unknown, from published priors/)
    },
  ],
  [
    'corridor_intelligence',
    { pair: 'USD-GNO', amount: '2500' },
    (structured) => {
      expect(structured['intelligence']).toMatchObject({ pair: 'USD-GNO', to: { code: 'GNO', kind: 'chain' } })
    },
  ],
]

describe('every tool with good input', () => {
  it.each(GOOD)('%s %j', async (name, args, check) => {
    // callTool throws when structuredContent does not match the outputSchema tools/list announced.
    const result = await callTool(connected.client, name, args)
    expect(result.isError, textOf(result)).toBeFalsy()
    const text = textOf(result)
    expect(text).not.toContain('\n')
    expect(result.structuredContent).toBeDefined()
    const structured = result.structuredContent ?? {}
    // And against the tool's own zod shape, strictly: no field the schema does not name.
    expect(() => z.strictObject(toolNamed(name).outputSchema).parse(structured)).not.toThrow()
    check(structured, text)
  })
})

const BAD: [string, string, Record<string, unknown>, RegExp[]][] = [
  // Wrong types: the SDK's input validation names the field and what it expects.
  ['wrong type', 'discover_routes', { agentCallable: 'yes' }, [/expected boolean, received string at agentCallable/]],
  [
    'wrong type',
    'probe_corridor',
    { fromChain: 1, toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT' },
    [/at fromChain/, /expected one of "ETH"/],
  ],
  ['wrong type', 'get_quote', quoteBody({ fromAmount: 1000 }), [/expected string, received number at fromAmount/]],
  ['wrong type', 'build_swap', quoteBody({ slippage: '0.01' }), [/expected number, received string at slippage/]],
  ['wrong type', 'corridor_intelligence', { pair: 42 }, [/expected string, received number at pair/]],
  ['missing field', 'get_quote', quoteBody({ fromAddress: undefined }), [/at fromAddress/]],
  ['bad address', 'build_swap', quoteBody({ fromAddress: '0x123' }), [/must be 0x followed by 40 hex characters at fromAddress/]],
  // Unknown chain.
  ['unknown chain', 'discover_routes', { chain: 'SOLANA' }, [/<=3 characters at chain/]],
  ['unknown chain', 'get_quote', quoteBody({ fromChain: 'XYZ' }), [/expected one of "ETH"\|"BAS"/, /at fromChain/]],
  [
    'unknown chain',
    'probe_corridor',
    { fromChain: 'ETH', toChain: 'DOGE', fromToken: 'USDC', toToken: 'USDT' },
    [/expected one of "ETH"/, /at toChain/],
  ],
  // An exponent is not a decimal amount.
  [
    'amount 1e3',
    'get_quote',
    quoteBody({ fromAmount: '1e3' }),
    [/must be a decimal string such as "1000" or "12.5" \(no sign, exponent or spaces\) at fromAmount/],
  ],
  [
    'amount 1e3',
    'probe_corridor',
    { fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', amount: '1e3' },
    [/must be a decimal string such as "1000" at amount/],
  ],
  ['amount 1e3', 'corridor_intelligence', { pair: 'BAS-ARB', amount: '1e3' }, [/must be a decimal string such as "2500" at amount/]],
  [
    'too many decimals',
    'get_quote',
    quoteBody({ fromAmount: '1.0000001' }),
    [/^SwapEazi answered 400 \(invalid_request\): fromAmount USDC on ETH has 6 decimals; send at most 6 fraction digits\./],
  ],
  // Pair codes the service does not know.
  [
    'unknown pair code',
    'corridor_intelligence',
    { pair: 'XXX-YYY' },
    [/^SwapEazi answered 400 \(invalid_request\): "XXX" and "YYY" are not chain or currency codes/, /A pair is <A>-<B>, source first/],
  ],
  [
    'pair without a dash',
    'corridor_intelligence',
    { pair: 'BASARB' },
    [/^SwapEazi answered 400 \(invalid_request\): "BASARB" is not two codes joined by one hyphen, such as USD-BAS/],
  ],
  // Solana and Tron are listed for discovery only: the user signs in the app.
  [
    'SOL chain',
    'get_quote',
    quoteBody({ fromChain: 'SOL' }),
    [
      /^SwapEazi answered 422 \(not_agent_callable\): SOL is listed for discovery but is not agent-callable/,
      /Direct the user to https:\/\/app\.example\.test/,
    ],
  ],
  ['TRX chain', 'get_quote', quoteBody({ toChain: 'TRX', toToken: 'USDT' }), [/\(not_agent_callable\): TRX/, /Direct the user to/]],
  // Amounts outside what the route can serve within the fee say the range to send.
  [
    'amount too small',
    'get_quote',
    quoteBody({ fromAmount: '0.000001' }),
    // 0.000002 leaves 0.000001 after the fee, whose minimum at 0.5% slippage rounds to 0: 0.000003 is the least.
    [/^SwapEazi answered 422 \(amount_out_of_range\): /, /Send between 0\.000003 and \d+(\.\d+)? USDC/],
  ],
  ['amount too large', 'get_quote', quoteBody({ fromAmount: '1000000000000' }), [/\(amount_out_of_range\)/, /Send between/]],
  // A token the chain does not list names the tokens it does.
  [
    'unsupported token',
    'get_quote',
    quoteBody({ toToken: 'DOGE' }),
    [/^SwapEazi answered 422 \(unsupported_token\): DOGE is not listed on ETH\. Tokens on ETH: USDC, USDT/],
  ],
  // A reference of no swap's form, and one nobody recorded.
  [
    'bad ref',
    'track_swap',
    { ref: 'swp_short' },
    [/must be swp_ or dsb_ and 26 characters, as build_swap answered it \(swapEaziRef\) at ref/],
  ],
  [
    'unknown ref',
    'track_swap',
    { ref: 'swp_01ARZ3NDEKTSV4RRFFQ69G5FAV' },
    [/^SwapEazi answered 404 \(not_found\): No swap or batch swp_01ARZ3NDEKTSV4RRFFQ69G5FAV/],
  ],
  ['unknown tool', 'swap_everything', {}, [/Tool swap_everything not found/]],
]

describe('every tool with bad input', () => {
  it.each(BAD)('%s: %s', async (_case, name, args, patterns) => {
    const result = await callTool(connected.client, name, args)
    expect(result.isError).toBe(true)
    // Text only: SDK 1.32 clients validate structuredContent even on errors.
    expect(result.structuredContent).toBeUndefined()
    const text = textOf(result)
    for (const pattern of patterns) expect(text).toMatch(pattern)
    for (const leak of LEAK_PATTERNS) expect(text).not.toMatch(leak)
    expect(text.length).toBeLessThan(600)
  })

  it('build_swap with no wallet configured says to set SWAPEAZI_WALLET_PRIVATE_KEY, and pays nothing', async () => {
    const result = await callTool(connected.client, 'build_swap', quoteBody())
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(textOf(result)).toBe(NO_WALLET)
    expect(textOf(result)).toContain('Set SWAPEAZI_WALLET_PRIVATE_KEY')
    const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from x402_payments`)
    expect(row?.n).toBe(0)
  })
})

describe('when the service fails', () => {
  it('a thrown error (service unreachable) becomes a retry hint, not the error or a stack', async () => {
    const unreachable = clientOver(async () => {
      throw new TypeError('fetch failed: connect ECONNREFUSED 127.0.0.1:8402 at /srv/app/node_modules/undici/index.js:12:3')
    })
    const { client, close } = await connectInMemory({ client: unreachable })
    try {
      for (const [name, args] of [
        ['discover_routes', {}],
        ['get_quote', quoteBody()],
        ['corridor_intelligence', { pair: 'BAS-ARB' }],
      ] as const) {
        const result = await callTool(client, name, args)
        expect(result.isError).toBe(true)
        expect(result.structuredContent).toBeUndefined()
        expect(textOf(result)).toBe(
          `${name} could not reach SwapEazi or failed on our side; nothing was paid unless a receipt says so. Retry shortly.`,
        )
      }
    } finally {
      await close()
    }
  })

  it("a 5xx without problem details, or an answer that is not SwapEazi's, says what to check", async () => {
    const notSwapEazi = clientOver(async (input) =>
      input.endsWith('/api/x402/quote')
        ? new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })
        : Response.json({ hello: 'world' }),
    )
    const { client, close } = await connectInMemory({ client: notSwapEazi })
    try {
      const quote = await callTool(client, 'get_quote', quoteBody())
      expect(quote).toEqual({
        isError: true,
        content: [
          {
            type: 'text',
            text: 'SwapEazi answered HTTP 502 with no problem details; retry later, or check SWAPEAZI_BASE_URL points at a SwapEazi service.',
          },
        ],
      })
      const discover = await callTool(client, 'discover_routes', {})
      expect(textOf(discover)).toBe(
        'SwapEazi answered with a capability manifest this server cannot read; check SWAPEAZI_BASE_URL points at a SwapEazi service.',
      )
    } finally {
      await close()
    }
  })
})
