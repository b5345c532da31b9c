import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { lazyMemoryStore, NOW_MS, testApp } from './testApp.ts'

// Issue 15 items 4-5 (review defect 3): every IPv6 client holds at least a /64 and picks the rest of its address at
// will, so per-source limits count an IPv6 client by its /64, and an IPv4 client the same however its address is
// written. Over a real socket behind one proxy we operate (SWAPEAZI_TRUST_PROXY=1), as the review probed it.
const store = lazyMemoryStore()
let server: ListeningApp
let nowMs = NOW_MS

beforeAll(async () => {
  const app = testApp({ store, clock: () => nowMs, trustProxy: 1, rateLimits: { anonymous: 5, free: 60, pro: 600, holdRefusalsMs: 0 } })
  server = await listenOnLoopback(app.fetch)
})
afterAll(async () => {
  await server.close()
  await store.sql.close()
})

const getChains = (client: string): Promise<number> =>
  fetch(`${server.base}/api/v1/chains`, { headers: { 'x-forwarded-for': client } }).then(async (response) => {
    await response.arrayBuffer()
    return response.status
  })
const issueKey = (client: string): Promise<number> =>
  fetch(`${server.base}/api/v1/keys`, { method: 'POST', headers: { 'x-forwarded-for': client } }).then(async (response) => {
    await response.arrayBuffer()
    return response.status
  })

describe('per-source limits and IPv6', () => {
  it('counts every address of one /64 as one anonymous caller, however it is written; another /64 is another caller', async () => {
    nowMs += 60_000
    const oneSlash64 = [
      '2001:db8:1:3::1',
      '2001:db8:1:3::2',
      '2001:DB8:1:3:ffff:ffff:ffff:ffff',
      '2001:0db8:0001:0003::9',
      '2001:db8:1:3:0:0:1.2.3.4',
      '2001:db8:1:3::1%eth0',
    ]
    const statuses: number[] = []
    for (const client of oneSlash64) statuses.push(await getChains(client))
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(await getChains('2001:db8:1:4::1')).toBe(200)
    expect(await getChains('2001:db8:1:2::1')).toBe(200)
  })

  it('issues at most 3 keys per /64 in 24 hours; another /64 still gets one', async () => {
    nowMs += 60_000
    const statuses: number[] = []
    for (let i = 1; i <= 5; i++) statuses.push(await issueKey(`2001:db8:2:4::${i}`))
    expect(statuses).toEqual([201, 201, 201, 429, 429])
    expect(await issueKey('2001:db8:2:5::1')).toBe(201)
  })

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', async () => {
    nowMs += 60_000
    const statuses = [
      await getChains('203.0.113.5'),
      await getChains('::ffff:203.0.113.5'),
      await getChains('::ffff:cb00:7105'),
      await getChains('0:0:0:0:0:ffff:203.0.113.5'),
      await getChains('203.0.113.5'),
      await getChains('::FFFF:203.0.113.5'),
    ]
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
    expect(await getChains('203.0.113.6')).toBe(200)
    nowMs += 60_000
    const keys: number[] = []
    for (const client of ['198.51.100.70', '::ffff:198.51.100.70', '198.51.100.70', '::FFFF:198.51.100.70'])
      keys.push(await issueKey(client))
    expect(keys).toEqual([201, 201, 201, 429])
  })
  it("cannot be passed by forged entries left of a proxy's entry that carries a port or is not an address", async () => {
    // Review of issue 15: `10.8.8.$i, 203.0.113.77:5555` got a key for every $i, since the proxy's entry was dropped.
    for (const [forged, proxyEntry] of [
      ['10.8.8', '203.0.113.77:5555'],
      ['10.7.7', '[2001:db8:9::1]:443'],
      ['10.5.5', 'unknown'],
    ] as const) {
      nowMs += 86_400_000
      const keys: number[] = []
      for (let i = 1; i <= 5; i++) keys.push(await issueKey(`${forged}.${i}, ${proxyEntry}`))
      expect(keys).toEqual([201, 201, 201, 429, 429])
    }
    nowMs += 60_000
    const statuses: number[] = []
    for (let i = 1; i <= 6; i++) statuses.push(await getChains(`10.3.3.${i}, 203.0.113.99:1234`))
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  })
})
