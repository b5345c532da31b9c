import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/**
 * Whether the client closed its connection before we answered, mid-body or while the handler ran: its socket is
 * destroyed. Requests served in process (tests, the MCP server's own client) have no socket and never are.
 */
export function isClientGone(c: Context): boolean {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  return incoming?.socket?.destroyed === true
}
