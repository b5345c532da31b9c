import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'

type RequestSchema = { safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly Issue[] } } }
type Issue = { path: readonly PropertyKey[]; message: string }

const LIST_HINT = 'params may be omitted; params.cursor, when sent, is the nextCursor of the page before'

/**
 * The methods this server answers, each with the request schema the SDK parses it by and what its params must be. The
 * SDK answers a request its schema refuses with -32603 (internal error) and the schema's issues as raw JSON text;
 * here it is -32602 (invalid params) in one sentence an agent can act on.
 */
const CHECKED = new Map<string, { schema: RequestSchema; hint: string }>([
  ['initialize', { schema: InitializeRequestSchema, hint: 'params holds protocolVersion, capabilities and clientInfo' }],
  ['ping', { schema: PingRequestSchema, hint: 'params may be omitted' }],
  ['tools/list', { schema: ListToolsRequestSchema, hint: LIST_HINT }],
  [
    'tools/call',
    {
      schema: CallToolRequestSchema,
      hint: 'params.name is the name of a tool tools/list gives, and params.arguments, when sent, an object of its arguments',
    },
  ],
  ['resources/list', { schema: ListResourcesRequestSchema, hint: LIST_HINT }],
  ['resources/templates/list', { schema: ListResourceTemplatesRequestSchema, hint: LIST_HINT }],
  ['resources/read', { schema: ReadResourceRequestSchema, hint: 'params.uri is the uri of a resource resources/list gives' }],
])

const describeIssue = (issue: Issue): string =>
  `${issue.path.length === 0 ? 'the request' : issue.path.map(String).join('.')}: ${issue.message.replace(/^Invalid input: /, '').replace('expected record', 'expected object')}`

/** The -32602 answer to a request whose params its method's schema refuses; undefined for every other message. */
export function invalidParamsAnswer(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!isJSONRPCRequest(message)) return undefined
  const checked = CHECKED.get(message.method)
  if (checked === undefined) return undefined
  const parsed = checked.schema.safeParse(message)
  if (parsed.success) return undefined
  const issues = parsed.error.issues.slice(0, 3).map(describeIssue).join('; ')
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${issues}. ${checked.hint}.` },
  }
}

/**
 * Connects `server` to `transport`, answering a request with malformed params itself (invalidParamsAnswer) before the
 * SDK sees it. Every transport (stdio, streamable HTTP) connects through here.
 */
export async function connectMcp(server: McpServer, transport: Transport): Promise<void> {
  await server.connect(transport)
  // Set by connect, and read by the transport at each message: replaced before the first can arrive (connect's
  // continuation runs before the next read of stdin; the HTTP transport is handed its request after this returns).
  const deliver = transport.onmessage
  transport.onmessage = (message, extra) => {
    const answer = invalidParamsAnswer(message)
    if (answer === undefined) {
      deliver?.(message, extra)
      return
    }
    transport.send(answer).catch((error: unknown) => transport.onerror?.(error instanceof Error ? error : new Error(String(error))))
  }
}
