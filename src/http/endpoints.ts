import { PUBLISHED_CACHE } from './cacheControl.ts'
import { getCapabilities, getHealthEndpoint, listChainsEndpoint, listCorridorsEndpoint } from './discoveryEndpoints.ts'
import { defineEndpoint, type Endpoint } from './endpoint.ts'
import { getCorridorIntelligenceEndpoint } from './intelligenceEndpoints.ts'
import { issueKey } from './keyEndpoints.ts'
import { disburseEndpoint, getSwap, swapWithKey } from './keyedSwapEndpoints.ts'
import { buildOpenApi } from './openapi.ts'
import { portalPage, portalScript, portalStyles, tronPage } from './portalEndpoints.ts'
import { quoteMpp, quoteRanked, quoteX402 } from './quoteEndpoints.ts'
import { getSwapStatusEndpoint, hintTransactionEndpoint } from './swapStatusEndpoints.ts'
import { getX402Manifest, swapMpp, swapX402 } from './swapEndpoints.ts'

/**
 * GET /openapi.json: the document derived from this app's endpoints, built at its first request and kept. Converting
 * every zod schema to JSON Schema takes about 200 ms of CPU, a tenth of the service's start (issue 15 item 10), and
 * most processes never serve the document; test/http/openapiSnapshot.test.ts builds it on every test run.
 */
export const getOpenApi = defineEndpoint({
  method: 'GET',
  path: '/openapi.json',
  doc: { summary: 'This document', operationId: 'getOpenApi', responses: { 200: { description: 'OpenAPI 3.1 document' } } },
  handler: (deps, scope) => {
    // Serialised once: a fresh 100 KB string per answer cost 1.4 ms each, and pipelined requests never read held one
    // each (review of issue 15); every answer now shares these bytes.
    let document: Uint8Array<ArrayBuffer> | undefined
    return (c) => {
      document ??= new TextEncoder().encode(
        JSON.stringify(buildOpenApi(scope.endpoints, deps.version, deps.publicUrl)),
      ) as Uint8Array<ArrayBuffer>
      return c.body(document, 200, { 'content-type': 'application/json', 'cache-control': PUBLISHED_CACHE })
    }
  },
})

/**
 * Every endpoint of the HTTP API, in the order /openapi.json lists them: the app's routes, its 405 answers and the
 * OpenAPI document all derive from this table. /mcp is not here: the composition root mounts it (src/app).
 */
export const ENDPOINTS: readonly Endpoint[] = [
  getCapabilities,
  quoteX402,
  quoteMpp,
  quoteRanked,
  getHealthEndpoint,
  listChainsEndpoint,
  listCorridorsEndpoint,
  swapX402,
  swapMpp,
  getX402Manifest,
  issueKey,
  getCorridorIntelligenceEndpoint,
  swapWithKey,
  getSwap,
  getSwapStatusEndpoint,
  hintTransactionEndpoint,
  disburseEndpoint,
  getOpenApi,
  portalPage,
  tronPage,
  portalScript,
  portalStyles,
]
