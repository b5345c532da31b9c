import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { type Chain, createPublicClient, defineChain, http } from 'viem'
import { arbitrum, base, bsc, celo, gnosis, mainnet, optimism, polygon } from 'viem/chains'
import type { Config } from '../config.ts'
import type { CatalogueFiles } from '../engine/index.ts'
import type { ReadChain } from '../market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../market/createChainReader.ts'
import { FeedCatalogue } from '../market/feedCatalogue.ts'
import { createLiveMarket, type LiveMarket } from '../market/liveMarket.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { createTransactionSimulator, type Simulators } from '../tx/simulateTransaction.ts'

/** viem's definition of each chain the market can read (ids, and Multicall3 where viem knows it). */
const VIEM_CHAINS: Readonly<Record<string, Chain>> = {
  ETH: mainnet,
  POL: polygon,
  ARB: arbitrum,
  OPT: optimism,
  BAS: base,
  BNB: bsc,
  GNO: gnosis,
  CEL: celo,
}

/** The feeds file beside the catalogue: `feeds.json`, or one line naming it and what to change. */
export function loadFeedCatalogue(manifestDir: string): FeedCatalogue {
  const file = join(manifestDir, 'feeds.json')
  let json: unknown
  try {
    json = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new Error(
      `feeds error: ${file}: ${error instanceof Error ? error.message : String(error)}; restore the file, or set SWAPEAZI_MANIFEST_DIR to a directory holding the whole catalogue`,
    )
  }
  const parsed = FeedCatalogue.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new Error(`feeds error: ${file}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}; correct the file`)
  }
  return parsed.data
}

/**
 * The live market when SWAPEAZI_RPC_URLS names chains (DESIGN 5), read once before the service answers and then
 * refreshed in the background; undefined when none is set, and the embedded snapshot prices every chain.
 */
export async function marketFromConfig(config: Config, files: CatalogueFiles, log: Logger): Promise<LiveMarket | undefined> {
  const entries = Object.entries(config.market.rpcUrls) as [ChainCode, string][]
  if (entries.length === 0) return undefined
  const feeds = loadFeedCatalogue(config.manifestDir)
  const readers: Partial<Record<ChainCode, ReadChain>> = {}
  for (const [chain, url] of entries) {
    const known = VIEM_CHAINS[chain]
    if (known === undefined) continue
    const client = createPublicClient({
      chain: defineChain({ ...known, rpcUrls: { default: { http: [url] } } }),
      transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS),
    })
    readers[chain] = createChainReader(client)
  }
  const market = createLiveMarket({ files, feeds, readers, refreshMs: config.market.refreshMs, clock: Date.now, log })
  await market.refresh()
  market.start()
  const status = market.status()
  log.info(
    {
      event: 'market',
      live: market.liveChains,
      snapshot: status.chains.filter((chain) => chain.source === 'snapshot').map((chain) => chain.chain),
      degraded: status.isDegraded,
      stale: status.chains.filter((chain) => chain.stale.length > 0).map(({ chain, stale, error }) => ({ chain, stale, error })),
    },
    `market: live on ${market.liveChains.join(', ')}; the snapshot of ${files.market.asOf} prices the other chains${status.isDegraded ? '; degraded: routes needing stale figures are not offered' : ''}`,
  )
  return market
}

/** A pre-flight simulator per chain with an RPC URL (preflightBuild.ts), over its own viem client. */
export function simulatorsFromConfig(config: Config): Simulators {
  const simulators: Simulators = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][])
    simulators[chain] = createTransactionSimulator(createPublicClient({ transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS) }))
  return simulators
}
