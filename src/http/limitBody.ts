import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { requestHeader } from './requestHeader.ts'

/**
 * DESIGN 6 body limit. A declared Content-Length is checked from the header alone, which keeps
 * @hono/node-server's direct body read (no web stream per request); a chunked body without one is counted while it
 * streams, through Hono's bodyLimit.
 */
export function limitBody(maxBytes: number, onTooLarge: (c: Context) => Response): MiddlewareHandler {
  const streaming = bodyLimit({ maxSize: maxBytes, onError: onTooLarge })
  return async function limitBodyMiddleware(c, next) {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next()
    const declared = requestHeader(c, 'content-length')
    if (declared === undefined) return streaming(c, next)
    if (Number(declared) > maxBytes) return onTooLarge(c)
    return next()
  }
}
