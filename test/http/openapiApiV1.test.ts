import { describe, expect, it } from 'vitest'
import { ENDPOINTS } from '../../src/http/endpoints.ts'
import { buildOpenApi } from '../../src/http/openapi.ts'
import { get, readJson, testApp } from './testApp.ts'

type Operation = { operationId: string; responses: Record<string, unknown> }

describe('the /api/v1 answers every key and limit may give', () => {
  const doc = buildOpenApi(ENDPOINTS, '0.0.0-test', 'http://127.0.0.1:8402') as { paths: Record<string, Record<string, Operation>> }
  const operations = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([, methods]) => Object.values(methods))

  it('are documented on every /api/v1 operation: 401 for a bad key sent, 429 over a limit', () => {
    expect(operations.length).toBeGreaterThan(8)
    for (const operation of operations)
      expect(Object.keys(operation.responses), operation.operationId).toEqual(expect.arrayContaining(['401', '429']))
  })

  it('are what the service answers: a bogus key on health is 401 invalid_key', async () => {
    const response = await get(testApp(), '/api/v1/health', { 'x-swapeazi-key': 'bogus' })
    expect(response.status).toBe(401)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_key' })
  })
})

describe('an /api/v1 GET that takes no query parameter', () => {
  it('refuses one (?chain=pol on the corridor list was answered as if it filtered), and answers without', async () => {
    const app = testApp()
    const filtered = await get(app, '/api/v1/corridors?chain=pol')
    expect(filtered.status).toBe(400)
    expect(await readJson(filtered)).toMatchObject({
      code: 'invalid_request',
      errors: [{ field: '(query)', message: expect.stringContaining('"chain", but this endpoint takes no query parameters') }],
    })
    expect((await get(app, '/api/v1/corridors')).status).toBe(200)
    expect((await get(app, '/api/v1/health?verbose=1')).status).toBe(400)
  })
})
