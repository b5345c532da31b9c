// Quote latency with the live market (issue 17 item 9): findRoutes over every agent-callable corridor pair on the
// catalogue a live market compiled from anvil reads (ETH and BAS live, stand-in feeds at manifest/feeds.json's
// addresses, stand-in pools and a stand-in QuoterV2 at the snapshot's balances and depth), beside the snapshot's catalogue, the two interleaved call by call in one run. The quote path reads the
// current catalogue from memory in both; this shows the live one prices no slower.
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { createPublicClient, http } from 'viem'
import { loadFeedCatalogue } from '../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../src/catalogue/loadCatalogue.ts'
import { findRoutes } from '../src/engine/index.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../src/market/createChainReader.ts'
import { readPlanOf } from '../src/market/feedCatalogue.ts'
import { createLiveMarket } from '../src/market/liveMarket.ts'
import { snapshotDepthPools } from '../test/chain/depthStandIns.ts'
import { startFeedStandIns } from '../test/chain/feedStandIns.ts'
import { corridorQuoteCases, percentile } from './engineLatency.ts'

const MANIFEST_DIR = fileURLToPath(new URL('../manifest', import.meta.url))
const LIVE_CHAINS = ['ETH', 'BAS'] as const

export type LiveQuoteLatencyResult = {
  liveChains: readonly string[]
  calls: number
  snapshot: { p50Us: number; p99Us: number }
  live: { p50Us: number; p99Us: number }
  /** Cases whose live and snapshot outcomes differ in kind (the live FX rates may move a route in or out). */
  differingOutcomes: number
}

export async function runLiveQuoteLatency(measuredCalls = 20_000, warmupCalls = 2_000): Promise<LiveQuoteLatencyResult> {
  const { catalogue: snapshot, files } = loadCatalogue(MANIFEST_DIR)
  const feeds = loadFeedCatalogue(MANIFEST_DIR)
  const chain = await startFeedStandIns()
  try {
    for (const code of LIVE_CHAINS) {
      const plan = readPlanOf(feeds, code, files.venues.venues, snapshot.tokens, files.bridges.bridges)
      // Answers near the snapshot's rates, so the same routes stay viable.
      const answers = Object.fromEntries(
        plan.feeds.map((feed) => {
          const currency = feed.id.startsWith('fx:') ? feed.id.slice(3) : undefined
          const usd =
            currency === undefined ? (files.market.chains[code]?.nativeUsd ?? '1') : (files.market.fx[currency as 'EUR']?.usd ?? '1')
          return [feed.id, BigInt(Math.round(Number(usd) * 1e8))]
        }),
      )
      // The pools the market reads hold the snapshot's balances.
      const balances = Object.fromEntries(
        (plan.pools ?? []).map((pool) => {
          const state = files.market.venues[pool.id]
          return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
        }),
      )
      // The depth venues are quoted from pools at the snapshot's depth.
      await chain.placePlan(plan, answers, balances, snapshotDepthPools(plan, snapshot))
    }
    const client = createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) })
    const reader = createChainReader(client)
    const market = createLiveMarket({
      files,
      feeds,
      readers: Object.fromEntries(LIVE_CHAINS.map((code) => [code, reader])),
      refreshMs: 4000,
      clock: Date.now,
      log: pino({ level: 'silent' }),
    })
    await market.refresh()
    if (market.status().isDegraded) throw new Error(`bench live quote: the market is degraded: ${JSON.stringify(market.status().chains)}`)
    const live = market.catalogue()

    const cases = corridorQuoteCases(snapshot)
    const liveCases = corridorQuoteCases(live)
    let differingOutcomes = 0
    cases.forEach((c, index) => {
      const other = liveCases[index]
      if (other !== undefined && findRoutes(snapshot, c.parameters).kind !== findRoutes(live, other.parameters).kind) differingOutcomes += 1
    })
    const times = { snapshot: new Float64Array(measuredCalls), live: new Float64Array(measuredCalls) }
    for (let call = -warmupCalls; call < measuredCalls; call += 1) {
      const index = ((call % cases.length) + cases.length) % cases.length
      for (const [name, catalogue, list] of [
        ['snapshot', snapshot, cases],
        ['live', live, liveCases],
      ] as const) {
        const parameters = list[index]?.parameters
        if (parameters === undefined) continue
        const started = performance.now()
        findRoutes(catalogue, parameters)
        const elapsedUs = (performance.now() - started) * 1000
        if (call >= 0) times[name][call] = elapsedUs
      }
    }
    const summary = (values: Float64Array): { p50Us: number; p99Us: number } => {
      const sorted = values.sort()
      return { p50Us: percentile(sorted, 0.5), p99Us: percentile(sorted, 0.99) }
    }
    return {
      liveChains: LIVE_CHAINS,
      calls: measuredCalls,
      snapshot: summary(times.snapshot),
      live: summary(times.live),
      differingOutcomes,
    }
  } finally {
    await chain.stop()
  }
}
