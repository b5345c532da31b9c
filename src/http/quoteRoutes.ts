import { Hono } from 'hono'
import { QuoteParams } from '../schemas/quote.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { getQuote, getRankedQuote } from '../service/getQuote.ts'
import { readJsonBody } from './readJsonBody.ts'

/** POST /api/x402/quote and its MPP alias (spec rule 1), and the ranked POST /api/v1/quote. */
export function quoteRoutes(deps: ServiceDeps): Hono {
  const app = new Hono()
  for (const path of ['/api/x402/quote', '/api/mpp/quote']) {
    app.post(path, async (c) => {
      const result = getQuote(deps, await readJsonBody(c, QuoteParams))
      return c.json(result.kind === 'quote' ? result.quote : result.body)
    })
  }
  app.post('/api/v1/quote', async (c) => {
    const result = getRankedQuote(deps, await readJsonBody(c, QuoteParams))
    return c.json(result.body)
  })
  return app
}
