import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { Hono } from 'hono'
import type { Logger } from 'pino'
import type { AppEnv } from '../http/appEnv.ts'
import { clientIp } from '../http/clientIp.ts'
import { requestHeader } from '../http/requestHeader.ts'
import { createMcpServer } from './createMcpServer.ts'
import type { ToolContext } from './tool.ts'

export type McpRoutesParameters = {
  /** The tools' context for a request made by the caller at `ip`. */
  context: (ip: string) => ToolContext
  trustProxy: boolean
  allowedHosts: readonly string[]
  version: string
  log: Logger
}

const jsonRpcError = (code: number, message: string): string => JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })

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
 * rebinding: a page on another site cannot drive a local server through the user's browser.
 */
export function mcpRoutes(parameters: McpRoutesParameters): Hono<AppEnv> {
  const { allowedHosts, version, log } = parameters
  const allowed = new Set(allowedHosts.map((host) => hostnameOf(host) ?? host))
  const app = new Hono<AppEnv>()
  app.all('/mcp', async (c) => {
    const host = hostnameOf(requestHeader(c, 'host') ?? new URL(c.req.url).host)
    const origin = requestHeader(c, 'origin')
    const originHost = origin === undefined ? undefined : hostnameOf(origin)
    if (host === undefined || !allowed.has(host) || (origin !== undefined && (originHost === undefined || !allowed.has(originHost)))) {
      log.warn({ event: 'mcp_host_refused', host, origin }, 'mcp_host_refused')
      return c.body(jsonRpcError(-32000, 'Forbidden: this Host or Origin is not allowed (SWAPEAZI_MCP_ALLOWED_HOSTS)'), 403, { 'content-type': 'application/json' })
    }
    if (c.req.method !== 'POST')
      return c.body(jsonRpcError(-32000, 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC with POST'), 405, {
        'content-type': 'application/json',
        allow: 'POST',
      })
    const server = createMcpServer({ ...parameters.context(clientIp(c, parameters.trustProxy)), version, log })
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true }) // no sessionIdGenerator: stateless
    await server.connect(transport)
    try {
      return await transport.handleRequest(c.req.raw)
    } finally {
      void server.close()
    }
  })
  return app
}
