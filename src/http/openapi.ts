import * as z from 'zod'
import { CapabilityManifest, ChainsResponse, CorridorsResponse, Health } from '../schemas/discovery.ts'
import { Problem } from '../schemas/problem.ts'
import { QuoteParams, QuoteResult, RankedQuote, UnsupportedPair } from '../schemas/quote.ts'
import { KeyedSwapRequest, SwapRecordWire, SwapResult } from '../schemas/swap.ts'
import { DisbursementResult, DisburseRequest } from '../schemas/disburse.ts'
import { CorridorIntelligence } from '../schemas/intelligence.ts'
import { IssuedApiKey } from '../schemas/keys.ts'
import { PaymentReceipt, X402Challenge, X402Manifest } from '../schemas/x402.ts'

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
  const swap = component(schemas, 'SwapResult', SwapResult, 'output')
  const challenge = component(schemas, 'X402Challenge', X402Challenge, 'output')
  const x402Manifest = component(schemas, 'X402Manifest', X402Manifest, 'output')
  const issuedKey = component(schemas, 'IssuedApiKey', IssuedApiKey, 'output')
  const intelligence = component(schemas, 'CorridorIntelligence', CorridorIntelligence, 'output')
  component(schemas, 'PaymentReceipt', PaymentReceipt, 'output')
  const disburseRequest = component(schemas, 'DisburseRequest', DisburseRequest, 'input')
  const disbursement = component(schemas, 'DisbursementResult', DisbursementResult, 'output')
  const keyedSwapRequest = component(schemas, 'KeyedSwapRequest', KeyedSwapRequest, 'input')
  const swapRecord = component(schemas, 'SwapRecord', SwapRecordWire, 'output')
  const keyErrors = {
    '401': problem('invalid_key: the key is missing, malformed, forged, altered or revoked (`reason` says which)'),
    '429': problem('rate_limited: over the key\'s per-minute limit; `Retry-After` says when to retry'),
  }

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
  const swapOperation = (summary: string, operationId: string): JsonObject => ({
    post: {
      summary,
      operationId,
      description:
        'Without X-PAYMENT: 402 with the x402 v1 challenge. With it: the payment is verified, reserved, settled and recorded, then 200 with the unsigned transaction. Validation (400), screening (403) and routing (422) come before any 402.',
      parameters: [
        {
          name: 'X-PAYMENT',
          in: 'header',
          required: false,
          description: 'base64 (standard or url-safe) of an x402 v1 exact payment for accepts[0]',
          schema: { type: 'string' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: params } } },
      responses: {
        '200': {
          ...json(swap, 'The built swap'),
          headers: {
            'X-PAYMENT-RESPONSE': { description: 'base64 of PaymentReceipt (x402 SettleResponse plus settlement mode)', schema: { type: 'string' } },
          },
        },
        '402': json(challenge, 'Payment required, or the payment was refused: `error` is a stable reason code (DESIGN 7.8)'),
        '400': problem('invalid_request, or conflicting_payment (X-PAYMENT and Authorization: Payment together)'),
        '403': problem('address_screened: the sender or recipient failed compliance screening'),
        '413': quoteErrors['413'],
        '415': quoteErrors['415'],
        '422': problem('unsupported_token, not_agent_callable, amount_out_of_range or route_not_executable'),
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
      '/api/x402/swap': swapOperation('Paid swap build over x402 (USD 0.02 in USDC on Base)', 'swapX402'),
      '/api/mpp/swap': swapOperation('The same paid swap handler on the MPP path', 'swapMpp'),
      '/.well-known/x402.json': {
        get: {
          summary: 'x402 payment manifest: each paid endpoint with the requirements its 402 carries',
          operationId: 'getX402Manifest',
          responses: { '200': json(x402Manifest, 'Payment manifest') },
        },
      },
      '/api/v1/keys': {
        post: {
          summary: 'Self-serve free API key: at most 3 per IP per rolling 24 hours; the key is shown once',
          operationId: 'issueKey',
          responses: {
            '201': json(issuedKey, 'The new key'),
            '429': problem('rate_limited: 3 keys from this IP in 24 hours; `Retry-After` and `retryAfterSec` say when the next is allowed'),
          },
        },
      },
      '/api/v1/intelligence/corridor/{pair}': {
        get: {
          summary: 'Corridor intelligence: free tier (100 calls per IP per UTC month) without a key; per-bridge figures with a pro key as Bearer',
          operationId: 'getCorridorIntelligence',
          description:
            'Figures are computed over recorded transfers of the last 90 days; with fewer than 20 settled ones the answer falls back to the bridges\' published settlement-time priors and says so (`basis`, `sampleSize`). A free key as Bearer gets the free answer.',
          security: [{}, { bearer: [] }],
          parameters: [
            { name: 'pair', in: 'path', required: true, description: '<A>-<B>, source first; each a chain code (ETH, BAS, POL, ARB, OPT, BNB, GNO, CEL, SOL, TRX) or a currency code (USD, EUR, GBP, ZAR, NGN, KES, SGD), case-insensitive', schema: { type: 'string' } },
            { name: 'amount', in: 'query', required: false, description: 'Decimal amount: in the source currency when A is a currency code, else USD; ranks the optimal route within its size band', schema: { type: 'string' } },
          ],
          responses: {
            '200': json(intelligence, 'The free (`tier: free`) or pro (`tier: pro`) answer'),
            '400': problem('invalid_request: an unknown pair code (`acceptedCodes` lists them) or a bad amount'),
            '401': problem('invalid_key: the Bearer key is malformed, forged or revoked'),
            '429': problem('rate_limited: the IP used its 100 free calls this month; `Retry-After` runs to the start of the next month (UTC)'),
          },
        },
      },
      '/api/v1/swap': {
        post: {
          summary: 'Keyed swap: a signed quote (quoteId) becomes an unsigned transaction; no per-call fee',
          operationId: 'swapWithKey',
          security: [{ apiKey: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: keyedSwapRequest } } },
          responses: {
            '200': json(swap, 'The built swap, recorded under the key (agentCallFee null)'),
            '400': problem('invalid_request (body, or a toAddress the quote does not allow), or invalid_quote (altered or foreign quoteId)'),
            '403': problem('address_screened: the sender or recipient failed compliance screening'),
            '422': problem('quote_expired (expired, route no longer viable, or prices moved: quote again) or route_not_executable'),
            ...keyErrors,
          },
        },
      },
      '/api/v1/swap/{ref}': {
        get: {
          summary: 'A swap\'s record and status (keyed swaps: only to the key that built them)',
          operationId: 'getSwap',
          security: [{ apiKey: [] }],
          parameters: [{ name: 'ref', in: 'path', required: true, schema: { type: 'string', pattern: '^swp_[0-9A-Z]{26}$' } }],
          responses: { '200': json(swapRecord, 'The swap'), '404': problem('not_found: no such swap visible to this key'), ...keyErrors },
        },
      },
      '/api/v1/batch/disburse': {
        post: {
          summary: 'Batch disbursement: one source token pays 1 to 50 recipients (transfers, swaps, bridges) in one router transaction',
          operationId: 'disburse',
          description:
            'Each recipient\'s `amount` is in the source token, fee included, and is priced as a quote of that amount (0.5% all-in); a recipient of the source token on the source chain gets a plain transfer of the amount less the 0.5% fee (the fee rounded up). Errors about one recipient carry its `index`.',
          security: [{ apiKey: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: disburseRequest } } },
          responses: {
            '200': json(disbursement, 'The built disbursement, recorded under the key: approve totals.amount, then sign transactionRequest (executeBatch)'),
            '400': problem('invalid_request: body failing the schema (0 or more than 50 recipients, bad amount or address); `errors` lists each field'),
            '403': problem('address_screened: the sender or a recipient (`index`) failed compliance screening'),
            '413': problem('payload_too_large: body over 64 KiB'),
            '415': problem('unsupported_media_type: Content-Type is not application/json'),
            '422': problem('unsupported_token, not_agent_callable, amount_out_of_range or route_not_executable, with the recipient\'s `index`'),
            ...keyErrors,
          },
        },
      },
      '/openapi.json': { get: { summary: 'This document', operationId: 'getOpenApi', responses: { '200': { description: 'OpenAPI 3.1 document' } } } },
    },
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-swapeazi-key', description: 'A SwapEazi key (se_...); free from POST /api/v1/keys' },
        bearer: { type: 'http', scheme: 'bearer', description: 'A pro key (se_...) for the pro tier of corridor intelligence' },
      },
    },
  }
}
