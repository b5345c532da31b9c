import { QuoteParams, QuoteResult, RankedQuote, UnsupportedPair } from '../schemas/quote.ts'
import { getQuote, getRankedQuote } from '../service/getQuote.ts'
import { refuseDiscoveryChains } from '../service/resolveQuoteRequest.ts'
import { createQuoteMemo } from '../service/quoteMemo.ts'
import { defineEndpoint, type Endpoint, type OperationDoc, type ResponseDoc } from './endpoint.ts'
import { MARKET_UNAVAILABLE, PAYLOAD_TOO_LARGE, problemResponseDoc, UNSUPPORTED_MEDIA_TYPE } from './openapiDoc.ts'

/** The 4xx every quote endpoint may answer. */
export const QUOTE_ERRORS: Readonly<Record<number, ResponseDoc>> = {
  400: problemResponseDoc('invalid_request: body missing, not JSON, or failing the schema; `errors` lists each field'),
  413: PAYLOAD_TOO_LARGE,
  415: UNSUPPORTED_MEDIA_TYPE,
  422: problemResponseDoc('unsupported_token, not_agent_callable, or amount_out_of_range (with `viableRange`)'),
  503: MARKET_UNAVAILABLE,
}

const quoteDoc = (summary: string, operationId: string, success: typeof QuoteResult | typeof RankedQuote): OperationDoc => ({
  summary,
  operationId,
  responses: {
    200: { description: 'Quote, or `supported: false` for a pair no route joins', body: [success, UnsupportedPair] },
    ...QUOTE_ERRORS,
  },
})

/** One memo for both free-quote paths: they give the same answer to the same request. */
const QUOTE_MEMO = Symbol('quote memo')

/** POST /api/x402/quote and its MPP alias (spec rule 1): the BALANCED route, memoised per second (quoteMemo.ts). */
const freeQuote = (path: string, summary: string, operationId: string): Endpoint =>
  defineEndpoint({
    method: 'POST',
    path,
    body: QuoteParams,
    screenBody: refuseDiscoveryChains,
    doc: quoteDoc(summary, operationId, QuoteResult),
    handler: (deps, scope) => {
      const memo = scope.once(QUOTE_MEMO, () => createQuoteMemo(deps.clock, { version: () => deps.catalogue }))
      return async (c, input) => {
        const text = memo.answer(await input.bodyText(), (body) => {
          const result = getQuote(deps, input.parse(body))
          return JSON.stringify(result.kind === 'quote' ? result.quote : result.body)
        })
        return c.body(text, 200, { 'content-type': 'application/json' })
      }
    },
  })

export const quoteX402 = freeQuote('/api/x402/quote', 'Free quote over the BALANCED route', 'quoteX402')
export const quoteMpp = freeQuote('/api/mpp/quote', 'Alias of /api/x402/quote for the MPP rail', 'quoteMpp')

const RANKED_QUOTE_MEMO = Symbol('ranked quote memo')

/**
 * POST /api/v1/quote: the three rankings, each a full quote with its own quoteId. Memoised per second like the free
 * quote: the answer depends on the request, the catalogue and the second only, never on the key (which the
 * rate-limit middleware has verified and counted before).
 */
export const quoteRanked = defineEndpoint({
  method: 'POST',
  path: '/api/v1/quote',
  body: QuoteParams,
  screenBody: refuseDiscoveryChains,
  doc: quoteDoc('Three full quotes ranked FASTEST, BALANCED, CHEAPEST', 'quoteRanked', RankedQuote),
  handler: (deps, scope) => {
    const memo = scope.once(RANKED_QUOTE_MEMO, () => createQuoteMemo(deps.clock, { version: () => deps.catalogue }))
    return async (c, input) => {
      const text = memo.answer(await input.bodyText(), (body) => JSON.stringify(getRankedQuote(deps, input.parse(body)).body))
      return c.body(text, 200, { 'content-type': 'application/json' })
    }
  },
})
