import { randomUUID } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import type { Logger } from 'pino'
import { isClientGone } from './isClientGone.ts'
import { requestHeader } from './requestHeader.ts'
import { setResponseHeader } from './setResponseHeader.ts'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/

export type RequestContextOptions = { log: Logger; clock: () => number }

/**
 * Gives every request an id (the caller's `x-request-id` when it is sane, else a new UUID), echoes it on every
 * response, including errors, and writes one access-log line per request: `http_request`, or `request_aborted` when
 * the client closed the connection before the answer (its status is then 499 if the handler never finished).
 *
 * Every response also carries `X-Content-Type-Options: nosniff` and, unless its endpoint sets its own,
 * `Cache-Control: no-store` (docs/endpoints.md): quotes, swaps, swap records, keys and errors are never kept by a
 * cache, and an endpoint whose answer may be (the published documents) says so itself.
 */
export function requestContext({ log, clock }: RequestContextOptions): MiddlewareHandler<{ Variables: { requestId: string } }> {
  return async function requestContextMiddleware(c, next) {
    const incoming = requestHeader(c, 'x-request-id')
    const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID()
    c.set('requestId', requestId)
    // Set before the handler, not on c.res after the fact: that keeps node-server's lightweight response path.
    setResponseHeader(c, 'x-request-id', requestId)
    setResponseHeader(c, 'x-content-type-options', 'nosniff')
    setResponseHeader(c, 'cache-control', 'no-store')
    const started = clock()
    await next()
    const event = isClientGone(c) ? 'request_aborted' : 'http_request'
    log.info({ event, request_id: requestId, method: c.req.method, path: c.req.path, status: c.res.status, ms: clock() - started }, event)
  }
}
