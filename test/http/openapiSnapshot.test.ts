import { describe, expect, it } from 'vitest'
import { ENDPOINTS } from '../../src/http/endpoints.ts'
import { buildOpenApi } from '../../src/http/openapi.ts'

describe('OpenAPI document', () => {
  // The whole contract as a reviewed file: any change to a wire schema shows up as a diff of this snapshot.
  it('matches the committed contract', async () => {
    const doc = buildOpenApi(ENDPOINTS, '0.0.0-test', 'http://127.0.0.1:8402')
    await expect(`${JSON.stringify(doc, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/openapi.json')
  })

  // Truth review of issue 15: the keyed swap read a body under the app's limit and media type but listed neither, and
  // routes priced on the live market did not list its 503.
  it('lists 413 and 415 wherever a body is read, and 503 market_unavailable wherever a route is priced', () => {
    const doc = buildOpenApi(ENDPOINTS, '0.0.0-test', 'http://127.0.0.1:8402') as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, { description: string }> }>>
    }
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ name: `${method} ${path}`, ...operation })),
    )
    const withBody = operations.filter((operation) => operation.requestBody !== undefined)
    expect(withBody.length).toBeGreaterThan(5)
    expect(withBody.filter((operation) => !('413' in operation.responses && '415' in operation.responses)).map((o) => o.name)).toEqual([])
    const priced = [
      '/api/x402/quote',
      '/api/mpp/quote',
      '/api/v1/quote',
      '/api/x402/swap',
      '/api/mpp/swap',
      '/api/v1/swap',
      '/api/v1/batch/disburse',
    ]
    for (const path of priced) expect(doc.paths[path]?.['post']?.responses['503']?.description, path).toContain('market_unavailable')
  })
})
