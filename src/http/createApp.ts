import { Hono } from 'hono'
import { rateLimitHeaders } from '../auth/rateLimits.ts'
import type { UnofficialStatusCode } from 'hono/utils/http-status'
import { createAdmitApiRequest } from '../service/admitApiRequest.ts'
import { ServiceError } from '../service/serviceError.ts'
import type { AppDeps, AppEnv } from './appEnv.ts'
import { clientIp } from './clientIp.ts'
import { corsHeaders } from './corsHeaders.ts'
import type { AppScope, Endpoint } from './endpoint.ts'
import { ENDPOINTS } from './endpoints.ts'
import { isClientGone } from './isClientGone.ts'
import { limitBody } from './limitBody.ts'
import { methodNotAllowed, problemBody, problemResponse } from './problem.ts'
import { localLimitsOf, rateLimit } from './rateLimit.ts'
import { requestContext } from './requestContext.ts'

export type { AppDeps } from './appEnv.ts'

/**
 * A Web-standard handler another transport serves at `path`, every method (the MCP server at /mcp): the composition
 * root mounts it here, so the HTTP API never imports it. It gets the request and the caller's IP.
 */
export type MountedHandler = { path: string; handle: (request: Request, clientIp: string) => Promise<Response> }

export type CreateAppOptions = {
  mounts?: readonly MountedHandler[]
  /** The endpoints to serve; the API's own table by default. */
  endpoints?: readonly Endpoint[]
}

/** DESIGN 6: body limit for every request. */
export const MAX_BODY_BYTES = 64 * 1024

/** The 413's detail, wherever a body over MAX_BODY_BYTES is refused (here, and before `100 Continue` in serve). */
export const BODY_TOO_LARGE_DETAIL = `The body is larger than ${MAX_BODY_BYTES} bytes, the most any request to this service may carry; every body it reads fits in far less.`

/** The status logged for a request whose client closed the connection before the answer (no one receives it). */
const CLIENT_CLOSED_REQUEST = 499 as UnofficialStatusCode

/**
 * Issue 15 item 6: a 429 names the policy that refused it in `RateLimit` and `RateLimit-Policy`, with nothing left
 * until `Retry-After`, in place of whatever the per-minute limiter set (another policy, which may have quota left).
 * Every `rate_limited` error carries its policy, limit and wait; `windowSec` where its window is not the minute.
 */
function refusingPolicyHeaders(error: ServiceError): Record<string, string> {
  if (error.code !== 'rate_limited') return {}
  const { policy, limit, retryAfterSec, windowSec } = error.detail
  if (typeof policy !== 'string' || typeof limit !== 'number' || typeof retryAfterSec !== 'number') return {}
  const decision = { policy, limit, remaining: 0, resetSec: retryAfterSec }
  return rateLimitHeaders(decision, typeof windowSec === 'number' ? windowSec : undefined)
}

/** Builds the HTTP API over the use cases; tests call `app.request()`, `swapeazi serve` listens. */
export function createApp(deps: AppDeps, options: CreateAppOptions = {}): Hono<AppEnv> {
  const endpoints = options.endpoints ?? ENDPOINTS
  const app = new Hono<AppEnv>()

  app.use(requestContext({ log: deps.log, clock: deps.clock }))
  // Exactly the headers scripts may read, as sent (test/http/exposedHeaders.test.ts): the MPP rail's only with it on.
  app.use(
    corsHeaders([
      'x-request-id',
      'X-PAYMENT-RESPONSE',
      'PAYMENT-REQUIRED',
      'PAYMENT-RESPONSE',
      ...(deps.mpp === undefined ? [] : ['WWW-Authenticate', 'Payment-Receipt']),
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'Allow',
    ]),
  )
  app.use(
    limitBody(MAX_BODY_BYTES, {
      tooLarge: (c) =>
        problemResponse(
          c,
          problemBody(
            'payload_too_large',
            BODY_TOO_LARGE_DETAIL,
            { limitBytes: MAX_BODY_BYTES, requestId: c.get('requestId') },
            c.req.path,
          ),
        ),
      bodyWithoutMethod: (c) =>
        problemResponse(
          c,
          problemBody(
            'invalid_request',
            `${c.req.method} takes no body: send the request again without one. An endpoint that reads a JSON body is a POST (GET /openapi.json lists them).`,
            { errors: [{ field: '(body)', message: `must be absent on ${c.req.method}` }], requestId: c.get('requestId') },
            c.req.path,
          ),
        ),
    }),
  )
  const kept = new Map<symbol, unknown>()
  const scope: AppScope = {
    endpoints,
    once<T>(key: symbol, make: () => T): T {
      if (!kept.has(key)) kept.set(key, make())
      return kept.get(key) as T
    },
  }
  app.use('/api/v1/*', rateLimit(createAdmitApiRequest(deps, localLimitsOf(deps, scope)), deps.trustProxy ?? 0))
  const methodsByPath = new Map<string, string[]>()
  for (const endpoint of endpoints) {
    app.on(endpoint.method, endpoint.routePath, endpoint.makeHandler(deps, scope))
    methodsByPath.set(endpoint.routePath, [...(methodsByPath.get(endpoint.routePath) ?? []), endpoint.method])
  }
  for (const mount of options.mounts ?? []) app.all(mount.path, (c) => mount.handle(c.req.raw, clientIp(c, deps.trustProxy ?? 0)))
  // Every other method on a declared path: 405 with Allow, derived from the same table (a GET route answers HEAD too).
  for (const [routePath, methods] of methodsByPath)
    app.all(routePath, methodNotAllowed(methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])).join(', ')))

  app.notFound((c) =>
    problemResponse(
      c,
      problemBody(
        'not_found',
        `No endpoint at ${c.req.path}. GET /openapi.json lists every endpoint of the HTTP API (MCP is at /mcp).`,
        { requestId: c.get('requestId') },
        c.req.path,
      ),
    ),
  )

  app.onError((error, c) => {
    const requestId = c.get('requestId')
    if (error instanceof ServiceError) {
      const retryAfter = error.detail['retryAfterSec']
      return problemResponse(c, problemBody(error.code, error.message, { ...error.detail, requestId }, c.req.path), {
        ...(typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {}),
        ...refusingPolicyHeaders(error),
      })
    }
    // The client left mid-body or mid-request: nothing to answer and nothing failed here. requestContext logs it as
    // `request_aborted` at info; 499 is the access logs' usual status for it.
    if (isClientGone(c)) return c.body(null, CLIENT_CLOSED_REQUEST)
    deps.log.error({ event: 'unhandled_error', request_id: requestId, err: error }, 'unhandled_error')
    return problemResponse(
      c,
      problemBody(
        'internal_error',
        'Something failed on our side; nothing was charged. Retry, and quote the requestId if it persists.',
        { requestId },
        c.req.path,
      ),
    )
  })
  return app
}
