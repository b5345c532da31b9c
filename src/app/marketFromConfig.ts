import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { BaseError, type Chain, createPublicClient, defineChain, http } from 'viem'
import { arbitrum, base, bsc, celo, gnosis, mainnet, optimism, polygon } from 'viem/chains'
import type { Config } from '../config.ts'
import { type CatalogueFiles, compileCatalogue } from '../engine/index.ts'
import { createAcrossFeesClient } from '../market/acrossFees.ts'
import { type AcrossLaneFees, acrossLanesOf, createAcrossLaneFees } from '../market/acrossLaneFees.ts'
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
 * How long start-up waits for the first read of the live chains. A provider that hangs must not keep the port closed
 * (issue 15 items 7 and 10): past this, the service listens and the chains not yet read answer their routes 503
 * market_unavailable ("not read yet") until their read lands, as a stale chain does.
 */
export const FIRST_READ_WAIT_MS = 2_000

/**
 * The live market when SWAPEAZI_RPC_URLS names chains (DESIGN 5), read once before the service answers (at most
 * FIRST_READ_WAIT_MS) and then refreshed in the background; undefined when none is set, and the embedded snapshot
 * prices every chain. Each URL must serve the chain it is named for: one that answers another chain id stops start-up
 * (when it answers in time) and is never read (whenever it answers).
 */
export async function marketFromConfig(
  config: Config,
  files: CatalogueFiles,
  log: Logger,
  options: { firstReadWaitMs?: number } = {},
): Promise<LiveMarket | undefined> {
  const entries = Object.entries(config.market.rpcUrls) as [ChainCode, string][]
  if (entries.length === 0) return undefined
  const feeds = loadFeedCatalogue(config.manifestDir)
  const firstReadWaitMs = options.firstReadWaitMs ?? FIRST_READ_WAIT_MS
  // One budget for the chain-id checks and the first read together.
  const deadlineMs = Date.now() + firstReadWaitMs
  const readers: Partial<Record<ChainCode, ReadChain>> = {}
  const checks: Promise<void>[] = []
  for (const [chain, url] of entries) {
    const known = VIEM_CHAINS[chain]
    if (known === undefined) continue
    const client = createPublicClient({
      chain: defineChain({ ...known, rpcUrls: { default: { http: [url] } } }),
      transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS),
    })
    const check = chainIdCheck(chain, known.id, () => client.getChainId())
    checks.push(check.atStart(deadlineMs, log))
    const read = createChainReader(client)
    readers[chain] = async (plan) => {
      await check.verified()
      return read(plan)
    }
  }
  // A URL for the wrong chain is a configuration error: say so before listening, where it answers in time.
  await Promise.all(checks)
  const across = acrossFromConfig(config, files, log)
  const market = createLiveMarket({
    files,
    feeds,
    readers,
    refreshMs: config.market.refreshMs,
    clock: Date.now,
    log,
    ...(across === undefined ? {} : { across }),
  })
  const first = market.refresh()
  const isRead = await Promise.race([first.then(() => true), sleep(Math.max(0, deadlineMs - Date.now())).then(() => false)])
  market.start()
  const status = market.status()
  log.info(
    {
      event: 'market',
      live: market.liveChains,
      snapshot: status.chains.filter((chain) => chain.source === 'snapshot').map((chain) => chain.chain),
      degraded: status.isDegraded,
      stale: status.chains.filter((chain) => chain.stale.length > 0).map(({ chain, stale, error }) => ({ chain, stale, error })),
      ...(isRead ? {} : { first_read_pending: true }),
      across: config.market.acrossApiUrl ?? 'off',
    },
    `market: live on ${market.liveChains.join(', ')}; the snapshot of ${files.market.asOf} prices the other chains${status.isDegraded ? '; degraded: routes needing stale figures are not offered' : ''}${isRead ? '' : `; the first read took longer than ${firstReadWaitMs} ms: routes on the chains not read yet answer 503 until it lands`}`,
  )
  return market
}

/**
 * Each Across lane's suggested fees, read from SWAPEAZI_ACROSS_API_URL (Across's public API by default) with the live
 * market; undefined with `off`, and Across lanes keep the snapshot's fees.
 */
function acrossFromConfig(config: Config, files: CatalogueFiles, log: Logger): AcrossLaneFees | undefined {
  const url = config.market.acrossApiUrl
  if (url === undefined) return undefined
  return createAcrossLaneFees({
    client: createAcrossFeesClient({ url }),
    lanes: acrossLanesOf(compileCatalogue(files)),
    apiUrl: url,
    clock: Date.now,
    log,
  })
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref()
  })

/** The chain id check of one SWAPEAZI_RPC_URLS entry: once verified it costs nothing; a mismatch is final. */
function chainIdCheck(chain: ChainCode, expected: number, getChainId: () => Promise<number>) {
  let verified: Promise<void> | undefined
  let mismatch: Error | undefined
  const verify = (): Promise<void> => {
    if (mismatch !== undefined) return Promise.reject(mismatch)
    verified ??= getChainId().then(
      (id) => {
        if (id !== expected) {
          mismatch = new Error(
            `invalid configuration: SWAPEAZI_RPC_URLS.${chain}: the RPC serves chain ${id}, not ${chain} (${expected}); give ${chain} an RPC of its own chain`,
          )
          throw mismatch
        }
      },
      (error: unknown) => {
        verified = undefined // unreachable: ask again at the next read
        // viem's message carries the URL (and with it the provider's key), and this one reaches health: say only what
        // failed.
        throw new Error(`its chain id could not be read from the RPC: ${error instanceof BaseError ? error.shortMessage : 'RPC error'}`)
      },
    )
    return verified
  }
  return {
    verified: verify,
    /** At start: a mismatch rejects (start-up ends with its one line); no answer in time only warns. */
    async atStart(deadlineMs: number, log: Logger): Promise<void> {
      const answered = await Promise.race([
        verify().then(
          () => true,
          (error: unknown) => error,
        ),
        sleep(Math.max(0, deadlineMs - Date.now())).then(() => false),
      ])
      if (answered === true) return
      if (answered === mismatch) throw mismatch
      log.warn(
        { event: 'market_chain_id_unchecked', chain },
        `SWAPEAZI_RPC_URLS.${chain}: its chain id could not be read at start; it is checked before the chain is read`,
      )
    },
  }
}

/** A pre-flight simulator per chain with an RPC URL (preflightBuild.ts), over its own viem client. */
export function simulatorsFromConfig(config: Config): Simulators {
  const simulators: Simulators = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][])
    simulators[chain] = createTransactionSimulator(createPublicClient({ transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS) }))
  return simulators
}
