import { describe, expect, it } from 'vitest'
import { ENDPOINTS } from '../../src/http/endpoints.ts'
import { buildOpenApi } from '../../src/http/openapi.ts'
import { testApp } from './testApp.ts'

const app = testApp()
/** A request path for a declared path: each `{name}` filled with a value its pattern accepts. */
const concrete = (path: string): string => path.replace('{ref}', 'swp_01JABCDEFGHJKMNPQRSTVWXYZ0').replace('{pair}', 'BAS-POL')

describe('the endpoint table', () => {
  it('declares each method and path once', () => {
    const keys = ENDPOINTS.map((endpoint) => `${endpoint.method} ${endpoint.path}`)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('documents exactly the declared endpoints that carry a doc, under their own method', () => {
    const doc = buildOpenApi(ENDPOINTS, 'v', 'http://x') as { paths: Record<string, Record<string, unknown>> }
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(documented.sort()).toEqual(
      ENDPOINTS.filter((e) => e.doc !== undefined)
        .map((e) => `${e.method} ${e.path}`)
        .sort(),
    )
    expect(documented).not.toContain('GET /')
  })

  // The 405 table derives from the declarations: every other method on every declared path, parameterised ones too.
  // A GET path serves HEAD as well, so its Allow names both.
  it.each(
    ENDPOINTS.map(
      (endpoint) =>
        [endpoint.path, endpoint.method === 'GET' ? 'DELETE' : 'PUT', endpoint.method === 'GET' ? 'GET, HEAD' : endpoint.method] as const,
    ),
  )('%s answers %s with 405 and Allow: %s', async (path, method, allow) => {
    const response = await app.request(concrete(path), { method })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe(allow)
    expect(((await response.json()) as { code: string }).code).toBe('method_not_allowed')
    if (allow.includes('HEAD')) expect((await app.request(concrete(path), { method: 'HEAD' })).status).not.toBe(405)
  })

  // (TRACE cannot be sent in process: the Fetch standard forbids it in a Request.)
  it('answers a bare OPTIONS (not a CORS preflight) on a parameterised path with 405, as on fixed paths', async () => {
    expect((await app.request(concrete('/api/v1/swap/{ref}'), { method: 'OPTIONS' })).status).toBe(405)
    expect((await app.request('/api/v1/chains', { method: 'OPTIONS' })).status).toBe(405)
  })

  it('throws when an endpoint documents a schema that is not a named component', async () => {
    const { defineEndpoint } = await import('../../src/http/endpoint.ts')
    const { z } = await import('zod')
    const stray = defineEndpoint({
      method: 'GET',
      path: '/stray',
      doc: { summary: 's', operationId: 'stray', responses: { 200: { description: 'd', body: z.object({ a: z.string() }) } } },
      handler: () => (c) => c.json({}),
    })
    expect(() => buildOpenApi([stray], 'v', 'http://x')).toThrow(/not in COMPONENTS/)
  })
})
