import { Hono } from 'hono'
import { rateLimitHeaders } from '../auth/rateLimits.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { getCorridorIntelligence } from '../service/getCorridorIntelligence.ts'
import { ServiceError } from '../service/serviceError.ts'
import type { AppEnv } from './appEnv.ts'
import { clientIp } from './clientIp.ts'
import { methodNotAllowed } from './problem.ts'
import { requestHeader } from './requestHeader.ts'

const PATH = '/api/v1/intelligence/corridor/:pair'
/** The free tier's monthly quota as an IETF RateLimit policy, beside any per-minute one already on the response. */
const POLICY = 'intel-free'

/**
 * An Authorization header here must be `Bearer se_…`: another scheme, or Bearer with no key, is a 401 rather than a
 * silent free answer (the middleware only reads Bearer tokens, and verifies them).
 */
function checkAuthorizationScheme(authorization: string | undefined): void {
  if (authorization === undefined) return
  const match = /^bearer(?:\s+(.*))?$/i.exec(authorization.trim())
  if (match === null)
    throw new ServiceError('invalid_key', 'Send the key as Authorization: Bearer se_… (no other scheme is accepted here), or send no Authorization header for the free tier.', {
      reason: 'malformed',
    })
  if ((match[1] ?? '').trim() === '')
    throw new ServiceError('invalid_key', 'Authorization: Bearer carries no key: send Bearer se_…, or no Authorization header for the free tier.', { reason: 'missing' })
}

/** GET /api/v1/intelligence/corridor/{pair}?amount= (spec endpoint 12, DESIGN 7.17). */
export function intelligenceRoutes(deps: ServiceDeps, trustProxy: boolean): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get(PATH, async (c) => {
    checkAuthorizationScheme(requestHeader(c, 'authorization'))
    // The rate-limit middleware verified any key sent; intelligence reads only a Bearer one.
    const source = c.get('apiKeySource')
    const result = await getCorridorIntelligence(deps, {
      pair: c.req.param('pair'),
      amount: c.req.query('amount'),
      ip: clientIp(c, trustProxy),
      claims: source === 'bearer' ? c.get('apiKey') : undefined,
      hasKeyHeader: source === 'x-swapeazi-key',
    })
    if (result.quota !== undefined) {
      // Appended: the per-minute limiter may have set its own policy; structured-field lists join across lines.
      const { windowSec, ...quota } = result.quota
      for (const [name, value] of Object.entries(rateLimitHeaders({ policy: POLICY, ...quota }, windowSec))) c.header(name, value, { append: true })
    }
    return c.json(result.body, 200, { 'cache-control': 'no-store' })
  })
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], PATH, methodNotAllowed('GET'))
  return app
}
