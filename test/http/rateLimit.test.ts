import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import type { RateLimits } from '../../src/auth/rateLimits.ts'
import type { Store } from '../../src/store/createStore.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { KEY_SECRET, NOW_MS, quoteBody, readJson, testApp } from './testApp.ts'

const LIMITS: RateLimits = { anonymous: 3, free: 5, pro: 8, holdRefusalsMs: 0 }

const key = (id: string, tier: 'free' | 'pro'): string => signApiKey(KEY_SECRET, { v: 1, id, tier, iat: NOW_MS / 1000 })
const FREE_KEY = key('key_aaaaaaaaaaaaaaaaaaaaaaaa', 'free')
const PRO_KEY = key('key_bbbbbbbbbbbbbbbbbbbbbbbb', 'pro')

type App = ReturnType<typeof testApp>
const getHealth = (app: App, headers: Record<string, string>): Promise<Response> =>
  Promise.resolve(app.request('/api/v1/health', { headers }))

/** Statuses and the RateLimit field of `n` sequential calls. */
async function callTimes(app: App, n: number, headers: Record<string, string>): Promise<{ status: number; rateLimit: string | null }[]> {
  const seen = []
  for (let k = 0; k < n; k++) {
    const response = await getHealth(app, headers)
    seen.push({ status: response.status, rateLimit: response.headers.get('ratelimit') })
  }
  return seen
}

const opened: OpenedStore[] = []
afterAll(async () => {
  for (const o of opened) await o.cleanup()
})

describe.each(storeDrivers())('rate limits on /api/v1/* ($name)', (driver) => {
  let store: Store
  let nowMs = NOW_MS
  const clock = (): number => nowMs
  const app = (): App => testApp({ store, clock, rateLimits: LIMITS })

  beforeAll(async () => {
    const o = await driver.open()
    opened.push(o)
    store = o.store
  })

  it('counts anonymous callers per IP and answers the IETF RateLimit fields, then 429 with Retry-After', async () => {
    nowMs = NOW_MS + 15_000 // 45 s left in the minute's window
    const seen = await callTimes(app(), 3, { 'x-forwarded-for': '203.0.113.10' })
    expect(seen).toEqual([
      { status: 200, rateLimit: '"anonymous";r=2;t=45' },
      { status: 200, rateLimit: '"anonymous";r=1;t=45' },
      { status: 200, rateLimit: '"anonymous";r=0;t=45' },
    ])
    const refused = await getHealth(app(), { 'x-forwarded-for': '203.0.113.10' })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('45')
    expect(refused.headers.get('ratelimit-policy')).toBe('"anonymous";q=3;w=60')
    expect(refused.headers.get('ratelimit')).toBe('"anonymous";r=0;t=45')
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'rate_limited', status: 429, limit: 3, policy: 'anonymous', retryAfterSec: 45 })
    expect(String(problem['detail'])).toMatch(
      /a free key raises that \(POST \/api\/v1\/keys, itself counted here: ask for it once this limit resets\)/,
    )
    // Another IP has its own count.
    expect((await getHealth(app(), { 'x-forwarded-for': '203.0.113.11' })).status).toBe(200)
  })

  it('starts again in the next window', async () => {
    nowMs = NOW_MS + 60_000
    const seen = await callTimes(app(), 1, { 'x-forwarded-for': '203.0.113.10' })
    expect(seen).toEqual([{ status: 200, rateLimit: '"anonymous";r=2;t=60' }])
  })

  it('gives a free key 5 a minute and a pro key 8, counted per key, not per IP', async () => {
    nowMs = NOW_MS + 120_000
    const ip = { 'x-forwarded-for': '203.0.113.20' }
    const free = await callTimes(app(), 6, { ...ip, 'x-swapeazi-key': FREE_KEY })
    expect(free.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 429])
    expect(free[0]?.rateLimit).toBe('"free";r=4;t=60')
    const pro = await callTimes(app(), 9, { ...ip, authorization: `Bearer ${PRO_KEY}` })
    expect(pro.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429])
    expect(pro[7]?.rateLimit).toBe('"pro";r=0;t=60')
    // The same IP without a key still has its anonymous allowance.
    expect((await getHealth(app(), ip)).status).toBe(200)
  })

  it('refuses a key that does not verify with 401 and no store write, counted toward the IP: past its limit, 429', async () => {
    nowMs = NOW_MS + 180_000
    const forged = `${FREE_KEY.slice(0, -2)}AA`
    const one = app()
    const headers = { 'x-forwarded-for': '203.0.113.30', 'x-swapeazi-key': forged }
    const response = await getHealth(one, headers)
    expect(response.status).toBe(401)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_key', reason: 'bad_signature' })
    const malformed = await getHealth(one, { ...headers, 'x-swapeazi-key': 'se_nope' })
    expect(await readJson(malformed)).toMatchObject({ code: 'invalid_key', reason: 'malformed' })
    expect((await getHealth(one, headers)).status).toBe(401)
    // Three refusals used the IP's anonymous allowance of 3: the fourth request, keyed or not, is refused 429.
    const limited = await getHealth(one, headers)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('ratelimit')).toBe('"anonymous";r=0;t=60')
    expect(await readJson(limited)).toMatchObject({ code: 'rate_limited', policy: 'anonymous' })
    expect((await getHealth(one, { 'x-forwarded-for': '203.0.113.30' })).status).toBe(429)
    // A valid key from the same IP is counted against the key, not the IP.
    expect((await getHealth(one, { 'x-forwarded-for': '203.0.113.30', 'x-swapeazi-key': FREE_KEY })).status).toBe(200)
    expect(await store.sql.query(`select * from rate_counters where subject like 'ip:%' and window_start = $1`, [nowMs / 1000])).toEqual([])
  })

  it('refuses two different keys in the two headers, and an empty Bearer, as invalid keys counted toward the IP', async () => {
    nowMs = NOW_MS + 200_000
    const one = app()
    const ip = { 'x-forwarded-for': '203.0.113.41' }
    // The same key in both is that key.
    expect((await getHealth(one, { ...ip, 'x-swapeazi-key': FREE_KEY, authorization: `Bearer ${FREE_KEY}` })).status).toBe(200)
    // A valid x-swapeazi-key does not hide a forged Bearer key (review of issue 15), nor a valid one another key.
    const forged = await getHealth(one, { ...ip, 'x-swapeazi-key': FREE_KEY, authorization: `Bearer ${FREE_KEY.slice(0, -2)}AA` })
    expect(forged.status).toBe(401)
    expect(await readJson(forged)).toMatchObject({ code: 'invalid_key', reason: 'conflicting' })
    const two = await getHealth(one, { ...ip, 'x-swapeazi-key': FREE_KEY, authorization: `Bearer ${PRO_KEY}` })
    expect(await readJson(two)).toMatchObject({ code: 'invalid_key', reason: 'conflicting' })
    // Bearer with no key is a key sent empty, not no key; another scheme is not a key of ours.
    const empty = await getHealth(one, { ...ip, authorization: 'Bearer' })
    expect(await readJson(empty)).toMatchObject({ code: 'invalid_key', reason: 'missing' })
    expect((await getHealth(one, { 'x-forwarded-for': '203.0.113.42', authorization: 'Basic dXNlcjpwYXNz' })).status).toBe(200)
    // Three refusals used the IP's anonymous allowance of 3.
    expect((await getHealth(one, ip)).status).toBe(429)
  })

  it('refuses a revoked key without counting it in the store again, and counts it toward the IP', async () => {
    nowMs = NOW_MS + 190_000
    const revokedId = 'key_dddddddddddddddddddddddd'
    await store.keys.revoke(revokedId, new Date(nowMs))
    const one = app()
    const headers = { 'x-forwarded-for': '203.0.113.31', 'x-swapeazi-key': key(revokedId, 'pro') }
    const statuses: number[] = []
    for (let k = 0; k < 5; k++) statuses.push((await getHealth(one, headers)).status)
    expect(statuses).toEqual([401, 401, 401, 429, 429])
    // PostgreSQL: only the first request reached the store (its statement found the key revoked); PGlite: none.
    const rows = await store.sql.query<{ calls: number }>(`select calls from rate_counters where subject = $1`, [`key:${revokedId}`])
    expect(rows.map((row) => Number(row.calls))).toEqual(store.sql.isExclusive ? [] : [1])
  })

  it('answers a source already over its limit from memory: the store count stops at the first refusal', async () => {
    nowMs = NOW_MS + 200_000
    const one = app()
    const headers = { 'x-swapeazi-key': key('key_eeeeeeeeeeeeeeeeeeeeeeee', 'free') }
    const statuses: number[] = []
    for (let k = 0; k < 9; k++) statuses.push((await getHealth(one, headers)).status)
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429])
    const rows = await store.sql.query<{ calls: number }>(
      `select calls from rate_counters where subject = 'key:key_eeeeeeeeeeeeeeeeeeeeeeee'`,
    )
    // PostgreSQL: 6 requests reached the store (the 6th found the key over); the last three never did. PGlite: none.
    expect(rows.map((row) => Number(row.calls))).toEqual(store.sql.isExclusive ? [] : [6])
    const last = await getHealth(one, headers)
    expect(last.headers.get('ratelimit')).toBe('"free";r=0;t=40')
  })

  it('holds the refusals of a source past twice its limit before answering them', async () => {
    nowMs = NOW_MS + 210_000
    const one = testApp({ store, clock, rateLimits: { ...LIMITS, holdRefusalsMs: 150 } })
    const headers = { 'x-forwarded-for': '203.0.113.32' }
    const elapsed: number[] = []
    for (let k = 0; k < 8; k++) {
      const started = performance.now()
      await getHealth(one, headers)
      elapsed.push(performance.now() - started)
    }
    // Requests 1-3 allowed, 4-6 refused at once; from the 7th (past 2 × 3) each refusal waits 150 ms.
    expect(elapsed.slice(0, 6).every((ms) => ms < 150)).toBe(true)
    expect(elapsed.slice(6).every((ms) => ms >= 140)).toBe(true)
  })

  it('two replicas on one store share the count', async () => {
    nowMs = NOW_MS + 240_000
    const [a, b] = [app(), app()]
    const headers = { 'x-forwarded-for': '203.0.113.40' }
    const statuses: number[] = []
    for (const replica of [a, b, a, b]) statuses.push((await getHealth(replica, headers)).status)
    expect(statuses).toEqual([200, 200, 200, 429])
  })

  it('admits exactly the limit under concurrent requests across replicas', async () => {
    nowMs = NOW_MS + 300_000
    const replicas = [app(), app()]
    const headers = { 'x-swapeazi-key': PRO_KEY }
    const responses = await Promise.all(Array.from({ length: 20 }, (_, k) => getHealth(replicas[k % 2] as App, headers)))
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(8)
    expect(statuses.filter((s) => s === 429)).toHaveLength(12)
  })

  it('limits POST routes too, and leaves the pay-per-call and discovery routes alone', async () => {
    nowMs = NOW_MS + 360_000
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.50' }
    const statuses: number[] = []
    for (let k = 0; k < 4; k++)
      statuses.push((await app().request('/api/v1/quote', { method: 'POST', headers, body: JSON.stringify(quoteBody()) })).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    const free = await app().request('/api/x402/quote', { method: 'POST', headers, body: JSON.stringify(quoteBody()) })
    expect(free.status).toBe(200)
    expect(free.headers.get('ratelimit')).toBeNull()
    expect((await app().request('/api/mpp/routes', { headers })).status).toBe(200)
  })

  it('prunes counters of windows more than an hour old (in the store when it is shared)', async () => {
    nowMs = NOW_MS + 2 * 3600_000
    await getHealth(app(), { 'x-forwarded-for': '203.0.113.60' })
    await new Promise((resolve) => setTimeout(resolve, 100))
    const rows = await store.sql.query<{ window_start: string }>('select window_start::text as window_start from rate_counters')
    // The embedded store's one owner counts in memory and writes no counter row at all.
    if (store.sql.isExclusive) expect(rows).toEqual([])
    else expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) expect(Number(row.window_start)).toBeGreaterThanOrEqual(nowMs / 1000 - 3600)
  })
})
