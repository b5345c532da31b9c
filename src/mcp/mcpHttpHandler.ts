import type { Logger } from 'pino'
import type { ToolContext } from './tool.ts'

export type McpHttpHandlerParameters = {
  /** The tools' context for a request made by the caller at `ip`. */
  context: (ip: string) => ToolContext
  allowedHosts: readonly string[]
  version: string
  log: Logger
}

/** Answers one /mcp request made by the caller at `clientIp` (the transport that mounts it says who that is). */
export type McpHttpHandler = (request: Request, clientIp: string) => Promise<Response>

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })

/** The host name of a Host header or an origin, lower case, without port or brackets' port. */
export function hostnameOf(value: string): string | undefined {
  try {
    return new URL(value.includes('://') ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * Streamable HTTP at /mcp (DESIGN 8): stateless, a new server and transport per POST, JSON answers; GET and DELETE
 * are 405 (no sessions, no server-initiated stream). Host and Origin must name an allowed host, against DNS
 * rebinding: a page on another site cannot drive a local server through the user's browser. A Web-standard handler,
 * so the composition root mounts it beside the HTTP API without either importing the other.
 */
/**
 * The MCP SDK's server and our tools, imported at the first request to /mcp: most of a service's start is loading
 * modules, and the SDK's (its schemas) are among the largest, for an endpoint many deployments never serve.
 */
let mcpServerModules:
  | Promise<{
      createMcpServer: typeof import('./createMcpServer.ts').createMcpServer
      connectMcp: typeof import('./connectMcp.ts').connectMcp
      WebStandardStreamableHTTPServerTransport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport
      JSONRPCMessageSchema: typeof import('@modelcontextprotocol/sdk/types.js').JSONRPCMessageSchema
    }>
  | undefined
const loadMcpServer = () =>
  (mcpServerModules ??= Promise.all([
    import('./createMcpServer.ts'),
    import('./connectMcp.ts'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, connect, transport, types]) => ({
    createMcpServer: server.createMcpServer,
    connectMcp: connect.connectMcp,
    WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
    JSONRPCMessageSchema: types.JSONRPCMessageSchema,
  })))

const NOT_A_MESSAGE =
  'Invalid Request: not a JSON-RPC 2.0 message (an object with jsonrpc "2.0" and a method, or a result or error for an id)'

/**
 * A body the SDK's transport would answer -32700 (parse error) though it is JSON: JSON-RPC 2.0 says -32600 (invalid
 * request) for a value that is not a request object, and -32600 once for an empty batch (the SDK answered 202 with
 * no body). As the stdio transport answers the same input (stdioLineTransport.ts). Undefined: the SDK's to answer.
 */
function refusalOf(value: unknown, isMessage: (value: unknown) => boolean): Response | undefined {
  if (Array.isArray(value)) {
    if (value.length === 0) return jsonRpcError(400, -32600, 'Invalid Request: an empty batch; send a JSON-RPC message')
    return value.every(isMessage) ? undefined : jsonRpcError(400, -32600, `${NOT_A_MESSAGE}: one of the batch's entries is not`)
  }
  if (isMessage(value)) return undefined
  const id = typeof value === 'object' && value !== null && 'method' in value ? (value as { id?: unknown }).id : undefined
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code: -32600, message: NOT_A_MESSAGE },
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
    }),
    { status: 400, headers: { 'content-type': 'application/json' } },
  )
}

/** Whether the SDK's transport would read this request's body (its Accept and Content-Type checks pass). */
function isReadable(request: Request): boolean {
  const accept = request.headers.get('accept') ?? ''
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase()
  return accept.includes('application/json') && accept.includes('text/event-stream') && type === 'application/json'
}

export function createMcpHttpHandler(parameters: McpHttpHandlerParameters): McpHttpHandler {
  const { allowedHosts, version, log } = parameters
  const allowed = new Set(allowedHosts.map((host) => hostnameOf(host) ?? host))
  return async function mcpHttpHandler(request, clientIp) {
    const host = hostnameOf(request.headers.get('host') ?? new URL(request.url).host)
    const origin = request.headers.get('origin') ?? undefined
    const originHost = origin === undefined ? undefined : hostnameOf(origin)
    if (host === undefined || !allowed.has(host) || (origin !== undefined && (originHost === undefined || !allowed.has(originHost)))) {
      log.warn({ event: 'mcp_host_refused', host, origin }, 'mcp_host_refused')
      return jsonRpcError(403, -32000, 'Forbidden: this Host or Origin is not allowed (SWAPEAZI_MCP_ALLOWED_HOSTS)')
    }
    if (request.method !== 'POST')
      return jsonRpcError(405, -32000, 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST', { allow: 'POST' })
    const { createMcpServer, connectMcp, WebStandardStreamableHTTPServerTransport, JSONRPCMessageSchema } = await loadMcpServer()
    // The body is read here once (its size is bounded by the HTTP layer) and handed to the SDK's transport parsed.
    let parsedBody: unknown
    if (isReadable(request)) {
      try {
        parsedBody = JSON.parse(await request.text())
      } catch {
        return jsonRpcError(400, -32700, 'Parse error: the body is not JSON; send one JSON-RPC message')
      }
      const refusal = refusalOf(parsedBody, (value) => JSONRPCMessageSchema.safeParse(value).success)
      if (refusal !== undefined) return refusal
    }
    const server = createMcpServer({ ...parameters.context(clientIp), version, log })
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) // no sessionIdGenerator: stateless
    await connectMcp(server, transport)
    try {
      return await transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody })
    } finally {
      void server.close()
    }
  }
}
