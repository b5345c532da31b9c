import * as z from 'zod'
import { CapabilityManifest, ChainsResponse, CorridorsResponse, Health } from '../schemas/discovery.ts'
import { Problem } from '../schemas/problem.ts'
import { QuoteParams, QuoteResult, RankedQuote, UnsupportedPair } from '../schemas/quote.ts'

type JsonObject = Record<string, unknown>

/** Adds a schema (and the named schemas it uses) to `components`, returning a $ref to it. */
function component(components: JsonObject, name: string, schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonObject
  const text = JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/')
  const { $schema: _schema, $defs, $ref, ...rest } = JSON.parse(text) as JsonObject & { $defs?: JsonObject; $ref?: string }
  for (const [id, def] of Object.entries($defs ?? {})) components[id] = def
  if ($ref === undefined) components[name] = rest
  return { $ref: `#/components/schemas/${name}` }
}

const json = (schema: JsonObject, description: string): JsonObject => ({ description, content: { 'application/json': { schema } } })
const problem = (description: string): JsonObject => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
})

/** OpenAPI 3.1 for every endpoint, generated from the same zod schemas that parse the wire. */
export function buildOpenApi(version: string, serverUrl: string): JsonObject {
  const schemas: JsonObject = {}
  component(schemas, 'Problem', Problem, 'output')
  const params = component(schemas, 'QuoteParams', QuoteParams, 'input')
  const quote = component(schemas, 'QuoteResult', QuoteResult, 'output')
  const unsupported = component(schemas, 'UnsupportedPair', UnsupportedPair, 'output')
  const ranked = component(schemas, 'RankedQuote', RankedQuote, 'output')
  const manifest = component(schemas, 'CapabilityManifest', CapabilityManifest, 'output')
  const health = component(schemas, 'Health', Health, 'output')
  const chains = component(schemas, 'ChainsResponse', ChainsResponse, 'output')
  const corridors = component(schemas, 'CorridorsResponse', CorridorsResponse, 'output')

  const quoteErrors = {
    '400': problem('invalid_request: body missing, not JSON, or failing the schema; `errors` lists each field'),
    '413': problem('payload_too_large: body over 64 KiB'),
    '415': problem('unsupported_media_type: Content-Type is not application/json'),
    '422': problem('unsupported_token, not_agent_callable, or amount_out_of_range (with `viableRange`)'),
  }
  const quoteOperation = (summary: string, operationId: string, success: JsonObject): JsonObject => ({
    post: {
      summary,
      operationId,
      requestBody: { required: true, content: { 'application/json': { schema: params } } },
      responses: {
        '200': { description: 'Quote, or `supported: false` for a pair no route joins', content: { 'application/json': { schema: { oneOf: [success, unsupported] } } } },
        ...quoteErrors,
      },
    },
  })
  return {
    openapi: '3.1.0',
    info: {
      title: 'SwapEazi',
      version,
      description: 'Stablecoin router for AI agents. Interface specification 1.1.0. Errors are RFC 9457 problem+json with a stable `code`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: serverUrl }],
    paths: {
      '/api/mpp/routes': { get: { summary: 'Capability manifest (spec 2.7)', operationId: 'getCapabilities', responses: { '200': json(manifest, 'Capability manifest') } } },
      '/api/x402/quote': quoteOperation('Free quote over the BALANCED route', 'quoteX402', quote),
      '/api/mpp/quote': quoteOperation('Alias of /api/x402/quote for the MPP rail', 'quoteMpp', quote),
      '/api/v1/quote': quoteOperation('Three full quotes ranked FASTEST, BALANCED, CHEAPEST', 'quoteRanked', ranked),
      '/api/v1/health': { get: { summary: 'Health, snapshot age and the EUR/ZAR rate', operationId: 'getHealth', responses: { '200': json(health, 'Health') } } },
      '/api/v1/chains': { get: { summary: 'Networks with their tokens, addresses and decimals', operationId: 'listChains', responses: { '200': json(chains, 'Chains') } } },
      '/api/v1/corridors': { get: { summary: 'Corridors with live routing metadata', operationId: 'listCorridors', responses: { '200': json(corridors, 'Corridors') } } },
      '/openapi.json': { get: { summary: 'This document', operationId: 'getOpenApi', responses: { '200': { description: 'OpenAPI 3.1 document' } } } },
    },
    components: { schemas },
  }
}
