import type { ServerResponse } from 'node:http'
import type { Context } from 'hono'

/**
 * Sets a response header before the handler runs, so it lands on whatever response follows (errors included).
 * Under @hono/node-server it goes straight onto Node's response object, which merges it with the headers the
 * handler's response brings: `c.header()` would instead build a web Headers object on every request, and
 * node-server would then copy it back into a plain object. Elsewhere (tests through `app.request()`, the in-process
 * MCP client) it falls back to Hono's accessor.
 */
export function setResponseHeader(c: Context, name: string, value: string): void {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
  if (outgoing && !outgoing.headersSent) outgoing.setHeader(name, value)
  else c.header(name, value)
}

/**
 * Appends a value to a response header set before the handler (setResponseHeader), as another field line: a
 * structured-field list such as RateLimit joins across lines. Falls back to Hono's accessor as setResponseHeader does.
 */
export function appendResponseHeader(c: Context, name: string, value: string): void {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
  if (outgoing && !outgoing.headersSent) {
    const existing = outgoing.getHeader(name)
    outgoing.setHeader(name, existing === undefined ? value : [...(Array.isArray(existing) ? existing : [String(existing)]), value])
  } else c.header(name, value, { append: true })
}
