import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { requestHeader } from './requestHeader.ts'
import { setResponseHeader } from './setResponseHeader.ts'

export type LimitBodyRefusals = {
  /** The answer to a body over the limit (413). */
  tooLarge(c: Context): Response
  /** The answer to a body on GET or HEAD (400). */
  bodyWithoutMethod(c: Context): Response
}

/** Answers a refusal and closes the connection after it, so the body that was refused is never read. */
function refuseAndClose(c: Context, answer: (c: Context) => Response): Response {
  // Node's server ends the socket once a response with `Connection: close` is written; otherwise it would read the
  // rest of the body to reuse the connection (a GET's without any bound).
  setResponseHeader(c, 'connection', 'close')
  return answer(c)
}

/**
 * DESIGN 6 body limits. A declared Content-Length is checked from the header alone, which keeps
 * @hono/node-server's direct body read (no web stream per request); a chunked body without one is counted while it
 * streams, through Hono's bodyLimit. GET and HEAD take no body: one declared (a Content-Length above 0, or a
 * Transfer-Encoding) is refused before anything reads it. Both refusals close the connection.
 */
export function limitBody(maxBytes: number, refusals: LimitBodyRefusals): MiddlewareHandler {
  const tooLarge = (c: Context): Response => refuseAndClose(c, refusals.tooLarge)
  const streaming = bodyLimit({ maxSize: maxBytes, onError: tooLarge })
  return async function limitBodyMiddleware(c, next) {
    const declared = requestHeader(c, 'content-length')
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      if (Number(declared ?? 0) > 0 || requestHeader(c, 'transfer-encoding') !== undefined)
        return refuseAndClose(c, refusals.bodyWithoutMethod)
      return next()
    }
    if (declared === undefined) return streaming(c, next)
    if (Number(declared) > maxBytes) return tooLarge(c)
    return next()
  }
}
