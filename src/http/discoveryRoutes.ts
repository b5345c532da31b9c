import { Hono } from 'hono'
import type { ServiceDeps } from '../service/deps.ts'
import { describeCapabilities } from '../service/describeCapabilities.ts'
import { getHealth } from '../service/getHealth.ts'
import { listChains } from '../service/listChains.ts'
import { listCorridors } from '../service/listCorridors.ts'

/** GET /api/mpp/routes, /api/v1/health, /api/v1/chains, /api/v1/corridors. */
export function discoveryRoutes(deps: ServiceDeps): Hono {
  const app = new Hono()
  app.get('/api/mpp/routes', (c) => c.json(describeCapabilities(deps)))
  app.get('/api/v1/health', (c) => c.json(getHealth(deps)))
  app.get('/api/v1/chains', (c) => c.json(listChains(deps)))
  app.get('/api/v1/corridors', (c) => c.json(listCorridors(deps)))
  return app
}
