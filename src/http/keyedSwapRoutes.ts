import { Hono } from 'hono'
import { KeyedSwapRequest } from '../schemas/swap.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { getSwapRecord } from '../service/getSwapRecord.ts'
import { swapWithQuote } from '../service/swapWithQuote.ts'
import { type AppEnv, requireApiKey } from './appEnv.ts'
import { methodNotAllowed } from './problem.ts'
import { readJsonBody } from './readJsonBody.ts'

/**
 * Spec endpoint 10 and its record: POST /api/v1/swap turns a signed quote into a transaction for a key holder (no
 * per-call fee); GET /api/v1/swap/{ref} reads a swap back. Both need a key (401 `invalid_key`).
 */
export function keyedSwapRoutes(deps: ServiceDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.post('/api/v1/swap', async (c) => {
    const claims = requireApiKey(c)
    const body = await readJsonBody(c, KeyedSwapRequest)
    return c.json(await swapWithQuote(deps, { quoteId: body.quoteId, toAddress: body.toAddress, keyId: claims.id }))
  })
  app.get('/api/v1/swap/:ref', async (c) => {
    const claims = requireApiKey(c)
    return c.json(await getSwapRecord(deps, { ref: c.req.param('ref'), keyId: claims.id }))
  })
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], '/api/v1/swap/:ref', methodNotAllowed('GET'))
  return app
}
