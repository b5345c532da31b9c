import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { type Address, type Chain, createPublicClient, createWalletClient, defineChain, getAddress, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Config } from '../config.ts'
import { createAttestationClient } from '../lifecycle/attestationClient.ts'
import { type CctpDestination, type CctpRelayer, createCctpRelayer, type RelayReceipt, type RelayRecord } from '../lifecycle/cctpRelayer.ts'
import { type PaymentReconciler, startPaymentReconciler } from '../lifecycle/reconcilePayments.ts'
import { checkRelayerBalances } from '../lifecycle/relayerBalance.ts'
import { createRelayScheduler, type SourceFinalRecord } from '../lifecycle/relayPendingSwaps.ts'
import { createLzComposeRetrier, type LzComposeRetrier, type LzRetryDestination } from '../lifecycle/retryLzComposes.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { type ChainIdChecks, checkedRpcTransport } from './chainIdCheck.ts'
import type { ServerDeps } from './createServer.ts'

/** What the relayer, the compose retrier and the reconciler use of the app: `serve` passes its deps, `track` builds these. */
export type RelayingDeps = Pick<ServerDeps, 'log' | 'settler' | 'store' | 'clock' | 'files' | 'routerOn' | 'catalogue'> & {
  /**
   * The process's chain-id checks, one per URL, shared with every other client of the process (serve's live market,
   * pre-flight and tracker; track's tracker), so each URL is asked once and a mismatch logged once.
   */
  chainIds: ChainIdChecks
  /** Tests: how often the relay sweep, the compose retries and the balance checks run. Default 60 000. */
  sweepIntervalMs?: number
  /**
   * How long stop() waits for a CCTP relay or a LayerZero compose retry under way (its receipt may take up to 2
   * minutes) before it stops waiting. Default STOP_GRACE_MS. Not within serve's shutdown grace but after it: serve
   * first waits up to SWAPEAZI_SHUTDOWN_GRACE_MS (10 s) for the requests in flight, then calls stop(), so the two add
   * up (10 + 5 = 15 s before the store closes; operations.md gives the SIGKILL timeout for it).
   */
  stopGraceMs?: number
}

export type Relaying = {
  /**
   * The tracker's hook (trackerFromConfig's `hooks`): a swap whose source is final has its CCTP messages relayed in
   * the background, so the tracker's poll never waits for Circle's attestation. Absent when the relayer is off.
   */
  hooks: { onSourceFinal?: (record: RelayRecord | SourceFinalRecord, receipt: RelayReceipt) => void }
  /**
   * Stops the reconciler, the relays and the compose retries, and resolves once those in progress have ended (a
   * submission under way is waited for; a message or compose not yet submitted waits for a retry), so the store may
   * be closed then. Nothing is sent once stop() is called. A CCTP relay or compose retry under way is waited for at
   * most `stopGraceMs`: past it, stop() resolves with its outcome unknown (logged, `cctp_relay_stop_cut`,
   * `lz_compose_stop_cut`).
   */
  stop(): Promise<void>
}

/**
 * Starts what `swapeazi serve` and `swapeazi track` run beside the tracker (issue 18 items 4 and 5): the CCTP relayer when
 * SWAPEAZI_RELAYER_PRIVATE_KEY is set and a destination chain of ours has an RPC in SWAPEAZI_RPC_URLS, and the
 * reconciler of `onchain` x402 payments when that settler is configured. Each logs whether it is on and why. Every
 * client reads and sends only once its RPC has answered the chain's own id: the key never signs for, nor sends to, an
 * RPC of another chain (logged once, `rpc_chain_mismatch`, and the chain is left out of the balance checks).
 */
export function startRelaying(config: Config, deps: RelayingDeps): Relaying {
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  const log = deps.log.child({ component: 'relaying' })
  const relayer = relayerFromConfig(config, deps, holder)
  const reconciler: PaymentReconciler | undefined =
    deps.settler.mode === 'onchain' && deps.settler.reconcile !== undefined
      ? startPaymentReconciler({
          settler: deps.settler,
          store: deps.store,
          leases: deps.store.lifecycle.leases,
          holder,
          clock: deps.clock,
          log,
        })
      : undefined
  log.info({ event: 'payment_reconciler', available: reconciler !== undefined }, `payment reconciler ${reconciler ? 'on' : 'off'}`)

  const lzRetrier = lzRetrierFromConfig(config, deps, `${holder}:lz`)
  if (relayer === undefined && lzRetrier === undefined)
    return {
      hooks: {},
      stop: async () => {
        await reconciler?.stop()
      },
    }
  const clients: Record<string, ReturnType<typeof createPublicClient>> = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][])
    clients[chain] = createPublicClient({ transport: checkedRpcTransport(deps.chainIds, chain, url) })
  const scheduler =
    relayer === undefined
      ? undefined
      : createRelayScheduler({ relayer, lifecycle: deps.store.lifecycle, leases: deps.store.lifecycle.leases, holder, clients, log })
  // The hook is called once per swap: the sweep relays what a restart, a failure or a dead replica left behind, and
  // retries the LayerZero composes that failed.
  // And the key's balance on every chain it sends on: an empty key leaves deliveries pending.
  const relayerAccount = config.relayer.privateKey === undefined ? undefined : privateKeyToAccount(config.relayer.privateKey as Hex).address
  const checkBalances = (): void => {
    if (relayerAccount === undefined) return
    // A chain whose RPC serves another chain is not used: its check said so once.
    const usable = Object.fromEntries(
      Object.entries(clients).filter(([chain]) => deps.chainIds[chain as ChainCode]?.isMismatched() !== true),
    )
    checkRelayerBalances(usable, relayerAccount, log).catch((error: unknown) =>
      log.warn({ event: 'relayer_balance_check_failed', err: error }, 'relayer_balance_check_failed'),
    )
  }
  checkBalances()
  const stopGraceMs = deps.stopGraceMs ?? STOP_GRACE_MS
  const sweeping = setInterval(() => {
    scheduler?.sweep().catch((error: unknown) => log.warn({ event: 'cctp_sweep_failed', err: error }, 'cctp_sweep_failed'))
    lzRetrier?.sweep().catch((error: unknown) => log.warn({ event: 'lz_compose_sweep_failed', err: error }, 'lz_compose_sweep_failed'))
    checkBalances()
  }, deps.sweepIntervalMs ?? RELAY_SWEEP_INTERVAL_MS)
  sweeping.unref()
  return {
    hooks: scheduler === undefined ? {} : { onSourceFinal: (record, receipt) => scheduler.schedule(record, receipt) },
    async stop() {
      clearInterval(sweeping)
      await reconciler?.stop()
      // A relay or compose retry mid-submission goes on to its receipt: waited for before the store closes, but only
      // for a grace of its own (its receipt may take 2 minutes, and the process would be killed first). It comes after
      // serve's request grace, not within it, so a stop can take both (10 + 5 s). Both relay and retry are waited for
      // at once, so stop() takes at most one grace.
      await Promise.all([
        relayer === undefined
          ? undefined
          : endsWithin(
              (async () => {
                await relayer.close()
                await scheduler?.idle()
              })(),
              stopGraceMs,
            ).then((ended) => {
              if (!ended)
                log.warn(
                  { event: 'cctp_relay_stop_cut', grace_ms: stopGraceMs },
                  `stop: the CCTP relay under way did not end within ${stopGraceMs} ms and is no longer waited for: its outcome is unknown (it may still be mined; nothing more is sent for it; its swap stays pending without a delivery, and the sweep of the next start relays the message again unless it was received by then)`,
                )
            }),
        lzRetrier === undefined
          ? undefined
          : endsWithin(lzRetrier.close(), stopGraceMs).then((ended) => {
              if (!ended)
                log.warn(
                  { event: 'lz_compose_stop_cut', grace_ms: stopGraceMs },
                  `stop: the LayerZero compose retry under way did not end within ${stopGraceMs} ms and is no longer waited for: its outcome is unknown (it may still be mined; a compose still queued is retried by a later sweep)`,
                )
            }),
      ])
    },
  }
}

/**
 * The retrier of failed LayerZero composes to our executor, on every chain of SWAPEAZI_RPC_URLS where a LayerZero
 * bridge of the catalogue delivers, from the relayer key; undefined when the key is not set.
 */
function lzRetrierFromConfig(config: Config, deps: RelayingDeps, holder: string): LzComposeRetrier | undefined {
  const { privateKey } = config.relayer
  if (privateKey === undefined) return undefined
  const account = privateKeyToAccount(privateKey as Hex)
  const endpoints = new Map<string, Address>()
  for (const bridge of deps.files.bridges.bridges.filter((entry) => entry.protocol === 'stargate-v2' || entry.protocol === 'usdt0-oft'))
    for (const endpoint of bridge.endpoints)
      if (endpoint.deliveredBy !== undefined) endpoints.set(endpoint.chain, getAddress(endpoint.deliveredBy))
  const destinations: LzRetryDestination[] = []
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][]) {
    const endpoint = endpoints.get(chain)
    const viemChain = chainOf(deps, chain, url)
    if (endpoint === undefined || viemChain === undefined) continue
    const transport = checkedRpcTransport(deps.chainIds, chain, url)
    destinations.push({
      chain,
      endpoint,
      executor: deps.routerOn(chain).executor,
      publicClient: createPublicClient({ chain: viemChain, transport }),
      walletClient: createWalletClient({ chain: viemChain, transport, account }),
    })
  }
  if (destinations.length === 0) return undefined
  deps.log.info(
    { event: 'lz_compose_retrier', available: true, chains: destinations.map((entry) => entry.chain) },
    `LayerZero compose retries on for ${destinations.map((entry) => entry.chain).join(', ')}`,
  )
  return createLzComposeRetrier({
    destinations,
    leases: deps.store.lifecycle.leases,
    submissions: deps.store.lifecycle.submissions,
    lifecycle: deps.store.lifecycle,
    holder,
    log: deps.log.child({ component: 'lz_compose' }),
  })
}

/** A viem chain for the wallet client: the catalogue's chain id, reached through the configured RPC only. */
function chainOf(deps: RelayingDeps, chain: ChainCode, url: string): Chain | undefined {
  const chainId = deps.catalogue.chains.get(chain)?.chainId
  if (chainId === undefined) return undefined
  return defineChain({
    id: chainId,
    name: chain,
    nativeCurrency: { name: 'native', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  })
}

/**
 * How long stop() waits for a relay or compose retry under way by default. serve calls stop() after its own shutdown
 * grace (SWAPEAZI_SHUTDOWN_GRACE_MS, 10 s, for the requests in flight), so a stop may take both: 10 + 5 = 15 s.
 */
const STOP_GRACE_MS = 5_000

/**
 * True once `closing` resolves within `graceMs` (a rejection within it is stop()'s); false past it, when whatever it
 * waits for is left running with its outcome unknown (a relay's message may still be received; a compose, if still
 * queued, is retried by a later sweep, and a duplicate only reverts).
 */
async function endsWithin(closing: Promise<unknown>, graceMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const cut = new Promise<'cut'>((resolve) => {
    timer = setTimeout(() => resolve('cut'), graceMs)
  })
  const closed = closing.then(() => 'closed' as const)
  // Past the grace, a later rejection is no one's to handle (and would otherwise end the process unhandled).
  closed.catch(() => {})
  try {
    return (await Promise.race([closed, cut])) === 'closed'
  } finally {
    clearTimeout(timer)
  }
}

/** How often the pending swaps are swept for a CCTP message still to relay. */
const RELAY_SWEEP_INTERVAL_MS = 60_000

/** The relayer over every chain of SWAPEAZI_RPC_URLS where a CCTP bridge of the catalogue delivers; undefined when off. */
function relayerFromConfig(config: Config, deps: RelayingDeps, holder: string): CctpRelayer | undefined {
  const log = deps.log.child({ component: 'cctp_relayer' })
  const { privateKey, attestationUrl } = config.relayer
  const off = (reason: string): undefined => {
    log.info({ event: 'cctp_relayer', available: false, reason }, `CCTP relayer off: ${reason}`)
    return undefined
  }
  if (privateKey === undefined) return off('SWAPEAZI_RELAYER_PRIVATE_KEY is not set')
  const account = privateKeyToAccount(privateKey as Hex)
  const sourceDomains: Record<string, number> = {}
  const sourceExecutors: Record<string, Address> = {}
  const transmitters = new Map<string, { domain: number; transmitter: Address }>()
  for (const bridge of deps.files.bridges.bridges.filter((entry) => entry.protocol === 'cctp-v2'))
    for (const endpoint of bridge.endpoints) {
      if (endpoint.domain === undefined) continue
      sourceDomains[endpoint.chain] = endpoint.domain
      sourceExecutors[endpoint.chain] = deps.routerOn(endpoint.chain).executor
      if (endpoint.deliveredBy !== undefined)
        transmitters.set(endpoint.chain, { domain: endpoint.domain, transmitter: getAddress(endpoint.deliveredBy) })
    }
  const destinations: CctpDestination[] = []
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][]) {
    const delivery = transmitters.get(chain)
    const viemChain = chainOf(deps, chain, url)
    if (delivery === undefined || viemChain === undefined) continue
    const transport = checkedRpcTransport(deps.chainIds, chain, url)
    destinations.push({
      chain,
      domain: delivery.domain,
      executor: deps.routerOn(chain).executor,
      transmitter: delivery.transmitter,
      publicClient: createPublicClient({ chain: viemChain, transport }),
      walletClient: createWalletClient({ chain: viemChain, transport, account }),
    })
  }
  if (destinations.length === 0) return off('no chain of SWAPEAZI_RPC_URLS is a CCTP destination of the catalogue')
  log.info(
    {
      event: 'cctp_relayer',
      available: true,
      relayer: account.address,
      chains: destinations.map((entry) => entry.chain),
      attestation_url: attestationUrl,
    },
    `CCTP relayer on for ${destinations.map((entry) => entry.chain).join(', ')} from ${account.address}`,
  )
  const attestations = createAttestationClient({ url: attestationUrl })
  const relayer = createCctpRelayer({
    attestations,
    sourceDomains,
    sourceExecutors,
    destinations,
    leases: deps.store.lifecycle.leases,
    submissions: deps.store.lifecycle.submissions,
    holder,
    log,
    clock: deps.clock,
  })
  return {
    ...relayer,
    async close() {
      await relayer.close()
      await attestations.close()
    },
  }
}
