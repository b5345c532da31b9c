import type { MiddlewareHandler } from 'hono'
import { setResponseHeader } from './setResponseHeader.ts'

/**
 * Open CORS (DESIGN 6). Headers are set before the handler runs, so they land on whatever response it builds
 * without a second Response object; preflights are answered here.
 */
export function corsHeaders(exposeHeaders: readonly string[]): MiddlewareHandler {
  const expose = exposeHeaders.join(', ')
  return async function corsHeadersMiddleware(c, next) {
    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
      return c.body(null, 204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': c.req.header('access-control-request-headers') ?? 'content-type',
        'access-control-max-age': '600',
        vary: 'Access-Control-Request-Headers',
      })
    }
    setResponseHeader(c, 'access-control-allow-origin', '*')
    setResponseHeader(c, 'access-control-expose-headers', expose)
    await next()
  }
}
