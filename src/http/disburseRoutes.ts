import { Hono } from 'hono'
import { DisburseRequest } from '../schemas/disburse.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { disburse } from '../service/disburse.ts'
import { type AppEnv, requireApiKey } from './appEnv.ts'
import { readJsonBody } from './readJsonBody.ts'

/**
 * POST /api/v1/batch/disburse (spec endpoint 11): the API key first (401 `invalid_key`; the rate-limit middleware
 * verified it, from x-swapeazi-key or a Bearer token), then the body (400), then the use case (403 screening, 422 a
 * recipient that cannot be served), answering the built, recorded disbursement.
 */
export function disburseRoutes(deps: ServiceDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.post('/api/v1/batch/disburse', async (c) => {
    const claims = requireApiKey(c)
    const params = await readJsonBody(c, DisburseRequest)
    return c.json(await disburse(deps, { params, keyId: claims.id }), 200, { 'cache-control': 'no-store' })
  })
  return app
}
