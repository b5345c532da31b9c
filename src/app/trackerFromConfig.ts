import type { Logger } from 'pino'
import { createPublicClient } from 'viem'
import type { Config } from '../config.ts'
import { blockTimesOf } from './blockTimesOf.ts'
import { type ChainIdChecks, checkedRpcTransport, quietOnMismatch } from './chainIdCheck.ts'
import type { Catalogue } from '../engine/index.ts'
import { createTracker, type CreateTrackerParameters, type Tracker } from '../lifecycle/createTracker.ts'
import { observeCompletedSwap } from '../lifecycle/observeSwap.ts'
import type { TrackerClient } from '../lifecycle/trackerContext.ts'
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
  /**
   * The process's chain-id checks, one per URL, shared with every other client of the process (serve's live market,
   * pre-flight and relayer; track's relayer), so each URL is asked once and a mismatch logged once.
   */
  chainIds: ChainIdChecks
}

/**
 * The swap tracker over a viem client per chain of SWAPEAZI_RPC_URLS (the chains the live market reads), with the
 * configured poll interval and confirmation depths; undefined when no chain has an RPC. It is built even when
 * SWAPEAZI_TRACKER is off (its caller then does not start it). Each client reads only once its RPC has answered the
 * chain's own id: an RPC of another chain is never tracked from (logged once, `rpc_chain_mismatch`; the polls that
 * then fail on that chain log at debug).
 */
export function trackerFromConfig(config: Config, deps: TrackerFromConfigDeps): Tracker | undefined {
  const { chainIds } = deps
  const clients: Partial<Record<ChainCode, TrackerClient>> = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][])
    clients[chain] = createPublicClient({ transport: checkedRpcTransport(chainIds, chain, url) })
  if (Object.keys(clients).length === 0) return undefined
  const blockTimeSec = blockTimesOf(clients)
  return createTracker({
    store: deps.store,
    catalogue: deps.catalogue,
    routerOn: deps.routerOn,
    clients,
    // A chain whose RPC serves another chain is neither scanned nor followed here: its leases go to replicas that can.
    isChainUsable: (chain) => deps.chainIds[chain]?.isMismatched() !== true,
    confirmations: config.tracker.confirmations,
    pollMs: config.tracker.pollMs,
    clock: deps.clock,
    log: quietOnMismatch(deps.log.child({ component: 'tracker' })),
    // A finished swap is an observation of its corridor at once (issue 18 item 7), wherever the tracker runs.
    onFinished: (record) => observeCompletedSwap({ store: deps.store, catalogue: deps.catalogue(), blockTimeSec }, record),
    ...deps.hooks,
  })
}
