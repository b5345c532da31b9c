import { Hono } from 'hono'
import { QuoteParams } from '../schemas/quote.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { getQuote, getRankedQuote } from '../service/getQuote.ts'
import { createQuoteMemo } from '../service/quoteMemo.ts'
import { parseJsonBody, readJsonBody, readJsonText } from './readJsonBody.ts'

/** POST /api/x402/quote and its MPP alias (spec rule 1), and the ranked POST /api/v1/quote. */
export function quoteRoutes(deps: ServiceDeps): Hono {
  const app = new Hono()
  // One memo for both paths: they give the same answer to the same request.
  const memo = createQuoteMemo(deps.clock)
  for (const path of ['/api/x402/quote', '/api/mpp/quote']) {
    app.post(path, async (c) => {
      const text = memo.answer(await readJsonText(c), (body) => {
        const result = getQuote(deps, parseJsonBody(body, QuoteParams))
        return JSON.stringify(result.kind === 'quote' ? result.quote : result.body)
      })
      return c.body(text, 200, { 'content-type': 'application/json' })
    })
  }
  app.post('/api/v1/quote', async (c) => {
    const result = getRankedQuote(deps, await readJsonBody(c, QuoteParams))
    return c.json(result.body)
  })
  return app
}
