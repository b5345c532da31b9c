// One live-market refresh of one chain against anvil (issue 17 item 9): createChainReader over viem's http transport,
// with stand-in feeds at fixed addresses and an L2 sequencer-uptime feed, and Ethereum's depth venues quoted at the
// ladder of sizes by a stand-in QuoterV2 at the snapshot's depth and its LayerZero lanes' quoteSend by stand-in OFTs
// (as many calls as a live Ethereum refresh makes), a
// block mined between refreshes (untimed)
// so each reads a new block as it would live. The requests are counted by the transport as it sends them, beside
// what the reader reports.
import { type Address, createPublicClient, getAddress, http } from 'viem'
import type { ChainReadPlan } from '../src/market/chainReading.ts'
import { fileURLToPath } from 'node:url'
import { loadFeedCatalogue } from '../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../src/catalogue/loadCatalogue.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../src/market/createChainReader.ts'
import { readPlanOf } from '../src/market/feedCatalogue.ts'
import { snapshotDepthPools } from '../test/chain/depthStandIns.ts'
import { startFeedStandIns } from '../test/chain/feedStandIns.ts'

const MANIFEST_DIR = fileURLToPath(new URL('../manifest', import.meta.url))

const FEEDS = 10
const WARMUP_REFRESHES = 10
const MEASURED_REFRESHES = 100

export type MarketRefreshResult = {
  feeds: number
  /** Depth-venue quotes in the multicall (venues × directions × ladder sizes). */
  quotes: number
  /** LayerZero `quoteSend` calls in the multicall (lanes leaving the chain). */
  messagingFeeLanes: number
  refreshes: number
  /** `rpcCalls` of each refresh, as the reader reported it (the distinct values). */
  rpcCallsReported: number[]
  /** HTTP requests the transport sent per refresh (the distinct values). */
  requestsSent: number[]
  p50Ms: number
  p90Ms: number
  maxMs: number
}

const feedAddress = (index: number): Address => getAddress(`0x${(0xfeed0000 + index).toString(16).padStart(40, '0')}`)

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

export async function runMarketRefresh(): Promise<MarketRefreshResult> {
  const chain = await startFeedStandIns()
  try {
    const feeds = Array.from({ length: FEEDS }, (_, index) => ({ id: `fx:F${index}`, address: feedAddress(index), heartbeatSec: 86_400 }))
    const { catalogue, files } = loadCatalogue(MANIFEST_DIR)
    const eth = readPlanOf(loadFeedCatalogue(MANIFEST_DIR), 'ETH', files.venues.venues, catalogue.tokens, files.bridges.bridges)
    const ladders = eth.ladders ?? []
    const messagingFees = eth.messagingFees ?? []
    const plan: ChainReadPlan = { chain: 'BAS', feeds, sequencerUptimeFeed: feedAddress(FEEDS), ladders, messagingFees }
    await chain.placePlan(
      plan,
      Object.fromEntries(feeds.map((feed, index) => [feed.id, 100_000_000n + BigInt(index)])),
      {},
      snapshotDepthPools(plan, catalogue),
    )
    const quotes = ladders.reduce((sum, ladder) => sum + ladder.directions.reduce((n, direction) => n + direction.amountsIn.length, 0), 0)

    let requests = 0
    const client = createPublicClient({
      transport: http(chain.anvil.rpcUrl, {
        ...CHAIN_RPC_TRANSPORT_OPTIONS,
        onFetchRequest: () => {
          requests += 1
        },
      }),
    })
    const read = createChainReader(client)

    const timesMs: number[] = []
    const reported = new Set<number>()
    const sent = new Set<number>()
    for (let round = 0; round < WARMUP_REFRESHES + MEASURED_REFRESHES; round += 1) {
      await chain.mine()
      const before = requests
      const started = performance.now()
      const reading = await read(plan)
      const elapsedMs = performance.now() - started
      if (reading.feeds.some((feed) => !feed.ok) || reading.sequencer?.isUp !== true)
        throw new Error(`bench market: a stand-in feed did not read: ${JSON.stringify(reading.feeds.filter((feed) => !feed.ok))}`)
      const cut = reading.ladders.flatMap((ladder) => ladder.directions.filter((direction) => direction.end !== undefined))
      if (cut.length > 0) throw new Error(`bench market: a ladder was cut short: ${cut.map((direction) => direction.end).join('; ')}`)
      if (reading.messagingFees.some((lane) => !lane.ok)) throw new Error('bench market: a quoteSend stand-in did not answer')
      if (round < WARMUP_REFRESHES) continue
      timesMs.push(elapsedMs)
      reported.add(reading.rpcCalls)
      sent.add(requests - before)
    }
    timesMs.sort((a, b) => a - b)
    return {
      feeds: FEEDS,
      quotes,
      messagingFeeLanes: messagingFees.length,
      refreshes: MEASURED_REFRESHES,
      rpcCallsReported: [...reported],
      requestsSent: [...sent],
      p50Ms: quantile(timesMs, 0.5),
      p90Ms: quantile(timesMs, 0.9),
      maxMs: timesMs.at(-1) ?? 0,
    }
  } finally {
    await chain.stop()
  }
}
