import * as z from 'zod'
import { CapabilityManifest, ChainsResponse, CorridorsResponse, Health } from '../schemas/discovery.ts'
import { Problem } from '../schemas/problem.ts'
import { PaidSwapParams, QuoteParams, QuoteResult, RankedQuote, UnsupportedPair } from '../schemas/quote.ts'
import { KeyedSwapRequest, SwapRecordWire, SwapResult } from '../schemas/swap.ts'
import { SwapStatusWire, TransactionHint } from '../schemas/swapStatus.ts'
import { DisbursementResult, DisburseRequest } from '../schemas/disburse.ts'
import { CorridorIntelligence } from '../schemas/intelligence.ts'
import { IssuedApiKey } from '../schemas/keys.ts'
import { PaymentReceipt, PaymentRequiredV2, SettleResponseV2, X402Challenge, X402Manifest } from '../schemas/x402.ts'
import type { Endpoint, OperationDoc, ResponseDoc } from './endpoint.ts'
import { PAYLOAD_TOO_LARGE, problemResponseDoc, UNSUPPORTED_MEDIA_TYPE } from './openapiDoc.ts'

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

/** Every named schema, in the order `components.schemas` lists them (the committed snapshot's order). */
const COMPONENTS: readonly (readonly [string, z.ZodType, 'input' | 'output'])[] = [
  ['Problem', Problem, 'output'],
  ['QuoteParams', QuoteParams, 'input'],
  ['PaidSwapParams', PaidSwapParams, 'input'],
  ['QuoteResult', QuoteResult, 'output'],
  ['UnsupportedPair', UnsupportedPair, 'output'],
  ['RankedQuote', RankedQuote, 'output'],
  ['CapabilityManifest', CapabilityManifest, 'output'],
  ['Health', Health, 'output'],
  ['ChainsResponse', ChainsResponse, 'output'],
  ['CorridorsResponse', CorridorsResponse, 'output'],
  ['SwapResult', SwapResult, 'output'],
  ['X402Challenge', X402Challenge, 'output'],
  ['X402Manifest', X402Manifest, 'output'],
  ['IssuedApiKey', IssuedApiKey, 'output'],
  ['CorridorIntelligence', CorridorIntelligence, 'output'],
  ['PaymentReceipt', PaymentReceipt, 'output'],
  ['PaymentRequiredV2', PaymentRequiredV2, 'output'],
  ['SettleResponseV2', SettleResponseV2, 'output'],
  ['DisburseRequest', DisburseRequest, 'input'],
  ['DisbursementResult', DisbursementResult, 'output'],
  ['KeyedSwapRequest', KeyedSwapRequest, 'input'],
  ['SwapRecord', SwapRecordWire, 'output'],
  ['SwapStatus', SwapStatusWire, 'output'],
  ['TransactionHint', TransactionHint, 'input'],
]

const PROBLEM_CONTENT = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } }

function responseObject(doc: ResponseDoc, ref: (schema: z.ZodType) => JsonObject): JsonObject {
  if (doc.isProblem === true) return { description: doc.description, content: PROBLEM_CONTENT }
  if (doc.body === undefined) return { description: doc.description }
  const schema = Array.isArray(doc.body) ? { oneOf: doc.body.map(ref) } : ref(doc.body as z.ZodType)
  return {
    description: doc.description,
    content: { 'application/json': { schema } },
    ...(doc.headers === undefined ? {} : { headers: doc.headers }),
  }
}

/**
 * What every /api/v1/* request may answer beside its own (DESIGN 7.15-7.16, src/http/createApp.ts): a key that is
 * sent must be valid, and every call counts against its key's tier or, without one, the caller's IP.
 */
const API_V1_ERRORS: Readonly<Record<string, ResponseDoc>> = {
  401: problemResponseDoc(
    'invalid_key: a key was sent (X-SwapEazi-Key, or a Bearer token) and it is malformed, forged, altered or revoked (`reason` says which); without a key the call is anonymous',
  ),
  429: problemResponseDoc(
    "rate_limited: over the per-minute limit of the caller's key, or of its IP without one; `Retry-After` says when to retry, and `RateLimit` and `RateLimit-Policy` name the policy",
  ),
}

/** What every endpoint that reads a body may answer beside its own. */
const BODY_ERRORS: Readonly<Record<string, ResponseDoc>> = { 413: PAYLOAD_TOO_LARGE, 415: UNSUPPORTED_MEDIA_TYPE }

function operationObject(endpoint: Endpoint, doc: OperationDoc, ref: (schema: z.ZodType) => JsonObject): JsonObject {
  const isApiV1 = endpoint.path.startsWith('/api/v1/')
  // Every body is read under the app's limit and media type (src/http/createApp.ts, readJsonBody.ts).
  const bodyErrors: Readonly<Record<string, ResponseDoc>> = endpoint.body === undefined ? {} : BODY_ERRORS
  const declared: Readonly<Record<string, ResponseDoc>> = { ...(isApiV1 ? API_V1_ERRORS : {}), ...bodyErrors, ...doc.responses }
  const responses: JsonObject = {}
  for (const [status, response] of Object.entries(declared)) responses[status] = responseObject(response, ref)
  // An /api/v1 call without a declared security takes a key or none (the key sets its tier).
  const security = doc.security ?? (isApiV1 ? [{}, { apiKey: [] }] : undefined)
  return {
    summary: doc.summary,
    operationId: doc.operationId,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    ...(security === undefined ? {} : { security }),
    ...(doc.parameters === undefined ? {} : { parameters: doc.parameters }),
    ...(endpoint.body === undefined
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: ref(endpoint.body) } } } }),
    responses,
  }
}

/** OpenAPI 3.1 for the documented endpoints, generated from their declarations and the zod schemas that parse the wire. */
export function buildOpenApi(endpoints: readonly Endpoint[], version: string, serverUrl: string): JsonObject {
  const schemas: JsonObject = {}
  const refs = new Map<z.ZodType, JsonObject>()
  for (const [name, schema, io] of COMPONENTS) refs.set(schema, component(schemas, name, schema, io))
  const ref = (schema: z.ZodType): JsonObject => {
    const found = refs.get(schema)
    if (found === undefined) throw new Error('an endpoint documents a schema that is not in COMPONENTS (src/http/openapi.ts)')
    return found
  }
  const paths: Record<string, JsonObject> = {}
  for (const endpoint of endpoints) {
    if (endpoint.doc === undefined) continue
    paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method.toLowerCase()]: operationObject(endpoint, endpoint.doc, ref) }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'SwapEazi',
      version,
      description: 'Stablecoin router for AI agents. Interface specification 1.1.0. Errors are RFC 9457 problem+json with a stable `code`.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'x-swapeazi-key',
          description: 'A SwapEazi key (se_...); free from POST /api/v1/keys',
        },
        bearer: { type: 'http', scheme: 'bearer', description: 'A pro key (se_...) for the pro tier of corridor intelligence' },
      },
    },
  }
}
