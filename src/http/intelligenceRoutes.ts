import { Hono } from 'hono'
import type { ServiceDeps } from '../service/deps.ts'
import { getCorridorIntelligence } from '../service/getCorridorIntelligence.ts'
import { clientIp } from './clientIp.ts'
import { problemBody, problemResponse } from './problem.ts'
import { requestHeader } from './requestHeader.ts'

const PATH = '/api/v1/intelligence/corridor/:pair'
/** The free tier's monthly quota as an IETF RateLimit policy, beside any per-minute one already on the response. */
const POLICY = '"intel-free"'

/** GET /api/v1/intelligence/corridor/{pair}?amount= (spec endpoint 12, DESIGN 7.17). */
export function intelligenceRoutes(deps: ServiceDeps, trustProxy: boolean): Hono<{ Variables: { requestId: string } }> {
  const app = new Hono<{ Variables: { requestId: string } }>()
  app.get(PATH, async (c) => {
    const result = await getCorridorIntelligence(deps, {
      pair: c.req.param('pair'),
      amount: c.req.query('amount'),
      ip: clientIp(c, trustProxy),
      authorization: requestHeader(c, 'authorization'),
      hasKeyHeader: requestHeader(c, 'x-swapeazi-key') !== undefined,
    })
    if (result.quota !== undefined) {
      // Appended: the per-minute limiter may have set its own policy; structured-field lists join across lines.
      c.header('RateLimit-Policy', `${POLICY};q=${result.quota.limit};w=${result.quota.windowSec}`, { append: true })
      c.header('RateLimit', `${POLICY};r=${result.quota.remaining};t=${result.quota.resetSec}`, { append: true })
    }
    return c.json(result.body, 200, { 'cache-control': 'no-store' })
  })
  // The app's 405 table holds exact paths; this one has a parameter.
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], PATH, (c) =>
    problemResponse(c, problemBody('method_not_allowed', `${c.req.path} answers GET only.`, { allow: 'GET', requestId: c.get('requestId') }, c.req.path), {
      allow: 'GET',
    }),
  )
  return app
}
