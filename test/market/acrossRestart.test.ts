// A restart does not leave the Across corridors unanswered for the ~20 s the first refresh of 50 lanes takes: each
// lane's reads are kept in the store (the embedded PGlite here) as it is read, and a market started on the same store
// within Across's 5-minute maximum age prices the lanes at once from them, with their real read time; older reads are
// not used; a store that cannot be read does not stop start-up, and each lane is then served as soon as it is read.
import { Writable } from 'node:stream'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { marketFromConfig } from '../../src/app/marketFromConfig.ts'
import { createServer } from '../../src/app/createServer.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { loadConfig } from '../../src/config.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import { createAcrossFeesClient } from '../../src/market/acrossFees.ts'
import { acrossLanesOf, createAcrossLaneFees } from '../../src/market/acrossLaneFees.ts'
import type { LiveMarket } from '../../src/market/liveMarket.ts'
import { createAcrossFeesStore } from '../../src/store/createAcrossFeesStore.ts'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import type { Sql } from '../../src/store/sql.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'
import { closedPort } from '../support/closedPort.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { type AcrossStandIn, DEFAULT_LANE, startAcrossStandIn } from './acrossStandIn.ts'

const { files: allFiles } = loadCatalogue(MANIFEST_DIR)
// Across is the only bridge, so ETH USDC to OPT USDC crosses an Across lane (the first the lanes list).
const files = { ...allFiles, bridges: { bridges: allFiles.bridges.bridges.filter((bridge) => bridge.protocol === 'across') } }
const lanes = acrossLanesOf(compileCatalogue(files))
const LANE = 'across-usdc:ETH>OPT'

let stand: AcrossStandIn
const opened: Sql[] = []
const markets: LiveMarket[] = []

beforeAll(async () => {
  stand = await startAcrossStandIn()
})
afterEach(async () => {
  for (const market of markets.splice(0)) await market.stop()
  stand.setDelayMs(0)
})
afterAll(async () => {
  await Promise.all(opened.map((sql) => sql.close()))
  await stand?.close()
})

/** A migrated embedded store of its own. */
async function openSql(): Promise<Sql> {
  const sql = await openPgliteSql(undefined, { template: await migratedPgliteTemplate() })
  opened.push(sql)
  return sql
}

/** Every lane read from the stand-in by a market that ran `agoMs` ago, its reads kept in `sql`. */
async function readBefore(sql: Sql, agoMs: number): Promise<number> {
  const client = createAcrossFeesClient({ url: stand.url, retryDelayMs: 5, maxRequestsPerSecond: 1000 })
  const readAtMs = Date.now() - agoMs
  const earlier = createAcrossLaneFees({
    client,
    lanes,
    apiUrl: stand.url,
    clock: () => readAtMs,
    log: pino({ level: 'silent' }),
    keeper: createAcrossFeesStore(sql),
  })
  try {
    await earlier.refresh()
    // The reads are kept as each lane is read, without holding the refresh: wait until every lane is in the store.
    await vi.waitFor(async () => expect(await createAcrossFeesStore(sql).load(stand.url, 0)).toHaveLength(lanes.length))
  } finally {
    await client.close()
  }
  return readAtMs
}

/** The service's market as `serve` starts it (Across at the stand-in, its reads kept in `sql`), and what it logged. */
async function start(keeper: ReturnType<typeof createAcrossFeesStore>, env: Record<string, string> = {}) {
  const lines: Record<string, unknown>[] = []
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)))
        done()
      },
    }),
  )
  // An RPC for Gnosis (no Across lane) turns the live market on; it is never reached.
  const rpc = JSON.stringify({ GNO: `http://127.0.0.1:${await closedPort()}` })
  const config = loadConfig({ SWAPEAZI_RPC_URLS: rpc, SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR, SWAPEAZI_ACROSS_API_URL: stand.url, ...env })
  const market = await marketFromConfig(config, files, log, { firstReadWaitMs: 300, acrossFeesKeeper: keeper })
  if (market === undefined) throw new Error('the live market is off')
  markets.push(market)
  const deps = testDeps({ market, clock: Date.now })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return { market, app: createServer(deps), lines }
}

const ethToOpt = quoteBody({ fromChain: 'ETH', toChain: 'OPT', fromToken: 'USDC', toToken: 'USDC', fromAmount: '10000', slippage: 0.005 })

describe('the Across lanes across a restart', () => {
  it('a market started on the same store within 5 minutes prices them at once from the kept reads, and says when they were read', async () => {
    const sql = await openSql()
    // Across's fill estimate and instant limit are kept with the fees.
    stand.setLane(1, 10, { maxDepositInstant: 400_000n * 10n ** 6n, fillTimeSec: 33 })
    const readAtMs = await readBefore(sql, 200_000).finally(() =>
      stand.setLane(1, 10, { maxDepositInstant: DEFAULT_LANE.maxDeposit, fillTimeSec: 2 }),
    )
    // Across does not answer the new market in time: what it serves comes from the store.
    stand.setDelayMs(3_000)
    const before = stand.requests.length
    const { market, app, lines } = await start(createAcrossFeesStore(sql))
    const lane = market
      .catalogue()
      .lanes.get('ETH>OPT')
      ?.find((candidate) => candidate.bridge.id === 'across-usdc')
    expect(lane).toMatchObject({
      feeQuotedBy: 'across',
      destinationGasUnits: 0n,
      maxAmountIn: 400_000n * 10n ** 6n,
      duration: { p50Sec: 33, p95Sec: 99 },
    })
    expect(market.catalogue().gaps?.lanes.has(LANE)).toBe(false)
    const response = await postJson(app, '/api/x402/quote', ethToOpt)
    expect(response.status).toBe(200)
    expect(lines.find((line) => line['event'] === 'market_across_restored')).toMatchObject({
      lanes: lanes.length,
      oldest_read_at: new Date(readAtMs).toISOString(),
    })
    // Nothing it served was read by the new market.
    expect(stand.requests.length - before).toBeLessThanOrEqual(8)
  })

  it('reads kept more than 5 minutes ago are not used: the lane is being read, and the 503 says so and when', async () => {
    const sql = await openSql()
    await readBefore(sql, 300_500)
    stand.setDelayMs(3_000)
    const { market, app, lines } = await start(createAcrossFeesStore(sql))
    expect(lines.find((line) => line['event'] === 'market_across_restored')).toMatchObject({ lanes: 0 })
    expect(market.catalogue().gaps?.lanes.get(LANE)).toMatch(/^its Across fees are being read, the first read since start: expected by /)
    const askedMs = Date.now()
    const response = await postJson(app, '/api/x402/quote', ethToOpt)
    const answeredMs = Date.now()
    expect(response.status).toBe(503)
    const body = await readJson<{ code: string; lanes: string[]; detail: string; retryAfterSec: number }>(response)
    expect(body).toMatchObject({ code: 'market_unavailable', lanes: [LANE] })
    // The lane is expected within seconds (read first, at the warming rate), and Retry-After is the wait until then,
    // rounded up: not a fixed 15 s.
    const expectedBy = Date.parse(/expected by (\S+Z)/.exec(body.detail)?.[1] ?? '')
    const retryAfterSec = Number(response.headers.get('retry-after'))
    expect(retryAfterSec).toBe(body.retryAfterSec)
    expect(body.detail).toContain(`ask again in ${retryAfterSec} s`)
    expect(retryAfterSec).toBeGreaterThanOrEqual(1)
    expect(retryAfterSec).toBeLessThan(15)
    // Rounded up from the moment the service answered, between the two clocks read here.
    expect(answeredMs + retryAfterSec * 1000).toBeGreaterThanOrEqual(expectedBy)
    expect(askedMs + retryAfterSec * 1000 - expectedBy).toBeLessThan(1000)
  })

  it('a store that cannot be read does not stop start-up: the lanes are read from Across, each served as soon as it is read', async () => {
    const sql = await openPgliteSql(undefined, { template: await migratedPgliteTemplate() })
    await sql.close()
    const before = stand.requests.length
    const { app, lines } = await start(createAcrossFeesStore(sql))
    expect(lines.find((line) => line['event'] === 'market_across_restore_failed')).toBeDefined()
    await vi.waitFor(async () => expect((await postJson(app, '/api/x402/quote', ethToOpt)).status).toBe(200), {
      timeout: 5_000,
      interval: 50,
    })
    // Served while the first refresh (two requests for each of the 50 lanes) is still under way.
    expect(stand.requests.length - before).toBeLessThan(2 * lanes.length)
  })

  it('reads at the rates configured: a lane says it is expected later at 1 request a second', async () => {
    stand.setDelayMs(3_000)
    const keeper = createAcrossFeesStore(await openSql())
    const startedMs = Date.now()
    const { market } = await start(keeper, {
      SWAPEAZI_ACROSS_REQUESTS_PER_SEC: '1',
      SWAPEAZI_ACROSS_WARMING_REQUESTS_PER_SEC: '1',
    })
    const gap = market.catalogue().gaps?.lanes.get(LANE) ?? ''
    // The first lane's two requests a second apart, and a second for Across to answer (at 10 a second: 1.2 s).
    const expectedBy = Date.parse(/expected by (\S+)$/.exec(gap)?.[1] ?? '')
    expect(expectedBy - startedMs).toBeGreaterThanOrEqual(3_000)
  })
})
