import type { Logger } from 'pino'
import { createPublicClient, http } from 'viem'
import type { Config } from '../config.ts'
import { blockTimesOf } from './blockTimesOf.ts'
import type { Catalogue } from '../engine/index.ts'
import { createTracker, type CreateTrackerParameters, type Tracker } from '../lifecycle/createTracker.ts'
import { observeCompletedSwap } from '../lifecycle/observeSwap.ts'
import type { TrackerClient } from '../lifecycle/trackerContext.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS } from '../market/createChainReader.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { Store } from '../store/createStore.ts'
import type { RouterDeployment } from '../tx/routerDeployment.ts'

export type TrackerFromConfigDeps = {
  store: Store
  catalogue: () => Catalogue
  routerOn: (chain: ChainCode) => RouterDeployment
  clock: () => number
  log: Logger
  /** The relayer's hook where it is wired; onFinished defaults to making each finished swap an observation. */
  hooks?: Pick<CreateTrackerParameters, 'onSourceFinal' | 'onFinished'>
}

/**
 * The swap tracker over a viem client per chain of SWAPEAZI_RPC_URLS (the chains the live market reads), with the
 * configured poll interval and confirmation depths; undefined when no chain has an RPC. `serve` also leaves it out
 * when SWAPEAZI_TRACKER is off (its caller checks `config.tracker.enabled`).
 */
export function trackerFromConfig(config: Config, deps: TrackerFromConfigDeps): Tracker | undefined {
  const clients: Partial<Record<ChainCode, TrackerClient>> = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][])
    clients[chain] = createPublicClient({ transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS) })
  if (Object.keys(clients).length === 0) return undefined
  const blockTimeSec = blockTimesOf(clients)
  return createTracker({
    store: deps.store,
    catalogue: deps.catalogue,
    routerOn: deps.routerOn,
    clients,
    confirmations: config.tracker.confirmations,
    pollMs: config.tracker.pollMs,
    clock: deps.clock,
    log: deps.log.child({ component: 'tracker' }),
    // A finished swap is an observation of its corridor at once (issue 18 item 7), wherever the tracker runs.
    onFinished: (record) => observeCompletedSwap({ store: deps.store, catalogue: deps.catalogue(), blockTimeSec }, record),
    ...deps.hooks,
  })
}
