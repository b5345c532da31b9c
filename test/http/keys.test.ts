import { afterAll, describe, expect, it } from 'vitest'
import { verifyApiKey } from '../../src/auth/apiKey.ts'
import { KEY_SECRET, lazyMemoryStore, PUBLIC_URL, readJson, testApp } from './testApp.ts'

const store = lazyMemoryStore()
afterAll(() => store.sql.close())

let nowMs = Date.parse('2026-11-20T12:00:00Z')
const clock = (): number => nowMs
const issue = (app: ReturnType<typeof testApp>, ip: string): Promise<Response> =>
  Promise.resolve(app.request('/api/v1/keys', { method: 'POST', headers: { 'x-forwarded-for': ip } }))

describe('POST /api/v1/keys', () => {
  it('issues a free key that verifies, shown once and never stored', async () => {
    const app = testApp({ store, clock })
    const response = await issue(app, '203.0.113.1')
    expect(response.status).toBe(201)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const body = await readJson<{ key: string; id: string; tier: string; issuedAt: string; notice: string }>(response)
    expect(body).toMatchObject({ tier: 'free', issuedAt: '2026-11-20T12:00:00.000Z' })
    expect(body.notice).toMatch(/shown once/)
    expect(verifyApiKey(KEY_SECRET, body.key)).toEqual({ ok: true, claims: { v: 1, id: body.id, tier: 'free', iat: nowMs / 1000 } })
    const dump =
      JSON.stringify(await store.sql.query('select * from api_keys')) + JSON.stringify(await store.sql.query('select * from settings'))
    expect(dump).toContain(body.id)
    expect(dump).not.toContain(body.key.slice(3, 40))
    expect(dump).not.toContain('203.0.113.1')
  })

  it('allows 3 per IP per rolling 24 hours, across replicas on one store, then 429 with Retry-After', async () => {
    const replicaA = testApp({ store, clock })
    const replicaB = testApp({ store, clock })
    const ip = '198.51.100.7'
    expect((await issue(replicaA, ip)).status).toBe(201)
    nowMs += 60_000
    expect((await issue(replicaB, ip)).status).toBe(201)
    expect((await issue(replicaA, ip)).status).toBe(201)
    const refused = await issue(replicaB, ip)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe(String(24 * 3600 - 60))
    // Issue 15 item 6: the 429 names its own policy, not the per-minute one of every /api/v1/* answer.
    expect(refused.headers.get('ratelimit-policy')).toBe('"key-issuance";q=3;w=86400')
    expect(refused.headers.get('ratelimit')).toBe(`"key-issuance";r=0;t=${24 * 3600 - 60}`)
    expect(await readJson(refused)).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfterSec: 24 * 3600 - 60,
      limit: 3,
      policy: 'key-issuance',
      windowSec: 86_400,
    })
    expect((await issue(replicaA, '198.51.100.8')).status).toBe(201)
    // The first key leaves the window 24 h after it was issued: one more is allowed, then none.
    nowMs += 24 * 3600 * 1000 - 60_000 + 1
    expect((await issue(replicaA, ip)).status).toBe(201)
    expect((await issue(replicaA, ip)).status).toBe(429)
  })

  it('keeps the limit under concurrent requests: 10 at once from one IP give exactly 3 keys', async () => {
    const app = testApp({ store, clock })
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => issue(app, '192.0.2.99')))).map((r) => r.status)
    expect(statuses.filter((s) => s === 201)).toHaveLength(3)
    expect(statuses.filter((s) => s === 429)).toHaveLength(7)
  })

  describe('Origin', () => {
    const ip = '203.0.113.77'
    const issueFrom = (origin: string | undefined, url = '/api/v1/keys'): Promise<Response> =>
      Promise.resolve(
        // swapeazi.example is a name the service is reached by (SWAPEAZI_MCP_ALLOWED_HOSTS), as behind a TLS proxy.
        testApp({ store, clock, mcp: { dailyBudgetAtomic: 0n, allowedHosts: ['localhost', '127.0.0.1', 'swapeazi.example'] } }).request(
          url,
          {
            method: 'POST',
            headers: { 'x-forwarded-for': ip, ...(origin === undefined ? {} : { origin }) },
          },
        ),
      )
    const keysOfIp = async (): Promise<number> => (await store.sql.query('select id from api_keys')).length

    it.each(['https://elsewhere.example', 'http://127.0.0.1:9999', 'null', 'chrome-extension://abcdef', 'not a url'])(
      'refuses a page of another site (Origin: %s) with 403 origin_not_allowed, and issues nothing',
      async (origin) => {
        const before = await keysOfIp()
        const response = await issueFrom(origin)
        expect(response.status).toBe(403)
        expect(response.headers.get('content-type')).toBe('application/problem+json')
        const problem = await readJson<{ code: string; detail: string; origin: string; portal: string }>(response)
        expect(problem).toMatchObject({ code: 'origin_not_allowed', status: 403, origin, portal: `${PUBLIC_URL}/` })
        expect(problem.detail).toBe(
          `Keys are issued to this service's own portal and to programs, not to pages of other sites (this request came from ${origin}). Get a key at ${PUBLIC_URL}/, or POST /api/v1/keys from your own program or curl, which send no Origin.`,
        )
        expect(await keysOfIp()).toBe(before)
      },
    )

    it.each([
      ['no Origin (curl, programs)', undefined, '/api/v1/keys'],
      ['the public URL', PUBLIC_URL, '/api/v1/keys'],
      [
        'a name of the service the request was sent to, over TLS that ended at a proxy',
        'https://swapeazi.example',
        'http://swapeazi.example/api/v1/keys',
      ],
      ['the host the request was sent to, on its port', 'http://localhost:8080', 'http://localhost:8080/api/v1/keys'],
      ['an IP address the request was sent to (no name to rebind)', 'http://192.0.2.10:8402', 'http://192.0.2.10:8402/api/v1/keys'],
      ['a bracketed IPv6 address the request was sent to', 'http://[2001:db8::10]:8402', 'http://[2001:db8::10]:8402/api/v1/keys'],
    ])('issues to %s', async (_label, origin, url) => {
      nowMs += 24 * 3600 * 1000
      expect((await issueFrom(origin, url)).status).toBe(201)
    })
  })

  // Review of issue 15: a page on evil.example that rebinds its name to our address sends Host and Origin alike, so
  // comparing the two let it mint keys from its visitors' addresses. A name must be one the service is reached by.
  it('refuses a name rebound to the service (Origin equal to Host, but not a name of ours); a configured name works', async () => {
    for (const host of ['evil.example', 'evil.example:8402']) {
      const response = await testApp({ store, clock }).request(`http://${host}/api/v1/keys`, {
        method: 'POST',
        headers: { 'x-forwarded-for': '203.0.113.78', origin: `http://${host}` },
      })
      expect(response.status).toBe(403)
      expect(await readJson(response)).toMatchObject({ code: 'origin_not_allowed' })
    }
    nowMs += 24 * 3600 * 1000
    const configured = testApp({ store, clock, mcp: { dailyBudgetAtomic: 0n, allowedHosts: ['swapeazi.internal:8402'] } })
    const response = await configured.request('http://swapeazi.internal:8402/api/v1/keys', {
      method: 'POST',
      headers: { 'x-forwarded-for': '203.0.113.79', origin: 'http://swapeazi.internal:8402' },
    })
    expect(response.status).toBe(201)
  })

  it('takes no body: {"tier": "pro"} or any text is 400 on (body), not a free key as if granted; none, or {}, is a key', async () => {
    const app = testApp({ store, clock })
    const send = (ip: string, body: string, type = 'application/json') =>
      Promise.resolve(app.request('/api/v1/keys', { method: 'POST', headers: { 'x-forwarded-for': ip, 'content-type': type }, body }))
    for (const [body, type] of [
      ['{"tier":"pro"}', 'application/json'],
      ['hello', 'text/plain'],
      ['[]', 'application/json'],
    ] as const) {
      const refused = await send('203.0.113.61', body, type)
      expect(refused.status, body).toBe(400)
      expect(await readJson(refused)).toMatchObject({
        code: 'invalid_request',
        errors: [{ field: '(body)', message: expect.stringContaining('pro keys are issued by the operator') }],
      })
    }
    // Refusals issue nothing: the IP still has its three keys.
    for (const body of ['', '{}', ' { } ']) expect((await send('203.0.113.61', body)).status, JSON.stringify(body)).toBe(201)
  })

  it('answers other methods with 405', async () => {
    const response = await testApp({ store, clock }).request('/api/v1/keys')
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })
})
