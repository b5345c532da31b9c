import { DataDirHeldError } from '../store/dataDirLock.ts'
import type { Writable } from 'node:stream'
import { chainIdChecksFromConfig } from '../app/chainIdCheck.ts'
import { createLogger } from '../app/createLogger.ts'
import { FIRST_READ_WAIT_MS } from '../app/marketFromConfig.ts'
import { settlerFromConfig } from '../app/settlerFromConfig.ts'
import { startRelaying } from '../app/startRelaying.ts'
import { trackerFromConfig } from '../app/trackerFromConfig.ts'
import { loadCatalogue } from '../catalogue/loadCatalogue.ts'
import type { Config } from '../config.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { openStore } from '../store/openStore.ts'
import { routerDeployment } from '../tx/routerDeployment.ts'

export type TrackIo = {
  /** The tracker's pino logs. */
  stderr: Writable
  /** Tests: stops the tracker as SIGTERM does. */
  stop?: AbortSignal
}

/**
 * `swapeazi track`: the swap lifecycle apart from `serve` (SWAPEAZI_TRACKER=off there), on the configured store:
 * PostgreSQL shared with the replicas, or an embedded store no `serve` holds. It runs what `serve` runs beside its
 * tracker too (startRelaying): the CCTP relayer and LayerZero compose retries with SWAPEAZI_RELAYER_PRIVATE_KEY, the
 * reconciler of `onchain` payments; replicas doing the same share the work through leases. Like `serve`, it first
 * checks each URL's chain id (within FIRST_READ_WAIT_MS): a URL of another chain rejects with one line. Runs until
 * SIGINT or SIGTERM, then finishes its poll and the relays and compose retries under way (each submission to its
 * receipt, or its wait's end), gives up its leases and closes the store.
 */
export async function runTrack(config: Config, io: TrackIo): Promise<void> {
  if (Object.keys(config.market.rpcUrls).length === 0)
    throw new Error('nothing to track: SWAPEAZI_RPC_URLS names no chain; set it to the JSON-RPC URL of each chain to follow')
  const log = createLogger(config.logLevel, io.stderr)
  const { catalogue, files } = loadCatalogue(config.manifestDir)
  // One chain-id check per RPC URL, shared by the tracker's clients and the relayer's, as serve shares its own.
  const chainIds = chainIdChecksFromConfig(config, log)
  // A URL for the wrong chain is a configuration error: said before anything starts, where it answers in time (one
  // that does not is warned of, and checked before the chain's first use).
  const deadlineMs = Date.now() + FIRST_READ_WAIT_MS
  await Promise.all(Object.values(chainIds).map((check) => check.atStart(deadlineMs)))
  const store = await openStore(config.store).catch((error: unknown) => {
    // The holder tracks already if it is a service: a second tracker has nothing to add, on this store or over HTTP.
    if (!(error instanceof DataDirHeldError) || !/\bserve\b/.test(error.holder.command)) throw error
    throw new DataDirHeldError(
      error.dataDir,
      error.holder,
      'leave the tracking to it: swapeazi serve runs this tracker itself (unless SWAPEAZI_TRACKER=off), and a tracker has no client mode over SWAPEAZI_BASE_URL',
    )
  })
  const routerOn = (chain: ChainCode) => routerDeployment(config.router.byChain[chain] ?? config.router.address)
  let relaying: ReturnType<typeof startRelaying> | undefined
  let tracker: ReturnType<typeof trackerFromConfig>
  try {
    relaying = startRelaying(config, {
      log,
      settler: settlerFromConfig(config.payments.settlement),
      store,
      clock: Date.now,
      files,
      routerOn,
      catalogue,
      chainIds,
    })
    tracker = trackerFromConfig(config, {
      store,
      catalogue: () => catalogue,
      routerOn,
      clock: Date.now,
      log,
      hooks: relaying.hooks,
      chainIds,
    })
  } catch (error) {
    await relaying?.stop()
    await store.sql.close()
    throw error
  }
  try {
    tracker?.start()
    const signal = await stopped(io.stop)
    log.info({ event: 'tracker_stopping', signal }, 'tracker: finishing the poll under way')
  } finally {
    await tracker?.stop()
    await relaying.stop()
    await store.sql.close()
  }
  log.info({ event: 'stopped' }, 'stopped: store closed')
}

/** The first SIGTERM or SIGINT (or the test's stop), listened for only while the tracker runs. */
function stopped(stop: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve) => {
    const done = (signal: string) => (): void => {
      process.off('SIGTERM', onTerm)
      process.off('SIGINT', onInt)
      stop?.removeEventListener('abort', onStop)
      resolve(signal)
    }
    const onTerm = done('SIGTERM')
    const onInt = done('SIGINT')
    const onStop = done('stop')
    process.on('SIGTERM', onTerm)
    process.on('SIGINT', onInt)
    stop?.addEventListener('abort', onStop, { once: true })
    if (stop?.aborted) onStop()
  })
}
