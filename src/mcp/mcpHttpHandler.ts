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
    }>
  | undefined
const loadMcpServer = () =>
  (mcpServerModules ??= Promise.all([
    import('./createMcpServer.ts'),
    import('./connectMcp.ts'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
  ]).then(([server, connect, transport]) => ({
    createMcpServer: server.createMcpServer,
    connectMcp: connect.connectMcp,
    WebStandardStreamableHTTPServerTransport: transport.WebStandardStreamableHTTPServerTransport,
  })))

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
    const { createMcpServer, connectMcp, WebStandardStreamableHTTPServerTransport } = await loadMcpServer()
    const server = createMcpServer({ ...parameters.context(clientIp), version, log })
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) // no sessionIdGenerator: stateless
    await connectMcp(server, transport)
    try {
      return await transport.handleRequest(request)
    } finally {
      void server.close()
    }
  }
}
