import { join } from 'node:path'
import type { Logger } from 'pino'
import { createPublicClient, defineChain } from 'viem'
import { MAX_CATALOGUE_FILE_BYTES, readJsonFile } from '../schemas/readJsonFile.ts'
import type { Config } from '../config.ts'
import { type CatalogueFiles, compileCatalogue } from '../engine/index.ts'
import { createAcrossFeesClient } from '../market/acrossFees.ts'
import {
  ACROSS_MAX_AGE_MS,
  type AcrossFeesKeeper,
  type AcrossLaneFees,
  acrossLanesOf,
  acrossLongestReadIntervalMs,
  acrossRefreshDurationMs,
  createAcrossLaneFees,
} from '../market/acrossLaneFees.ts'
import type { ReadChain } from '../market/chainReading.ts'
import { createChainReader } from '../market/createChainReader.ts'
import { FeedCatalogue } from '../market/feedCatalogue.ts'
import { createLiveMarket, type LiveMarket } from '../market/liveMarket.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { type ChainIdChecks, chainIdChecksFromConfig, checkedRpcTransport, LIVE_CHAINS } from './chainIdCheck.ts'
import { redactUrls } from './createLogger.ts'

/** The feeds file beside the catalogue: `feeds.json`, or one line naming it and what to change. */
export function loadFeedCatalogue(manifestDir: string): FeedCatalogue {
  const file = join(manifestDir, 'feeds.json')
  let json: unknown
  try {
    json = readJsonFile(file, MAX_CATALOGUE_FILE_BYTES, 'a catalogue file')
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
 * (when it answers in time) and is never read (whenever it answers). The checks are `chainIds` when given (serve
 * shares them with the tracker, the relayer and the pre-flight simulation). With `acrossFeesKeeper` (the store), each Across
 * lane's reads are kept as it is read, and those kept within their maximum age are taken back before the first read
 * (within the same wait; a store that fails or is slow only means the lanes are read from Across). Across's request
 * rate and refresh interval must let every lane be read again within its maximum age (acrossRefreshError).
 */
export async function marketFromConfig(
  config: Config,
  files: CatalogueFiles,
  log: Logger,
  options: { firstReadWaitMs?: number; acrossFeesKeeper?: AcrossFeesKeeper; chainIds?: ChainIdChecks } = {},
): Promise<LiveMarket | undefined> {
  const entries = Object.entries(config.market.rpcUrls) as [ChainCode, string][]
  if (entries.length === 0) return undefined
  const feeds = loadFeedCatalogue(config.manifestDir)
  const firstReadWaitMs = options.firstReadWaitMs ?? FIRST_READ_WAIT_MS
  // One budget for the chain-id checks, the Across lanes kept in the store, and the first read together.
  const deadlineMs = Date.now() + firstReadWaitMs
  const across = acrossFromConfig(config, files, log, options.acrossFeesKeeper)
  // restore() never rejects: a store that cannot be read is logged, and the lanes are read from Across.
  const restoring = across?.restore()
  const readers: Partial<Record<ChainCode, ReadChain>> = {}
  const checks: Promise<void>[] = []
  const chainIds = options.chainIds ?? chainIdChecksFromConfig(config, log)
  for (const [chain, url] of entries) {
    const known = LIVE_CHAINS[chain]
    const check = chainIds[chain]
    if (known === undefined || check === undefined) continue
    const client = createPublicClient({
      chain: defineChain({ ...known, rpcUrls: { default: { http: [url] } } }),
      transport: checkedRpcTransport(chainIds, chain, url),
    })
    checks.push(check.atStart(deadlineMs))
    const read = createChainReader(client)
    readers[chain] = async (plan) => {
      await check.verified()
      return read(plan)
    }
  }
  // A URL for the wrong chain is a configuration error: say so before listening, where it answers in time.
  try {
    await Promise.all(checks)
  } catch (error) {
    // The caller closes the store on this error: stop() waits for the restore reading it, so it is not cut mid-query.
    await across?.stop()
    throw error
  }
  if (restoring !== undefined) await Promise.race([restoring, sleep(Math.max(0, deadlineMs - Date.now()))])
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
      // Cut to scheme and host, as RPC URLs are: a proxy in front of Across may carry a key in its path or query.
      across: config.market.acrossApiUrl === undefined ? 'off' : redactUrls(config.market.acrossApiUrl),
    },
    `market: live on ${market.liveChains.join(', ')}; the snapshot of ${files.market.asOf} prices the other chains${status.isDegraded ? '; degraded: routes needing stale figures are not offered' : ''}${isRead ? '' : `; the first read took longer than ${firstReadWaitMs} ms: routes on the chains not read yet answer 503 until it lands`}`,
  )
  return market
}

/**
 * Each Across lane's suggested fees, read from SWAPEAZI_ACROSS_API_URL (Across's public API by default) with the live
 * market; undefined with `off`, and Across lanes keep the snapshot's fees.
 */
function acrossFromConfig(
  config: Config,
  files: CatalogueFiles,
  log: Logger,
  keeper: AcrossFeesKeeper | undefined,
): AcrossLaneFees | undefined {
  const url = config.market.acrossApiUrl
  if (url === undefined) return undefined
  const { acrossRequestsPerSecond, acrossWarmingRequestsPerSecond, acrossRefreshMs } = config.market
  const lanes = acrossLanesOf(compileCatalogue(files))
  const refused = acrossRefreshError(lanes.length, acrossRequestsPerSecond, acrossRefreshMs)
  if (refused !== undefined) throw new Error(refused)
  return createAcrossLaneFees({
    client: createAcrossFeesClient({
      url,
      maxRequestsPerSecond: acrossRequestsPerSecond,
      warmingRequestsPerSecond: acrossWarmingRequestsPerSecond,
    }),
    lanes,
    apiUrl: url,
    clock: Date.now,
    log,
    refreshMs: acrossRefreshMs,
    ...(keeper === undefined ? {} : { keeper }),
  })
}

/**
 * A configuration error (one line, as config.ts words them) when refreshes `refreshMs` apart at `requestsPerSecond`
 * could leave a lane unread past its maximum age while Across answers (acrossLongestReadIntervalMs), saying what to
 * change; undefined when they cannot. Checked here, not in config.ts: it depends on the catalogue's lane count.
 */
export function acrossRefreshError(laneCount: number, requestsPerSecond: number, refreshMs: number): string | undefined {
  const intervalMs = acrossLongestReadIntervalMs(laneCount, requestsPerSecond, refreshMs)
  if (intervalMs <= ACROSS_MAX_AGE_MS) return undefined
  const durationMs = acrossRefreshDurationMs(laneCount, requestsPerSecond)
  const sec = (ms: number): string => String(Math.ceil(ms / 1000))
  const largestRefreshMs = Math.floor((ACROSS_MAX_AGE_MS - durationMs) / 1000) * 1000
  // Refreshes back to back (a refresh longer than the interval) still leave a lane two refreshes between reads.
  const remedy =
    2 * durationMs <= ACROSS_MAX_AGE_MS
      ? `set SWAPEAZI_ACROSS_REFRESH_MS to at most ${largestRefreshMs}, or raise SWAPEAZI_ACROSS_REQUESTS_PER_SEC`
      : 'raise SWAPEAZI_ACROSS_REQUESTS_PER_SEC'
  return `invalid configuration: SWAPEAZI_ACROSS_REFRESH_MS, SWAPEAZI_ACROSS_REQUESTS_PER_SEC: a refresh of the ${laneCount} Across lanes at ${requestsPerSecond} request${requestsPerSecond === 1 ? '' : 's'} a second takes up to ${sec(durationMs)} s (two requests a lane, a quarter more for retries), so with refreshes ${sec(refreshMs)} s apart a lane could go ${sec(intervalMs)} s between reads, past its ${sec(ACROSS_MAX_AGE_MS)} s maximum age; ${remedy}`
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref()
  })
