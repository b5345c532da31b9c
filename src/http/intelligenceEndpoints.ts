import type { Context } from 'hono'
import { rateLimitHeaders } from '../auth/rateLimits.ts'
import { CorridorIntelligence } from '../schemas/intelligence.ts'
import { unknownFieldsError } from '../schemas/unknownFields.ts'
import { FREE_QUOTA_POLICY, getCorridorIntelligence } from '../service/getCorridorIntelligence.ts'
import { ServiceError } from '../service/serviceError.ts'
import { clientIp } from './clientIp.ts'
import { defineEndpoint } from './endpoint.ts'
import { jsonResponse, problemResponseDoc } from './openapiDoc.ts'
import { requestHeader } from './requestHeader.ts'
import { appendResponseHeader } from './setResponseHeader.ts'

/**
 * The free tier's monthly quota as IETF RateLimit fields, appended: the per-minute limiter's policy is already on the
 * response, and structured-field lists join across lines.
 */
function appendFreeQuota(c: Context, quota: { limit: number; remaining: number; resetSec: number; windowSec: number }): void {
  const { windowSec, ...decision } = quota
  for (const [name, value] of Object.entries(rateLimitHeaders({ policy: FREE_QUOTA_POLICY, ...decision }, windowSec)))
    appendResponseHeader(c, name, value)
}

/**
 * An Authorization header here must be `Bearer se_…`: another scheme, or Bearer with no key, is a 401 rather than a
 * silent free answer (the middleware only reads Bearer tokens, and verifies them).
 */
function checkAuthorizationScheme(authorization: string | undefined): void {
  if (authorization === undefined) return
  const match = /^bearer(?:\s+(.*))?$/i.exec(authorization.trim())
  if (match === null)
    throw new ServiceError(
      'invalid_key',
      'Send the key as Authorization: Bearer se_… (no other scheme is accepted here), or send no Authorization header for the free tier.',
      {
        reason: 'malformed',
      },
    )
  if ((match[1] ?? '').trim() === '')
    throw new ServiceError(
      'invalid_key',
      'Authorization: Bearer carries no key: send Bearer se_…, or no Authorization header for the free tier.',
      { reason: 'missing' },
    )
}

/** GET /api/v1/intelligence/corridor/{pair}?amount= (spec endpoint 12, DESIGN 7.17). */
export const getCorridorIntelligenceEndpoint = defineEndpoint({
  method: 'GET',
  path: '/api/v1/intelligence/corridor/{pair}',
  doc: {
    summary: 'Corridor intelligence: free tier (100 calls per IP per UTC month) without a key; per-bridge figures with a pro key as Bearer',
    operationId: 'getCorridorIntelligence',
    description:
      "Figures are computed over recorded transfers of the last 90 days; with fewer than 20 settled ones the answer falls back to the bridges' published settlement-time priors and says so (`basis`, `sampleSize`). A free key as Bearer gets the free answer.",
    security: [{}, { bearer: [] }],
    parameters: [
      {
        name: 'pair',
        in: 'path',
        required: true,
        description:
          '<A>-<B>, source first; each a chain code (ETH, BAS, POL, ARB, OPT, BNB, GNO, CEL, SOL, TRX) or a currency code (USD, EUR, GBP, ZAR, NGN, KES, SGD), case-insensitive',
        schema: { type: 'string' },
      },
      {
        name: 'amount',
        in: 'query',
        required: false,
        description:
          'Decimal amount: in the source currency when A is a currency code, else USD; ranks the optimal route within its size band',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: jsonResponse(CorridorIntelligence, 'The free (`tier: free`) or pro (`tier: pro`) answer'),
      400: problemResponseDoc(
        'invalid_request: an unknown pair code (`acceptedCodes` lists them), a bad amount, amount given twice, or a query parameter other than amount (named, with the one probably meant)',
      ),
      401: problemResponseDoc('invalid_key: the Bearer key is malformed, forged or revoked'),
      429: problemResponseDoc(
        'rate_limited: the IP used its 100 free calls this month; `Retry-After` runs to the start of the next month (UTC), and `RateLimit` and `RateLimit-Policy` name the `intel-free` policy',
      ),
    },
  },
  handler: (deps) => async (c) => {
    checkAuthorizationScheme(requestHeader(c, 'authorization'))
    // The rate-limit middleware verified any key sent; intelligence reads only a Bearer one.
    const source = c.get('apiKeySource')
    const result = await getCorridorIntelligence(deps, {
      pair: c.req.param('pair') ?? '',
      amount: queryAmount(new URL(c.req.url).searchParams),
      ip: clientIp(c, deps.trustProxy ?? 0),
      claims: source === 'bearer' ? c.get('apiKey') : undefined,
      hasKeyHeader: source === 'x-swapeazi-key',
    })
    if (result.quota !== undefined) appendFreeQuota(c, result.quota)
    return c.json(result.body, 200, { 'cache-control': 'no-store' })
  },
})

const QUERY_FIELDS = ['amount'] as const
const unknownQueryError = unknownFieldsError({ known: QUERY_FIELDS, lead: 'the query string has' })

/**
 * The one query parameter, `amount`, held to the bodies' rule: an unknown parameter is refused naming the one probably
 * meant (`?amout=2500` used to answer over every size as if no amount were sent), and so is `amount` given twice.
 */
function queryAmount(query: URLSearchParams): string | undefined {
  // Every name the query string carries, an empty one (`?=5`) included: Hono's parsed queries drop it.
  const unknown = [...new Set(query.keys())].filter((name) => !(QUERY_FIELDS as readonly string[]).includes(name))
  if (unknown.length > 0) {
    const message = unknownQueryError({ code: 'unrecognized_keys', keys: unknown }) ?? 'has unknown parameters'
    throw new ServiceError('invalid_request', `The request failed validation: ${message}.`, { errors: [{ field: '(query)', message }] })
  }
  const amounts = query.getAll('amount')
  if (amounts.length > 1) {
    const message = `is given ${amounts.length} times; send it once`
    throw new ServiceError('invalid_request', `amount ${message}.`, { errors: [{ field: 'amount', message }] })
  }
  return amounts[0]
}
