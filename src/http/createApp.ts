import { Hono } from 'hono'
import { createAdmitApiRequest } from '../service/admitApiRequest.ts'
import { ServiceError } from '../service/serviceError.ts'
import type { ServiceDeps } from '../service/deps.ts'
import type { AppEnv } from './appEnv.ts'
import { corsHeaders } from './corsHeaders.ts'
import { discoveryRoutes } from './discoveryRoutes.ts'
import { disburseRoutes } from './disburseRoutes.ts'
import { clientIp } from './clientIp.ts'
import { limitBody } from './limitBody.ts'
import { buildOpenApi } from './openapi.ts'
import { problemBody, problemResponse } from './problem.ts'
import { quoteRoutes } from './quoteRoutes.ts'
import { rateLimit } from './rateLimit.ts'
import { requestContext } from './requestContext.ts'
import { intelligenceRoutes } from './intelligenceRoutes.ts'
import { keyRoutes } from './keyRoutes.ts'
import { keyedSwapRoutes } from './keyedSwapRoutes.ts'
import { portalRoutes } from './portalRoutes.ts'
import { swapRoutes } from './swapRoutes.ts'

export type AppDeps = ServiceDeps & {
  /** Absolute base URL the service is reached at (OpenAPI `servers`, x402 `resource`). */
  publicUrl: string
  /** Read the client IP from X-Forwarded-For (behind our own proxy). */
  trustProxy?: boolean
}

/**
 * A Web-standard handler another transport serves at `path`, every method (the MCP server at /mcp): the composition
 * root mounts it here, so the HTTP API never imports it. It gets the request and the caller's IP.
 */
export type MountedHandler = { path: string; handle: (request: Request, clientIp: string) => Promise<Response> }

export type CreateAppOptions = { mounts?: readonly MountedHandler[] }


/** DESIGN 6: body limit for every request. */
export const MAX_BODY_BYTES = 64 * 1024

/** Paths and the methods they answer, for 405 with `Allow` instead of a bare 404. */
const ALLOWED: Readonly<Record<string, string>> = {
  '/api/mpp/routes': 'GET',
  '/api/v1/health': 'GET',
  '/api/v1/chains': 'GET',
  '/api/v1/corridors': 'GET',
  '/api/x402/quote': 'POST',
  '/api/mpp/quote': 'POST',
  '/api/v1/quote': 'POST',
  '/api/x402/swap': 'POST',
  '/api/mpp/swap': 'POST',
  '/.well-known/x402.json': 'GET',
  '/api/v1/keys': 'POST',
  '/api/v1/batch/disburse': 'POST',
  '/api/v1/swap': 'POST',
  '/openapi.json': 'GET',
  '/mcp': 'POST',
  '/': 'GET',
  '/tron': 'GET',
  '/portal.js': 'GET',
  '/portal.css': 'GET',
}

/** Builds the HTTP API over the use cases; tests call `app.request()`, `swapeazi serve` listens. */
export function createApp(deps: AppDeps, options: CreateAppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const openapi = buildOpenApi(deps.version, deps.publicUrl)

  app.use(requestContext({ log: deps.log, clock: deps.clock }))
  app.use(corsHeaders(['x-request-id', 'X-PAYMENT-RESPONSE', 'Payment-Receipt', 'WWW-Authenticate', 'RateLimit', 'RateLimit-Policy', 'Retry-After']))
  app.use(
    limitBody(MAX_BODY_BYTES, (c) =>
      problemResponse(
        c,
        problemBody(
          'payload_too_large',
          `The body is larger than ${MAX_BODY_BYTES} bytes; QuoteParams fit in far less.`,
          { limitBytes: MAX_BODY_BYTES, requestId: c.get('requestId') },
          c.req.path,
        ),
      ),
    ),
  )

  app.use('/api/v1/*', rateLimit(createAdmitApiRequest(deps), deps.trustProxy ?? false))

  app.route('/', discoveryRoutes(deps))
  app.route('/', quoteRoutes(deps))
  app.route('/', swapRoutes(deps, deps.publicUrl))
  app.route('/', keyRoutes(deps, deps.trustProxy ?? false))
  app.route('/', intelligenceRoutes(deps, deps.trustProxy ?? false))
  app.route('/', disburseRoutes(deps))
  app.route('/', keyedSwapRoutes(deps))
  app.get('/openapi.json', (c) => c.json(openapi))
  for (const mount of options.mounts ?? []) app.all(mount.path, (c) => mount.handle(c.req.raw, clientIp(c, deps.trustProxy ?? false)))
  app.route('/', portalRoutes(deps))

  app.notFound((c) => {
    const allow = ALLOWED[c.req.path]
    const requestId = c.get('requestId')
    if (allow)
      return problemResponse(c, problemBody('method_not_allowed', `${c.req.path} answers ${allow} only.`, { allow, requestId }, c.req.path), {
        allow,
      })
    return problemResponse(
      c,
      problemBody('not_found', `No endpoint at ${c.req.path}. GET /openapi.json lists every endpoint.`, { requestId }, c.req.path),
    )
  })

  app.onError((error, c) => {
    const requestId = c.get('requestId')
    if (error instanceof ServiceError) {
      const retryAfter = error.detail['retryAfterSec']
      return problemResponse(
        c,
        problemBody(error.code, error.message, { ...error.detail, requestId }, c.req.path),
        typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {},
      )
    }
    deps.log.error({ event: 'unhandled_error', request_id: requestId, err: error }, 'unhandled_error')
    return problemResponse(
      c,
      problemBody('internal_error', 'Something failed on our side; nothing was charged. Retry, and quote the requestId if it persists.', { requestId }, c.req.path),
    )
  })
  return app
}
