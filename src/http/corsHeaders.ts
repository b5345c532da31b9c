import type { MiddlewareHandler } from 'hono'
import { setResponseHeader } from './setResponseHeader.ts'

/**
 * Open CORS (DESIGN 6). Headers are set before the handler runs, so they land on whatever response it builds
 * without a second Response object; preflights are answered here.
 */
export function corsHeaders(exposeHeaders: readonly string[]): MiddlewareHandler {
  const expose = exposeHeaders.join(', ')
  return async function corsHeadersMiddleware(c, next) {
    // A preflight is an OPTIONS with both Origin and Access-Control-Request-Method (Fetch standard); any other OPTIONS
    // goes on to the routes, which answer 405 with Allow.
    const isPreflight =
      c.req.method === 'OPTIONS' && c.req.header('origin') !== undefined && c.req.header('access-control-request-method') !== undefined
    if (isPreflight) {
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
