import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'
import { requestHeader } from './requestHeader.ts'

/**
 * The caller's IP for per-IP limits: the socket's address, or the first X-Forwarded-For entry when the service sits
 * behind a proxy we run (`trustProxy`). In-process calls (tests, the MCP server's own client) have no socket; they
 * may name themselves with X-Forwarded-For, else count as one caller.
 */
export function clientIp(c: Context, trustProxy: boolean): string {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  const forwarded = requestHeader(c, 'x-forwarded-for')?.split(',')[0]?.trim()
  if (incoming === undefined) return forwarded || 'in-process'
  if (trustProxy && forwarded) return forwarded
  return incoming.socket.remoteAddress ?? 'unknown'
}
