import type { MiddlewareHandler } from 'hono'

/**
 * Open CORS (DESIGN 6). Headers are set on the context before the handler runs, so they land on whatever response
 * it builds without a second Response object; preflights are answered here.
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
    c.header('access-control-allow-origin', '*')
    c.header('access-control-expose-headers', expose)
    await next()
  }
}
