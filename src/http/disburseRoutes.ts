import { Hono } from 'hono'
import { DisburseRequest } from '../schemas/disburse.ts'
import { authenticateApiKey } from '../service/authenticateApiKey.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { disburse } from '../service/disburse.ts'
import { readJsonBody } from './readJsonBody.ts'
import { requestHeader } from './requestHeader.ts'

/** The path of spec endpoint 11. */
export const DISBURSE_PATH = '/api/v1/batch/disburse'

/**
 * POST /api/v1/batch/disburse (spec endpoint 11): the API key first (401 `invalid_key`), then the body (400), then
 * the use case (403 screening, 422 a recipient that cannot be served), answering the built, recorded disbursement.
 */
export function disburseRoutes(deps: ServiceDeps): Hono {
  const app = new Hono()
  app.post(DISBURSE_PATH, async (c) => {
    const claims = await authenticateApiKey(deps, requestHeader(c, 'x-swapeazi-key'))
    const params = await readJsonBody(c, DisburseRequest)
    return c.json(await disburse(deps, { params, keyId: claims.id }), 200, { 'cache-control': 'no-store' })
  })
  return app
}
