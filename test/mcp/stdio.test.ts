import type { AddressInfo } from 'node:net'
import { PassThrough } from 'node:stream'
import { serve, type ServerType } from '@hono/node-server'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { CallToolResultSchema, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { CAPABILITIES_URI } from '../../src/mcp/tool.ts'
import { lazyMemoryStore, quoteBody, testApp } from '../http/testApp.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'
import { TOOL_NAMES, callTool, captureLogger, textOf } from './mcpHarness.ts'

// `swapeazi mcp` run in-process (src/cli/runCli.ts) over a pair of pipes: the same server, transport, store and
// logger a host gets, without a tsx start-up per test. What only a real child shows (bin/swapeazi-mcp.js starts
// from a host's config, and a dependency's console output cannot reach the protocol stream) is the smoke test in
// test/mcp/hostConfig.test.ts, the one spawn of the MCP binary.

/** A test allows for the embedded service to load the catalogue and open PGlite, more on a busy machine. */
const SERVER_TEST_TIMEOUT_MS = 90_000

/** Exactly the environment `swapeazi mcp` reads here: nothing leaks in from the developer's shell. */
function serverEnv(extra: Record<string, string>): Record<string, string> {
  return {
    SWAPEAZI_DATA_DIR: 'memory://',
    SWAPEAZI_LOG_LEVEL: 'info',
    ...extra,
  }
}

/**
 * `swapeazi mcp` in this process and an MCP client transport to it, keeping every byte the server writes: stdout to
 * check it carries JSON-RPC and nothing else, stderr for the logs. A stdout line that is not JSON-RPC is kept and
 * reported through onerror, never silently skipped. Its in-memory store starts from the run's migrated template.
 */
class RecordingStdioTransport implements Transport {
  stdout = ''
  onmessage?: (message: JSONRPCMessage) => void
  onclose?: () => void
  onerror?: (error: Error) => void
  /** The command's exit code, once it has returned. */
  exitCode: number | null = null
  private pending = ''
  private readonly stdin = new PassThrough()
  private readonly out = new PassThrough()
  private readonly err = new TextSink()
  private readonly exited: Promise<number>

  constructor(env: Record<string, string>) {
    this.exited = migratedPgliteTemplate()
      .then((pgliteTemplate) => runCli(['mcp'], { env, stdin: this.stdin, stdout: this.out, stderr: this.err, pgliteTemplate }))
      .then((code) => {
        this.exitCode = code
        this.onclose?.()
        return code
      })
  }

  get stderr(): string {
    return this.err.text
  }

  async start(): Promise<void> {
    this.out.setEncoding('utf8')
    this.out.on('data', (chunk: string) => {
      this.stdout += chunk
      this.pending += chunk
      let newline = this.pending.indexOf('\n')
      while (newline !== -1) {
        const line = this.pending.slice(0, newline)
        this.pending = this.pending.slice(newline + 1)
        try {
          this.onmessage?.(JSONRPCMessageSchema.parse(JSON.parse(line)))
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)))
        }
        newline = this.pending.indexOf('\n')
      }
    })
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.stdin.write(`${JSON.stringify(message)}\n`)
  }

  /** Ends stdin, as a host does; the command returns on its own once it has closed its store. */
  async close(): Promise<void> {
    this.stdin.end()
    await this.exited
  }
}

/** Every stdout line is one JSON-RPC 2.0 message, and stdout ends on a line break: no banner, no log, no partial write. */
function expectOnlyJsonRpc(stdout: string): unknown[] {
  expect(stdout.length).toBeGreaterThan(0)
  expect(stdout.endsWith('\n')).toBe(true)
  const messages = stdout
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      let parsed: unknown
      expect(() => (parsed = JSON.parse(line)), `stdout line is not JSON: ${line.slice(0, 200)}`).not.toThrow()
      expect(parsed, line.slice(0, 200)).toMatchObject({ jsonrpc: '2.0' })
      expect(JSONRPCMessageSchema.safeParse(parsed).success, line.slice(0, 200)).toBe(true)
      return parsed
    })
  return messages
}

/** stderr's lines, parsed: the server's pino logs (every line must be one). */
function logLinesOf(stderr: string): { event?: string; path?: string; status?: number; level: number }[] {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      let parsed: unknown
      expect(() => (parsed = JSON.parse(line)), `stderr line is not a pino log line: ${line.slice(0, 200)}`).not.toThrow()
      return parsed as { event?: string; path?: string; status?: number; level: number }
    })
}

function throwawayWallet(): { privateKey: `0x${string}`; address: string } {
  const privateKey = generatePrivateKey()
  return { privateKey, address: privateKeyToAccount(privateKey).address }
}

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

describe.concurrent('swapeazi mcp over stdio', () => {
  it(
    'serves an SDK client: lists the tools, quotes and builds a paid swap; the logs go to stderr',
    async () => {
      const wallet = throwawayWallet()
      const transport = new RecordingStdioTransport(serverEnv({ SWAPEAZI_WALLET_PRIVATE_KEY: wallet.privateKey }))
      const errors: Error[] = []
      transport.onerror = (error) => errors.push(error)
      const client = new Client({ name: 'swapeazi-stdio-test', version: '1.0.0' })
      cleanups.push(() => client.close())
      await client.connect(transport)

      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES])
      const quote = await callTool(client, 'get_quote', quoteBody())
      expect(quote.isError, textOf(quote)).toBeFalsy()
      expect(quote.structuredContent).toMatchObject({
        supported: true,
        quote: { fromAmount: '1000', toAmount: '995', toAmountMin: '990.025' },
      })
      const swap = await callTool(client, 'build_swap', quoteBody())
      expect(swap.isError, textOf(swap)).toBeFalsy()
      const built = swap.structuredContent as { swapEaziRef: string; payment: { transaction: string; payer: string } }
      expect(built.payment).toMatchObject({ transaction: `ledger:${built.swapEaziRef}`, payer: wallet.address })
      await client.close()

      expect(errors).toEqual([])
      const { stderr } = transport
      const logs = logLinesOf(stderr)
      expect(logs.some((line) => line.event === 'http_request' && line.path === '/api/x402/quote' && line.status === 200)).toBe(true)
      expect(logs.filter((line) => line.event === 'http_request' && line.path === '/api/x402/swap').map((line) => line.status)).toEqual([
        402, 200,
      ])
      expect(logs.some((line) => line.event === 'swap_paid_by_mcp')).toBe(true)
      expect(stderr.toLowerCase()).not.toContain(wallet.privateKey.slice(2).toLowerCase())
    },
    SERVER_TEST_TIMEOUT_MS,
  )

  it(
    'writes nothing but JSON-RPC on stdout, through a quote, a paid build, an error, a resource read and malformed params',
    async () => {
      const wallet = throwawayWallet()
      const transport = new RecordingStdioTransport(serverEnv({ SWAPEAZI_WALLET_PRIVATE_KEY: wallet.privateKey }))
      const errors: Error[] = []
      const client = new Client({ name: 'swapeazi-stdio-test', version: '1.0.0' })
      cleanups.push(() => transport.close())
      // Set before connect: the client chains it, so a line the transport cannot parse is recorded even before initialize.
      transport.onerror = (error) => errors.push(error)
      await client.connect(transport)

      expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length)
      expect((await callTool(client, 'get_quote', quoteBody())).isError).toBeFalsy()
      const swap = await callTool(client, 'build_swap', quoteBody())
      expect(swap.isError, textOf(swap)).toBeFalsy()
      const bad = await callTool(client, 'get_quote', quoteBody({ toToken: 'DOGE' }))
      expect(bad.isError).toBe(true)
      expect((await client.readResource({ uri: CAPABILITIES_URI })).contents).toHaveLength(1)
      // A call with no tool name: invalid params, said in words, and the server goes on.
      await expect(client.request({ method: 'tools/call', params: {} } as never, CallToolResultSchema)).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Invalid params for tools/call: params.name: expected string'),
      })
      expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length)
      await client.close()

      expect(transport.exitCode).toBe(0)
      expect(errors).toEqual([])
      // initialize, two tools/list, four tools/call and resources/read: eight answers, and nothing else.
      const messages = expectOnlyJsonRpc(transport.stdout)
      expect(messages).toHaveLength(8)
      expect(messages.every((message) => typeof (message as { id?: unknown }).id === 'number')).toBe(true)
      const logs = logLinesOf(transport.stderr)
      expect(logs.filter((line) => line.event === 'http_request').length).toBeGreaterThanOrEqual(4)
      expect(transport.stdout + transport.stderr).not.toContain(wallet.privateKey.slice(2))
    },
    SERVER_TEST_TIMEOUT_MS,
  )

  it(
    'with SWAPEAZI_BASE_URL, reaches a listening SwapEazi over HTTP: quotes there and pays it for the build',
    async () => {
      // The service `swapeazi mcp` calls: a real socket, its own access log captured here.
      const { log, lines } = captureLogger()
      const store = lazyMemoryStore()
      let base = ''
      const server = await new Promise<ServerType>((resolve) => {
        const listening: ServerType = serve(
          { fetch: (request, env) => served.fetch(request, env), hostname: '127.0.0.1', port: 0 },
          (info: AddressInfo) => {
            base = `http://127.0.0.1:${info.port}`
            resolve(listening)
          },
        )
      })
      const served = testApp({ clock: Date.now, store, log, publicUrl: base })
      cleanups.push(async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()))
        await store.sql.close()
      })

      const wallet = throwawayWallet()
      const transport = new RecordingStdioTransport(serverEnv({ SWAPEAZI_BASE_URL: base, SWAPEAZI_WALLET_PRIVATE_KEY: wallet.privateKey }))
      const errors: Error[] = []
      const client = new Client({ name: 'swapeazi-stdio-test', version: '1.0.0' })
      cleanups.push(() => transport.close())
      // Set before connect: the client chains it, so a line the transport cannot parse is recorded even before initialize.
      transport.onerror = (error) => errors.push(error)
      await client.connect(transport)

      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES])
      const quote = await callTool(client, 'get_quote', quoteBody())
      expect(quote.structuredContent).toMatchObject({ supported: true, quote: { toAmount: '995' } })
      const swap = await callTool(client, 'build_swap', quoteBody())
      expect(swap.isError, textOf(swap)).toBeFalsy()
      const built = swap.structuredContent as { swapEaziRef: string; payment: { transaction: string } }
      await client.close()

      // The listening service logged the requests, and holds the swap and the payment from the wallet `swapeazi mcp` was given.
      const access = lines
        .map((line) => JSON.parse(line) as { event?: string; method?: string; path?: string; status?: number })
        .filter((line) => line.event === 'http_request')
      expect(access.map((line) => `${line.method} ${line.path} ${line.status}`)).toEqual([
        'POST /api/x402/quote 200',
        'POST /api/x402/swap 402',
        'POST /api/x402/swap 200',
      ])
      const stored = await store.getSwap(built.swapEaziRef)
      expect(stored?.payment?.payer).toBe(wallet.address.toLowerCase())
      expect(built.payment.transaction).toBe(`ledger:${built.swapEaziRef}`)
      // `swapeazi mcp` served no HTTP itself: its stderr has no access log, and its stdout only protocol.
      expect(logLinesOf(transport.stderr).filter((line) => line.event === 'http_request')).toEqual([])
      expectOnlyJsonRpc(transport.stdout)
      expect(errors).toEqual([])
    },
    SERVER_TEST_TIMEOUT_MS,
  )
})
