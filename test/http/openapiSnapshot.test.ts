import { describe, expect, it } from 'vitest'
import { ENDPOINTS } from '../../src/http/endpoints.ts'
import { buildOpenApi } from '../../src/http/openapi.ts'

describe('OpenAPI document', () => {
  // The whole contract as a reviewed file: any change to a wire schema shows up as a diff of this snapshot.
  it('matches the committed contract', async () => {
    const doc = buildOpenApi(ENDPOINTS, '0.0.0-test', 'http://127.0.0.1:8402')
    await expect(`${JSON.stringify(doc, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/openapi.json')
  })
})
