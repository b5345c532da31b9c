import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { x402Client } from '@x402/core/client'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PaymentRequiredV2, SettleResponseV2 } from '../../src/schemas/x402.ts'
import { encodeBase64Json } from '../../src/payments/x402/v2.ts'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { LOOPBACK_HOSTS } from '../../src/mcp/mcpSettings.ts'
import { KEY_SECRET, lazyMemoryStore, PAY_TO, PUBLIC_URL, quoteBody, type TestApp, testApp } from '../http/testApp.ts'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'

// x402 v2 over MCP, tool-result binding (issue 16 items 7 to 9): a remote agent pays build_swap itself, signing with
// the real x402 v2 client (@x402/core's x402Client with @x402/evm's exact scheme); the _meta plumbing that @x402/mcp
// would do is here, since that package is not published.

const agent = privateKeyToAccount(generatePrivateKey())
const serverWallet = generatePrivateKey()
const serverAddress = privateKeyToAccount(serverWallet).address
const body = quoteBody({ fromAddress: agent.address.toLowerCase() })
const store = lazyMemoryStore()

type Served = { app: TestApp; server: ListeningApp }
const serving: Served[] = []

/** The app over a real socket, its /mcp configured by `mcp` (the server's wallet always set, as an operator might). */
async function serve(mcp: Record<string, unknown> = {}): Promise<Served> {
  const app = testApp({
    clock: Date.now,
    store,
    mcp: { walletPrivateKey: serverWallet, dailyBudgetAtomic: 1_000_000n, allowedHosts: [...LOOPBACK_HOSTS], ...mcp },
  })
  const served = { app, server: await listenOnLoopback(app.fetch) }
  serving.push(served)
  return served
}

async function connect(base: string): Promise<Client> {
  const client = new Client({ name: 'x402-mcp-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
  await client.listTools()
  return client
}

/** tools/call with the request's params._meta, as an x402 MCP client sends the payment. */
async function buildSwap(client: Client, meta?: Record<string, unknown>, args: object = body): Promise<CallToolResult> {
  return CallToolResultSchema.parse(
    await client.callTool({ name: 'build_swap', arguments: { ...args }, ...(meta === undefined ? {} : { _meta: meta }) }),
  )
}

async function count(table: 'x402_payments' | 'swaps' | 'payer_spend'): Promise<number> {
  const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`)
  return row?.n ?? -1
}

async function serverSpent(): Promise<bigint> {
  const [row] = await store.sql.query<{ spent: string }>(
    'select coalesce(sum(spent), 0)::text as spent from payer_spend where lower(wallet) = lower($1)',
    [serverAddress],
  )
  return BigInt(row?.spent ?? '-1')
}

const payWith = new x402Client().register('eip155:8453', new ExactEvmScheme(agent))

let plain: Served
let client: Client
beforeAll(async () => {
  plain = await serve()
  client = await connect(plain.server.base)
})
afterAll(async () => {
  await client.close()
  for (const { server } of serving) await server.close()
  await store.sql.close()
})

describe('build_swap on /mcp: the remote agent pays over x402 v2', () => {
  it('lists build_swap without an output schema, so its structured PaymentRequired passes client validation', async () => {
    const { tools } = await client.listTools()
    const build = tools.find((tool) => tool.name === 'build_swap')
    expect(build?.outputSchema).toBeUndefined()
    expect(tools.find((tool) => tool.name === 'get_quote')?.outputSchema).toBeDefined()
  })

  it('unpaid: isError with the v2 PaymentRequired structured, as JSON text and in _meta["x402/error"]', async () => {
    const result = await buildSwap(client)
    expect(result.isError).toBe(true)
    const required = PaymentRequiredV2.parse(result.structuredContent)
    expect(required).toMatchObject({
      x402Version: 2,
      error: expect.stringContaining('params._meta["x402/payment"]'),
      resource: { url: `${PUBLIC_URL}/api/x402/swap` },
      accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '20000', payTo: PAY_TO }],
    })
    const [text] = result.content
    expect(text?.type === 'text' ? JSON.parse(text.text) : undefined).toEqual(required)
    expect(result._meta?.['x402/error']).toEqual(required)
    expect(await serverSpent()).toBe(0n)
  })

  it('paid (object, then base64): the swap, _meta["x402/payment-response"], recorded with the payment; a retry gets the same swap, another request is refused', async () => {
    for (const encode of [(payload: object) => payload, (payload: object) => encodeBase64Json(payload)]) {
      const unpaid = await buildSwap(client)
      const payload = await payWith.createPaymentPayload(PaymentRequiredV2.parse(unpaid.structuredContent) as never)
      const [payments, swaps] = [await count('x402_payments'), await count('swaps')]

      const paid = await buildSwap(client, { 'x402/payment': encode(payload) })
      expect(paid.isError, JSON.stringify(paid.content)).toBeFalsy()
      const settled = SettleResponseV2.parse(paid._meta?.['x402/payment-response'])
      expect(settled).toMatchObject({ success: true, network: 'eip155:8453', payer: agent.address, settlement: 'ledger' })
      expect(paid.structuredContent).toMatchObject({ fromAmount: '1000', payment: settled })
      const ref = (paid.structuredContent as { swapEaziRef: string }).swapEaziRef
      expect(await count('x402_payments')).toBe(payments + 1)
      expect(await count('swaps')).toBe(swaps + 1)
      const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce
      const [row] = await store.sql.query<{ swap_ref: string; status: string }>(
        'select swap_ref, status from x402_payments where nonce = $1',
        [nonce],
      )
      expect(row).toEqual({ swap_ref: ref, status: 'settled' })

      // The agent retries the same call (its answer was lost): the same swap, the receipt again, nothing charged twice.
      const retry = await buildSwap(client, { 'x402/payment': encode(payload) })
      expect(retry.isError, JSON.stringify(retry.content)).toBeFalsy()
      expect(retry.structuredContent).toEqual(paid.structuredContent)
      expect(retry._meta?.['x402/payment-response']).toEqual(paid._meta?.['x402/payment-response'])

      const replay = await buildSwap(client, { 'x402/payment': encode(payload) }, { ...body, fromAmount: '999' })
      expect(replay.isError).toBe(true)
      expect(PaymentRequiredV2.parse(replay.structuredContent).error).toBe('payment_already_used')
      const [json, detail] = replay.content
      expect(json?.type === 'text' ? JSON.parse(json.text) : undefined).toEqual(replay.structuredContent)
      expect(detail?.type === 'text' ? detail.text : '').toMatch(/^Not built and not paid: /)
      expect(replay._meta?.['x402/error']).toEqual(replay.structuredContent)
      expect(await count('x402_payments')).toBe(payments + 1)
    }
    expect(await serverSpent()).toBe(0n)
  })

  it('a payload that is not a payment is refused with the PaymentRequired, nothing recorded', async () => {
    const payments = await count('x402_payments')
    const result = await buildSwap(client, { 'x402/payment': { x402Version: 2, nonsense: true } })
    expect(result.isError).toBe(true)
    expect(PaymentRequiredV2.parse(result.structuredContent).error).toBe('invalid_payment')
    expect(await count('x402_payments')).toBe(payments)
    // Told where its payment came from over MCP, never the HTTP header it did not send.
    const garbled = await buildSwap(client, { 'x402/payment': 'not base64 at all!' })
    const said = JSON.stringify([garbled.content, garbled.structuredContent])
    expect(said).toContain('_meta[\\"x402/payment\\"]')
    expect(said).not.toContain('PAYMENT-SIGNATURE')
    // A v1 payload cannot go in an HTTP header over MCP: it is not told to.
    const v1 = await buildSwap(client, { 'x402/payment': { x402Version: 1, scheme: 'exact', network: 'base', payload: {} } })
    const v1Said = JSON.stringify([v1.content, v1.structuredContent])
    expect(v1Said).toContain('x402Version')
    expect(v1Said).not.toMatch(/X-PAYMENT|PAYMENT-SIGNATURE|PAYMENT-REQUIRED/)
    // Nested deeper than JSON.stringify writes (review of issue 15): an invalid payment, not a failure of ours. Sent
    // as raw JSON-RPC text, which the SDK's client could not write either.
    const levels = 20_000
    const response = await fetch(`${plain.server.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build_swap","arguments":${JSON.stringify(body)},"_meta":{"x402/payment":${'['.repeat(levels)}${']'.repeat(levels)}}}}`,
    })
    const text = await response.text()
    const message = JSON.parse(text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}')) as { result: unknown }
    const nested = CallToolResultSchema.parse(message.result)
    expect(nested.isError).toBe(true)
    expect(PaymentRequiredV2.parse(nested.structuredContent).error).toBe('invalid_payment')
    expect(JSON.stringify(nested.content)).toContain('nested too deeply')
    expect(await count('x402_payments')).toBe(payments)
    // A string no HTTP header can carry (a line break, a NUL, a letter above U+00FF) is the agent's invalid payment,
    // not "failed on our side, retry shortly" (review of issue 15: the header write threw).
    for (const payment of ['abc\ndef', 'a\u0000b', '€uro']) {
      const unwritable = await buildSwap(client, { 'x402/payment': payment })
      expect(unwritable.isError).toBe(true)
      expect(PaymentRequiredV2.parse(unwritable.structuredContent).error).toBe('invalid_payment')
      expect(JSON.stringify(unwritable.content)).toContain('is a string that is not base64')
    }
    expect(await count('x402_payments')).toBe(payments)
  })

  it('drain: 80 concurrent anonymous builds with a server wallet configured spend nothing from it', async () => {
    const spendRows = await count('payer_spend')
    const results = await Promise.all(Array.from({ length: 80 }, () => buildSwap(client)))
    for (const result of results) {
      expect(result.isError).toBe(true)
      expect(PaymentRequiredV2.safeParse(result.structuredContent).success).toBe(true)
    }
    expect(await count('payer_spend')).toBe(spendRows)
    expect(await serverSpent()).toBe(0n)
  })

  it('with SWAPEAZI_MCP_SERVER_PAYS, the server pays at most the per-IP limit an hour of 80 concurrent builds', async () => {
    const optedIn = await serve({ serverPaysOnHttp: true, serverPaysPerIpHour: 3 })
    const payingClient = await connect(optedIn.server.base)
    try {
      const { tools } = await payingClient.listTools()
      expect(tools.find((tool) => tool.name === 'build_swap')?.outputSchema).toBeDefined()
      const results = await Promise.all(Array.from({ length: 80 }, () => buildSwap(payingClient)))
      const built = results.filter((result) => result.isError !== true)
      expect(built).toHaveLength(3)
      for (const result of results.filter((r) => r.isError === true)) {
        const [text] = result.content
        expect(text?.type === 'text' ? text.text : '').toMatch(/at most 3 builds per caller per hour/)
      }
      expect(await serverSpent()).toBe(3n * 20_000n)
    } finally {
      await payingClient.close()
    }
  })

  it("uses the operator's SWAPEAZI_API_KEY for /mcp callers only with SWAPEAZI_MCP_SHARE_API_KEY", async () => {
    const proKey = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef0123bbbb', tier: 'pro', iat: Math.floor(Date.now() / 1000) })
    const tierOn = async (mcp: Record<string, unknown>): Promise<unknown> => {
      const { server } = await serve({ apiKey: proKey, ...mcp })
      const on = await connect(server.base)
      try {
        const result = CallToolResultSchema.parse(await on.callTool({ name: 'corridor_intelligence', arguments: { pair: 'BAS-ARB' } }))
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
        return (result.structuredContent as { tier?: unknown }).tier
      } finally {
        await on.close()
      }
    }
    expect(await tierOn({})).toBe('free')
    expect(await tierOn({ shareApiKeyOnHttp: true })).toBe('pro')
  })
})
