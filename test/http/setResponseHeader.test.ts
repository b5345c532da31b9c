// Headers set before the handler go straight onto Node's response under @hono/node-server (no web Headers object per
// request); appended ones join them as further field lines, and an error answer keeps both. Through a real socket,
// and through app.request() (Hono's own accessor).
import { type AddressInfo, createServer } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appendResponseHeader, setResponseHeader } from '../../src/http/setResponseHeader.ts'

function testApp(): Hono {
  const app = new Hono()
  app.use(async (c, next) => {
    setResponseHeader(c, 'RateLimit', '"anonymous";r=29;t=60')
    await next()
  })
  app.get('/ok', (c) => {
    appendResponseHeader(c, 'RateLimit', '"intel-free";r=99;t=100')
    return c.json({ ok: true })
  })
  app.get('/refused', (c) => {
    appendResponseHeader(c, 'RateLimit', '"intel-free";r=0;t=100')
    throw new Error('over the quota')
  })
  app.onError((_error, c) => c.json({ code: 'rate_limited' }, 429))
  return app
}

let origin = ''
let close: () => Promise<void> = async () => {}

beforeAll(async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo
      probe.close(() => resolve(free))
    })
  })
  const server = serve({ fetch: testApp().fetch, hostname: '127.0.0.1', port })
  await new Promise((resolve) => server.once('listening', resolve))
  origin = `http://127.0.0.1:${port}`
  close = () => new Promise((resolve) => server.close(() => resolve()))
})
afterAll(() => close())

describe('setResponseHeader and appendResponseHeader', () => {
  it.each([
    ['/ok', 200, '"anonymous";r=29;t=60, "intel-free";r=99;t=100'],
    ['/refused', 429, '"anonymous";r=29;t=60, "intel-free";r=0;t=100'],
  ])('over a socket, %s answers %i with both fields', async (path, status, expected) => {
    const response = await fetch(`${origin}${path}`)
    expect(response.status).toBe(status)
    expect(response.headers.get('ratelimit')).toBe(expected)
  })

  it('through app.request(), the same', async () => {
    const response = await testApp().request('/ok')
    expect(response.headers.get('ratelimit')).toBe('"anonymous";r=29;t=60, "intel-free";r=99;t=100')
  })
})
