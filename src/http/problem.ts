import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { ErrorCode, FieldError, Problem } from '../schemas/problem.ts'

/** The only table from error code to HTTP status. */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  invalid_request: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  request_timeout: 408,
  headers_too_large: 431,
  expectation_failed: 417,
  not_found: 404,
  method_not_allowed: 405,
  unsupported_token: 422,
  not_agent_callable: 422,
  amount_out_of_range: 422,
  no_route_found: 422,
  address_screened: 403,
  origin_not_allowed: 403,
  conflicting_payment: 400,
  rate_limited: 429,
  invalid_key: 401,
  invalid_quote: 400,
  quote_expired: 422,
  payment_unavailable: 503,
  router_not_deployed: 422,
  market_unavailable: 503,
  simulation_failed: 422,
  transaction_mismatch: 422,
  chain_not_tracked: 422,
  tracking_unavailable: 503,
  internal_error: 500,
}

const TITLES: Readonly<Record<ErrorCode, string>> = {
  invalid_request: 'Invalid request',
  unsupported_media_type: 'Unsupported media type',
  payload_too_large: 'Payload too large',
  request_timeout: 'Request timeout',
  headers_too_large: 'Request headers too large',
  expectation_failed: 'Expectation failed',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  unsupported_token: 'Unsupported token',
  not_agent_callable: 'Not agent-callable',
  amount_out_of_range: 'Amount out of range',
  no_route_found: 'No route found',
  address_screened: 'Address screened',
  origin_not_allowed: 'Origin not allowed',
  conflicting_payment: 'Conflicting payment headers',
  rate_limited: 'Too many requests',
  invalid_key: 'Invalid API key',
  invalid_quote: 'Invalid quote',
  quote_expired: 'Quote expired',
  payment_unavailable: 'Payment verification unavailable',
  router_not_deployed: 'No router on this chain',
  market_unavailable: 'Market unavailable',
  simulation_failed: 'Simulation failed',
  transaction_mismatch: 'Transaction does not match the swap',
  chain_not_tracked: 'Chain not tracked here',
  tracking_unavailable: 'Tracking unavailable',
  internal_error: 'Internal error',
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** Renders RFC 9457 problem details for a code; `extra` carries the members an agent needs to act. */
export function problemBody(
  code: ErrorCode,
  detail: string,
  extra: Readonly<Record<string, unknown>> & { errors?: FieldError[] } = {},
  instance?: string,
): Problem {
  return {
    type: `https://docs.swapeazi.com/errors/${code}`,
    title: TITLES[code],
    status: STATUS_BY_CODE[code],
    detail,
    code,
    ...(instance === undefined ? {} : { instance }),
    ...extra,
  }
}

/** Answers with a problem through the context, so headers set earlier (request id, CORS) are kept. */
export function problemResponse(c: Context, body: Problem, headers: Readonly<Record<string, string>> = {}): Response {
  return c.body(JSON.stringify(body), STATUS_BY_CODE[body.code], { 'content-type': PROBLEM_CONTENT_TYPE, ...headers })
}

/**
 * 405 with `Allow` for a path with a parameter (the app's 405 table holds exact paths): a handler for the methods
 * the path does not answer.
 */
export const methodNotAllowed =
  (allow: string) =>
  (c: Context<{ Variables: { requestId: string } }>): Response =>
    problemResponse(
      c,
      problemBody('method_not_allowed', `${c.req.path} answers ${allow} only.`, { allow, requestId: c.get('requestId') }, c.req.path),
      { allow },
    )
