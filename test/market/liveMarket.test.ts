import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { E18 } from '../../src/engine/index.ts'
import type { ChainReading, ChainReadPlan, ReadChain } from '../../src/market/chainReading.ts'
import { fxClosedSince } from '../../src/market/fxMarketHours.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'
import { createServer } from '../../src/app/createServer.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'

// Issue 17: the live market's rules, over a scripted chain behind the ReadChain interface (the real reader and its
// anvil stand-ins are tested in createChainReader.test.ts and liveMarketOnAnvil.test.ts).

const { files } = loadCatalogue(MANIFEST_DIR)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
/** A Wednesday, FX markets open. */
const WEDNESDAY_MS = Date.parse('2026-11-25T12:00:00Z')
const eightDecimals = (value: number): bigint => BigInt(Math.round(value * 1e8))

type Script = { eurUsd: number; eurUpdatedAgoSec?: number; blockAgoSec?: number; fails?: string; sequencerDown?: boolean }

/** A chain whose reads answer what the test sets, every feed of the plan included. */
function scriptedChain(clock: () => number, script: () => Script): { read: ReadChain; calls: ChainReadPlan[] } {
  const calls: ChainReadPlan[] = []
  let block = 1000n
  return {
    calls,
    async read(plan) {
      calls.push(plan)
      const now = script()
      if (now.fails !== undefined) throw new Error(now.fails)
      const nowSec = Math.floor(clock() / 1000)
      block += 1n
      const reading: ChainReading = {
        chain: plan.chain,
        blockNumber: block,
        blockTimestamp: nowSec - (now.blockAgoSec ?? 0),
        feeds: plan.feeds.map((feed) => ({
          id: feed.id,
          ok: true as const,
          answer: eightDecimals(feed.id === 'fx:EUR' ? now.eurUsd : feed.id === 'native' ? 3000 : 1.3),
          decimals: 8,
          updatedAt: nowSec - (feed.id === 'fx:EUR' ? (now.eurUpdatedAgoSec ?? 60) : 60),
          roundId: 1n,
        })),
        gas: { baseFeePerGas: 2_000_000_000n, priorityFeePerGas: 1_000_000_000n },
        ...(plan.sequencerUptimeFeed === undefined ? {} : { sequencer: { isUp: now.sequencerDown !== true, since: nowSec - 86_400 } }),
        rpcCalls: 2,
      }
      return reading
    },
  }
}

function liveOn(chains: ChainCode[], script: () => Script, clock = () => WEDNESDAY_MS): { market: LiveMarket; calls: ChainReadPlan[] } {
  const chain = scriptedChain(clock, script)
  const readers = Object.fromEntries(chains.map((code) => [code, chain.read]))
  const market = createLiveMarket({ files, feeds, readers, refreshMs: 4000, clock, log: pino({ level: 'silent' }) })
  return { market, calls: chain.calls }
}

function appOn(market: LiveMarket) {
  const deps = testDeps({ market, clock: () => WEDNESDAY_MS })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return createServer(deps)
}

const eurcToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'EURC', toToken: 'USDC', fromAmount: '1000' })
const usdcToUsdt = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000' })

describe('the live market', () => {
  it('prices from fresh reads: the FX rate, gas and native price of the block read, one plan per chain', async () => {
    let eurUsd = 1.2
    const { market, calls } = liveOn(['ETH'], () => ({ eurUsd }))
    await market.refresh()
    expect(calls).toHaveLength(1)
    expect(calls[0]?.feeds.map((feed) => feed.id).sort()).toEqual(['fx:EUR', 'fx:GBP', 'fx:SGD', 'native'])
    expect(market.catalogue().fxUsdE18.EUR).toBe((12n * E18) / 10n)
    // 3 gwei at USD 3000 per ETH.
    expect(market.catalogue().chains.get('ETH')?.gasUnitUsdE18).toBe((3n * 3000n * E18) / 1_000_000_000n)
    const status = market.status()
    expect(status.isDegraded).toBe(false)
    expect(status.currencies.find((c) => c.currency === 'EUR')).toEqual({ currency: 'EUR', source: 'rpc', chain: 'ETH', block: '1001' })
    expect(status.currencies.find((c) => c.currency === 'KES')).toEqual({ currency: 'KES', source: 'snapshot' })
    expect(status.chains.find((c) => c.chain === 'BAS')).toEqual({ chain: 'BAS', source: 'snapshot', stale: [] })

    // Moving the feed moves the next quote, within one refresh, by the rate's ratio.
    const app = appOn(market)
    const before = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', eurcToUsdc)))
    eurUsd = 1.32
    await market.refresh()
    const after = QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', eurcToUsdc)))
    const ratio = Number(after.toAmount) / Number(before.toAmount)
    expect(ratio).toBeGreaterThan(1.1 * 0.999)
    expect(ratio).toBeLessThan(1.1 * 1.001)
  })

  it('a feed older than its heartbeat removes exactly the routes that need it: 503 market_unavailable naming it', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, eurUpdatedAgoSec: 2 * 86_400 }))
    await market.refresh()
    expect(market.status()).toMatchObject({ isDegraded: true })
    expect(market.status().currencies.find((c) => c.currency === 'EUR')?.stale).toMatch(
      /ETH feed last updated 172800 s ago \(heartbeat 86400 s\)/,
    )
    const app = appOn(market)
    const refused = await postJson(app, '/api/x402/quote', eurcToUsdc)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('15')
    expect(await readJson(refused)).toMatchObject({ code: 'market_unavailable', currencies: ['EUR'], chains: [] })
    // A dollar route needs no EUR rate.
    expect((await postJson(app, '/api/x402/quote', usdcToUsdt)).status).toBe(200)
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({
      status: 'degraded',
      market: { currencies: expect.arrayContaining([expect.objectContaining({ currency: 'EUR', source: 'rpc' })]) },
    })
  })

  it('an RPC that fails makes the chain stale: its quotes are 503, never priced from the last figures, and health degraded', async () => {
    let fails: string | undefined
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, ...(fails === undefined ? {} : { fails }) }))
    fails = 'ETH: the RPC did not answer within 5000 ms'
    await market.refresh()
    const app = appOn(market)
    const refused = await postJson(app, '/api/x402/quote', usdcToUsdt)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: ['ETH'] })
    expect(problem['detail']).toContain('ETH: not read yet (ETH: the RPC did not answer within 5000 ms)')
    const health = await readJson(await app.request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'ETH')).toMatchObject({
      source: 'rpc',
      stale: ['gas'],
      error: 'ETH: the RPC did not answer within 5000 ms',
    })
    // Other chains keep the snapshot and still quote.
    expect((await postJson(app, '/api/x402/quote', quoteBody({ fromChain: 'BAS', toChain: 'BAS' }))).status).toBe(200)
  })

  it('a read whose block is older than three refresh intervals is stale too', async () => {
    const { market } = liveOn(['ETH'], () => ({ eurUsd: 1.2, blockAgoSec: 60 }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'ETH')).toMatchObject({ stale: ['gas'], blockAgeSec: 60 })
  })

  it('an L2 whose sequencer is down is not offered', async () => {
    const { market } = liveOn(['BAS'], () => ({ eurUsd: 1.2, sequencerDown: true }))
    await market.refresh()
    expect(market.status().chains.find((c) => c.chain === 'BAS')).toMatchObject({ stale: ['sequencer'] })
    const refused = await postJson(appOn(market), '/api/x402/quote', quoteBody({ fromChain: 'BAS', toChain: 'BAS' }))
    expect(refused.status).toBe(503)
  })

  it('while FX markets are closed, the last FX answer before the close stays usable', async () => {
    const saturday = Date.parse('2026-11-28T12:00:00Z')
    expect(fxClosedSince(saturday)).toBe(Date.parse('2026-11-27T21:00:00Z'))
    expect(fxClosedSince(Date.parse('2026-11-27T20:59:59Z'))).toBeUndefined()
    expect(fxClosedSince(Date.parse('2026-11-29T23:00:00Z'))).toBeUndefined()
    // Last updated Friday 20:00 UTC, 40 h before: older than its heartbeat, usable through the closure.
    const { market } = liveOn(
      ['ETH'],
      () => ({ eurUsd: 1.2, eurUpdatedAgoSec: 40 * 3600 }),
      () => saturday,
    )
    await market.refresh()
    expect(market.status()).toMatchObject({ isDegraded: false, isFxMarketClosed: true })
    expect(market.catalogue().fxUsdE18.EUR).toBe((12n * E18) / 10n)
  })
})
