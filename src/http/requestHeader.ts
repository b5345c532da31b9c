import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/**
 * A request header, lower-case name. Under @hono/node-server the Node request's plain header object is read
 * directly: `c.req.header()` would build a web Headers object on every request. Elsewhere (tests through
 * `app.request()`) it falls back to Hono's accessor.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  if (!incoming) return c.req.header(name)
  const value = incoming.headers[name]
  return Array.isArray(value) ? value.join(', ') : value
}
