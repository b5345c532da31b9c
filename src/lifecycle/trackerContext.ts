import type { Logger } from 'pino'
import type { PublicClient } from 'viem'
import type { Catalogue } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { LifecycleRecord, Store, TrackedSwap } from '../store/createStore.ts'
import type { RouterDeployment } from '../tx/routerDeployment.ts'

/** The chain reads the tracker makes: a viem public client fits. */
export type TrackerClient = Pick<
  PublicClient,
  'getBlockNumber' | 'getBlock' | 'getLogs' | 'getTransactionReceipt' | 'getTransaction' | 'getTransactionCount' | 'call'
>

/** A source transaction's receipt as the relayer hook receives it. */
export type SourceReceipt = Awaited<ReturnType<TrackerClient['getTransactionReceipt']>>

/** What every part of the tracker reads and writes through. */
export type TrackerContext = {
  store: Pick<Store, 'lifecycle'>
  /** The catalogue now (the live market replaces it): token addresses and decimals, block times. */
  catalogue: () => Catalogue
  routerOn: (chain: ChainCode) => RouterDeployment
  /** A client per chain with an RPC: only those chains are followed. */
  clients: Partial<Record<ChainCode, TrackerClient>>
  /**
   * False for a chain whose RPC was found serving another chain (src/app/chainIdCheck.ts): nothing of it is read, and
   * its leases are left to replicas that can read it. Absent: every chain with a client is usable.
   */
  isChainUsable?: (chain: ChainCode) => boolean
  /** Blocks behind the head before a block is treated as final, per chain. */
  confirmations: (chain: ChainCode) => number
  /** The most blocks one eth_getLogs asks for. */
  maxBlockRange: bigint
  clock: () => number
  log: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>
  /** Called once a source leg is final (pending), by the replica that recorded it: the CCTP relayer plugs in here. */
  onSourceFinal?: (record: LifecycleRecord, receipt: SourceReceipt) => unknown
  /** Called once a swap reaches done, failed or expired, by the replica that recorded it (intelligence plugs in here). */
  onFinished?: (record: LifecycleRecord, tracked: TrackedSwap) => unknown
}

/** Runs a hook; a hook's failure is logged, never the tracker's. */
export async function runHook(context: TrackerContext, name: string, ref: string, hook: () => unknown): Promise<void> {
  try {
    await hook()
  } catch (error) {
    context.log.error({ event: 'tracker_hook_failed', hook: name, ref, err: error }, 'tracker_hook_failed')
  }
}

/** The client of `chain`, or an error naming it (callers check `clients` first). */
export function clientOf(context: TrackerContext, chain: ChainCode): TrackerClient {
  const client = context.clients[chain]
  if (client === undefined) throw new Error(`no RPC for ${chain}`)
  return client
}
