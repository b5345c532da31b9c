import { Hono } from 'hono'
import type { ServiceDeps } from '../service/deps.ts'
import { issueSelfServeKey } from '../service/issueApiKey.ts'
import { clientIp } from './clientIp.ts'

/** POST /api/v1/keys: self-serve free keys (DESIGN 7.14), the endpoint behind the portal's form. No body needed. */
export function keyRoutes(deps: ServiceDeps, trustProxy: boolean): Hono {
  const app = new Hono()
  app.post('/api/v1/keys', async (c) => {
    const issued = await issueSelfServeKey(deps, clientIp(c, trustProxy))
    return c.json(issued, 201, { 'cache-control': 'no-store' })
  })
  return app
}
