import { Writable } from 'node:stream'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { type CallToolResult, CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { type Logger, pino } from 'pino'
import { createMcpServer } from '../../src/mcp/createMcpServer.ts'
import { createToolContext } from '../../src/mcp/toolContext.ts'
import { createServiceClient, type FetchLike, inProcessFetch } from '../../src/mcp/serviceClient.ts'
import type { ToolContext } from '../../src/mcp/tool.ts'
import type { Store } from '../../src/store/createStore.ts'
import { PUBLIC_URL, type TestApp, VERSION } from '../http/testApp.ts'

/** The tools of DESIGN 8 and track_swap (issue 18), in the order tools/index.ts lists them. */
export const TOOL_NAMES = ['discover_routes', 'probe_corridor', 'get_quote', 'build_swap', 'track_swap', 'corridor_intelligence'] as const

/** A pino logger writing JSON lines into `lines`, at every level, so a test can read what was logged. */
export function captureLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line.length > 0),
      )
      done()
    },
  })
  return { log: pino({ level: 'trace' }, sink), lines }
}

/** A service client on the in-process app (no socket), optionally naming the remote caller by X-Forwarded-For. */
export function inProcessClient(app: TestApp, forwardedFor?: string): ReturnType<typeof createServiceClient> {
  return createServiceClient(
    PUBLIC_URL,
    inProcessFetch((request) => app.fetch(request), forwardedFor),
  )
}

/** The same, over any fetch (for tests that bend requests on their way to the app). */
export function clientOver(fetch: FetchLike): ReturnType<typeof createServiceClient> {
  return createServiceClient(PUBLIC_URL, fetch)
}

export type ConnectedClient = { client: Client; close(): Promise<void> }

/**
 * A real SDK `Client` linked in memory to `createMcpServer` over `context`. tools/list is called once, so the
 * client knows every output schema and validates each `structuredContent` against it, as hosts do.
 */
export async function connectInMemory(context: ToolContext, log: Logger = pino({ level: 'silent' })): Promise<ConnectedClient> {
  const server = createMcpServer({ ...context, version: VERSION, log })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: 'swapeazi-test', version: '1.0.0' })
  await client.connect(clientSide)
  await client.listTools()
  return {
    client,
    close: async () => {
      await client.close()
      await server.close()
    },
  }
}

/**
 * connectInMemory to tools that call `app` in process, with no wallet, `store`'s daily budget (`dailyBudgetAtomic`,
 * default 0) and the wall clock: the context most tool tests share.
 */
export function connectToApp(app: TestApp, store: Store, dailyBudgetAtomic = 0n): Promise<ConnectedClient> {
  return connectInMemory(
    createToolContext({
      client: inProcessClient(app),
      settings: { dailyBudgetAtomic },
      budget: store.budget,
      clock: Date.now,
      log: pino({ level: 'silent' }),
    }),
  )
}

/** Calls a tool and returns the result as the spec types it (the SDK's return type is wider for old protocol versions). */
export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return CallToolResultSchema.parse(await client.callTool({ name, arguments: args }))
}

/** The one text block of a result; throws when there is not exactly one. */
export function textOf(result: CallToolResult): string {
  const [block, ...rest] = result.content
  if (block === undefined || rest.length > 0 || block.type !== 'text')
    throw new Error(`expected one text block, got ${JSON.stringify(result.content)}`)
  return block.text
}

/** Signs of an internal error leaking into text meant for a model: a stack frame, a source path, an error class. */
export const LEAK_PATTERNS: readonly RegExp[] = [/\n\s+at /, /node_modules/, /\.ts:\d+/, /\bTypeError\b/, /\bZodError\b/]
