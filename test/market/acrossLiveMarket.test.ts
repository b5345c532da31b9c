// The live market with the Across lanes priced from Across's suggested fees (a local stand-in of the API): a quote's
// Across fee is what the stand-in asks, its source is Across and not the snapshot; a lane whose read fails is not
// offered (503 naming it); an amount above the lane's maxDeposit, or above what its relayers fill at once, is refused as
// above the bridge's maximum; the bridge leg's duration is Across's fill estimate.
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { loadFeedCatalogue, marketFromConfig } from '../../src/app/marketFromConfig.ts'
import { createServer } from '../../src/app/createServer.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { loadConfig } from '../../src/config.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import { createAcrossFeesClient } from '../../src/market/acrossFees.ts'
import { acrossLanesOf, createAcrossLaneFees } from '../../src/market/acrossLaneFees.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'
import { closedPort } from '../support/closedPort.ts'
import { type AcrossStandIn, DEFAULT_LANE, startAcrossStandIn } from './acrossStandIn.ts'

const { files: allFiles } = loadCatalogue(MANIFEST_DIR)
// Across is the only bridge, so every route between two chains crosses an Across lane.
const files = { ...allFiles, bridges: { bridges: allFiles.bridges.bridges.filter((bridge) => bridge.protocol === 'across') } }
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const USDC = 10n ** 6n
/** A flat capital share (5 bp), 1 bp of LP fee and 0.25 USDC of gas: Across's fee is exactly 6 bp plus 0.25 USDC. */
const FLAT = { ...DEFAULT_LANE, capitalUpperPct: DEFAULT_LANE.capitalLowerPct }

let stand: AcrossStandIn
let market: LiveMarket
const client = () => createAcrossFeesClient({ url: stand.url, retryDelayMs: 5, maxRequestsPerSecond: 1000, attempts: 2 })
let close: () => Promise<void>

beforeAll(async () => {
  stand = await startAcrossStandIn()
  stand.setLane(1, 10, FLAT)
  stand.setLane(1, 42161, FLAT)
  const fees = client()
  close = () => fees.close()
  const across = createAcrossLaneFees({
    client: fees,
    lanes: acrossLanesOf(compileCatalogue(files)),
    apiUrl: stand.url,
    clock: Date.now,
    log: pino({ level: 'silent' }),
  })
  market = createLiveMarket({ files, feeds, readers: {}, refreshMs: 4000, clock: Date.now, log: pino({ level: 'silent' }), across })
  await market.refresh()
})

afterAll(async () => {
  market?.stop()
  await close?.()
  await stand?.close()
})

function app() {
  const deps = testDeps({ market, clock: Date.now })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return createServer(deps)
}

const ethToOpt = (fromAmount: string) =>
  quoteBody({ fromChain: 'ETH', toChain: 'OPT', fromToken: 'USDC', toToken: 'USDC', fromAmount, slippage: 0.005 })

describe('the live market with Across’s suggested fees', () => {
  it('charges an Across lane what Across asks, says so, and no longer the snapshot’s 2 bp', async () => {
    expect(market.status().isDegraded).toBe(false)
    const response = await postJson(app(), '/api/x402/quote', ethToOpt('10000'))
    expect(response.status).toBe(200)
    const quote = QuoteResult.parse(await readJson(response))
    expect(quote.route.id).toBe('across-usdc:ETH>OPT')
    // 10,000 USDC: 5 bp capital + 1 bp LP = 6.00 USD, and the relayer's 0.25 USDC of gas, with no fill gas on top.
    expect(quote.route.realCost.items.filter((item) => item.kind.startsWith('bridge') || item.kind === 'destination_gas')).toEqual([
      { kind: 'bridge_fee', label: 'Across (USDC) fee', usd: '6', source: 'across' },
      { kind: 'bridge_fixed_fee', label: 'Across (USDC) fixed fee', usd: '0.25', source: 'across' },
    ])
    const bridge = quote.route.steps.find((step) => step.type === 'bridge')
    expect(bridge?.toAmount).toBe('9993.75')
    const lane = market
      .catalogue()
      .lanes.get('ETH>OPT')
      ?.find((candidate) => candidate.bridge.id === 'across-usdc')
    expect(lane).toMatchObject({ feePpm: 600n, destinationGasUnits: 0n, feeQuotedBy: 'across', maxAmountIn: FLAT.maxDeposit })
  })

  it('refuses an amount above the lane’s maxDeposit as above the bridge’s maximum, and still quotes below it', async () => {
    stand.setLane(1, 10, { maxDeposit: 50_000n * USDC })
    await market.refresh()
    const above = await postJson(app(), '/api/x402/quote', ethToOpt('60000'))
    expect(above.status).toBe(422)
    expect(await readJson(above)).toMatchObject({ code: 'amount_out_of_range', limit: 'bridge_maximum' })
    expect((await postJson(app(), '/api/x402/quote', ethToOpt('40000'))).status).toBe(200)
    stand.setLane(1, 10, { maxDeposit: FLAT.maxDeposit })
    await market.refresh()
    expect((await postJson(app(), '/api/x402/quote', ethToOpt('60000'))).status).toBe(200)
  })

  it('states Across’s fill estimate as the bridge leg’s duration, and refuses above what relayers fill at once, naming it', async () => {
    stand.setLane(1, 10, { fillTimeSec: 30, maxDepositInstant: 50_000n * USDC })
    try {
      await market.refresh()
      const response = await postJson(app(), '/api/x402/quote', ethToOpt('10000'))
      expect(response.status).toBe(200)
      const quote = QuoteResult.parse(await readJson(response))
      // Ethereum's block (12 s) and Across's 30 s, not the prior's 15 s; the p95: three blocks and the larger of the
      // prior's 60 s and 3 × 30 s.
      expect(quote.estimatedDuration).toBe(12 + 30)
      expect(quote.route.estimatedDurationP95).toBe(36 + 90)
      // Above maxDepositInstant (below maxDeposit): no route, a 422 that says why.
      const above = await postJson(app(), '/api/x402/quote', ethToOpt('60000'))
      expect(above.status).toBe(422)
      const body = await readJson<{ code: string; limit: string; detail: string; viableRange: { max: string } }>(above)
      expect(body).toMatchObject({ code: 'amount_out_of_range', limit: 'bridge_maximum' })
      expect(body.detail).toContain("an Across lane takes at most what its relayers can fill at once, Across's maxDepositInstant")
      // About the instant limit (the route may swap a little on the way), far below maxDeposit's 1,500,000.
      expect(Number(body.viableRange.max)).toBeLessThan(51_000)
    } finally {
      stand.setLane(1, 10, { fillTimeSec: 2, maxDepositInstant: FLAT.maxDeposit })
      await market.refresh()
    }
  })

  it('a lane Across refuses is not offered, never priced from the snapshot: 503 naming it, and health says so', async () => {
    // A 4xx is Across's answer about the lane (a 5xx or no answer keeps its last figures until they age out).
    stand.setLane(1, 10, { failWith: 400 })
    await market.refresh()
    const response = await postJson(app(), '/api/x402/quote', ethToOpt('10000'))
    expect(response.status).toBe(503)
    const body = await readJson<{ code: string; lanes: string[] }>(response)
    expect(body.code).toBe('market_unavailable')
    expect(body.lanes).toEqual([expect.stringMatching(/^across-(usdc|usdt):ETH>OPT$/)])
    expect(market.catalogue().gaps?.lanes.get('across-usdc:ETH>OPT')).toMatch(/could not be read: .*HTTP 400/)
    expect(market.status().isDegraded).toBe(true)
    expect(market.status().chains.find((status) => status.chain === 'ETH')?.stale).toEqual(
      expect.arrayContaining(['bridge:across-usdc:ETH>OPT', 'bridge:across-usdt:ETH>OPT']),
    )
    // Other lanes are still priced from Across.
    const arb = await postJson(app(), '/api/x402/quote', { ...ethToOpt('10000'), toChain: 'ARB' })
    expect(arb.status).toBe(200)
    stand.setLane(1, 10, { failWith: 0 })
    await market.refresh()
    expect((await postJson(app(), '/api/x402/quote', ethToOpt('10000'))).status).toBe(200)
  })

  it('the service wired from configuration reads Across at SWAPEAZI_ACROSS_API_URL with the live market, and nothing with off', async () => {
    const rpc = JSON.stringify({ ETH: `http://127.0.0.1:${await closedPort()}` })
    const silent = pino({ level: 'silent' })
    const off = await marketFromConfig(
      loadConfig({ SWAPEAZI_RPC_URLS: rpc, SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR, SWAPEAZI_ACROSS_API_URL: 'off' }),
      allFiles,
      silent,
      { firstReadWaitMs: 100 },
    )
    off?.stop()
    const before = stand.requests.length
    const live = await marketFromConfig(
      loadConfig({ SWAPEAZI_RPC_URLS: rpc, SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR, SWAPEAZI_ACROSS_API_URL: stand.url }),
      allFiles,
      silent,
      { firstReadWaitMs: 100 },
    )
    try {
      await vi.waitFor(() => expect(stand.requests.length).toBeGreaterThan(before), { timeout: 5_000 })
      expect(stand.requests[before]?.query.get('originChainId')).toMatch(/^[0-9]+$/)
    } finally {
      live?.stop()
    }
    // With off, every Across lane keeps the snapshot's figures.
    const offLane = off
      ?.catalogue()
      .lanes.get('OPT>ARB')
      ?.find((lane) => lane.bridge.id === 'across-usdc')
    expect(offLane).toBeDefined()
    expect(offLane?.feeQuotedBy).toBeUndefined()
  })
})
