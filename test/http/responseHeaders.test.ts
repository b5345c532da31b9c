import { afterAll, describe, expect, it } from 'vitest'
import { MAX_BODY_BYTES } from '../../src/http/createApp.ts'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { get, postJson, postRaw, quoteBody, testApp } from './testApp.ts'

// Issue 15 item 6: what caches and browsers may do with each answer (docs/endpoints.md, "Caching").
const app = testApp()
const limited = testApp({ rateLimits: { anonymous: 0, free: 0, pro: 0, holdRefusalsMs: 0 } })

const PUBLISHED = 'public, max-age=300'

describe('Cache-Control and X-Content-Type-Options', () => {
  it.each([
    ['POST /api/x402/quote', () => postJson(app, '/api/x402/quote', quoteBody()), 200],
    ['POST /api/mpp/quote', () => postJson(app, '/api/mpp/quote', quoteBody()), 200],
    ['POST /api/v1/quote', () => postJson(app, '/api/v1/quote', quoteBody()), 200],
    ['POST /api/x402/swap without payment', () => postJson(app, '/api/x402/swap', quoteBody()), 402],
    ['GET /api/v1/health', () => get(app, '/api/v1/health'), 200],
    ['GET /api/v1/chains', () => get(app, '/api/v1/chains'), 200],
    ['GET /api/v1/corridors', () => get(app, '/api/v1/corridors'), 200],
    ['400 invalid_request', () => postRaw(app, '/api/x402/quote', '{'), 400],
    ['401 invalid_key', () => get(app, '/api/v1/swap/swp_x'), 401],
    ['404 not_found', () => get(app, '/nowhere'), 404],
    ['405 method_not_allowed', () => get(app, '/api/x402/quote'), 405],
    ['413 payload_too_large', () => postRaw(app, '/api/x402/quote', 'x'.repeat(MAX_BODY_BYTES + 1)), 413],
    ['415 unsupported_media_type', () => postRaw(app, '/api/x402/quote', '{}', 'text/plain'), 415],
    ['429 rate_limited', () => get(limited, '/api/v1/health'), 429],
  ] as const)('%s: no-store and nosniff', async (_label, send, status) => {
    const response = await send()
    expect(response.status).toBe(status)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it.each(['/openapi.json', '/.well-known/x402.json', '/api/mpp/routes', '/portal.js', '/portal.css'])(
    'GET %s, the same for every caller until a deploy: a short public cache, and nosniff',
    async (path) => {
      const response = await get(app, path)
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toBe(PUBLISHED)
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    },
  )

  it('GET / revalidates the portal page each time', async () => {
    const response = await get(app, '/')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
  })
})

describe('over a socket, where the defaults go onto Node’s response and the endpoint’s own headers win', () => {
  let server: ListeningApp | undefined
  afterAll(() => server?.close())

  it('answers one header of each, never two', async () => {
    server = await listenOnLoopback(app.fetch)
    const published = await fetch(`${server.base}/openapi.json`)
    expect(published.headers.get('cache-control')).toBe(PUBLISHED)
    expect(published.headers.get('x-content-type-options')).toBe('nosniff')
    const problem = await fetch(`${server.base}/nowhere`)
    expect(problem.headers.get('content-type')).toBe('application/problem+json')
    expect(problem.headers.get('cache-control')).toBe('no-store')
    expect(problem.headers.get('x-content-type-options')).toBe('nosniff')
    const quote = await fetch(`${server.base}/api/x402/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(quoteBody()),
    })
    expect(quote.status).toBe(200)
    expect(quote.headers.get('cache-control')).toBe('no-store')
    expect(quote.headers.get('x-content-type-options')).toBe('nosniff')
  })
})
