import { createServer as createHttpServer, type Server } from 'node:http'
import { type AddressInfo, Server as NetServer } from 'node:net'
import type { Writable } from 'node:stream'
import { getRequestListener } from '@hono/node-server'
import type { Logger } from 'pino'
import { formatUnits } from 'viem'
import { buildAppDeps } from '../app/buildAppDeps.ts'
import { extendDeps } from '../app/extendDeps.ts'
import { chainIdChecksFromConfig } from '../app/chainIdCheck.ts'
import { createLogger } from '../app/createLogger.ts'
import { createServer } from '../app/createServer.ts'
import { type OperatorEndpoint, startOperatorEndpoint } from '../app/startOperatorEndpoint.ts'
import { startRelaying } from '../app/startRelaying.ts'
import { trackerFromConfig } from '../app/trackerFromConfig.ts'
import type { Tracker } from '../lifecycle/createTracker.ts'
import { DEFAULT_ROUTER_ADDRESS } from '../contracts/deployRouter.ts'
import type { Config } from '../config.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { PATH_USD_DECIMALS } from '../payments/mpp/tempoConstants.ts'
import { deferredTracking } from '../service/swapTracking.ts'
import { inertChainsOf } from '../service/inertRouter.ts'
import { answerClientError, answerRequestError } from '../http/answerClientError.ts'
import { type ConnectionGuards, guardConnections } from '../http/guardConnections.ts'

/** How often a draining server closes the keep-alive connections that have gone idle since the last look. */
const IDLE_SWEEP_MS = 100
/** The longest the store waits, at shutdown, for handlers whose connections are gone. */
const HANDLER_FINISH_MS = 120_000

export type ServeIo = {
  /** The service's pino logs. */
  stderr: Writable
  /** Tests: stops the service as SIGTERM does, without signalling the test's own process. */
  stop?: AbortSignal
}

/**
 * Starts the HTTP API; resolves once it has stopped on SIGINT or SIGTERM: it stops accepting connections, lets the
 * requests in flight finish (within SWAPEAZI_SHUTDOWN_GRACE_MS), and only then closes its store, so a paid request
 * that was answered is also recorded. A port that cannot be had rejects with one line naming the variable to change.
 */
export async function runServe(config: Config, io: ServeIo): Promise<void> {
  const log = createLogger(config.logLevel, io.stderr)
  // One chain-id check per RPC URL, shared by every client made from it: the live market's, the pre-flight's, the
  // tracker's and the relayer's.
  const chainIds = chainIdChecksFromConfig(config, log)
  const deps = await buildAppDeps(config, log, { chainIds })
  deps.log.info(
    { event: 'payments', settlement: deps.settler.mode, pay_to: deps.payTo, store: deps.store.sql.describe },
    `x402 payments settle in ${deps.settler.mode} mode; store: ${deps.store.sql.describe}`,
  )
  deps.log.info(
    deps.mpp === undefined
      ? { event: 'mpp', available: false }
      : { event: 'mpp', available: true, realm: deps.mpp.realm, chain_id: deps.mpp.chainId, pay_to: deps.mpp.recipient },
    deps.mpp === undefined
      ? 'MPP is off on /api/mpp/swap (SWAPEAZI_TEMPO_RPC_URL is not set): it takes x402 only'
      : `MPP on /api/mpp/swap: tempo charge of ${formatUnits(deps.mpp.amountAtomic, PATH_USD_DECIMALS)} pathUSD on chain ${deps.mpp.chainId}, realm ${deps.mpp.realm}`,
  )
  if (config.payments.isPayToDefault)
    deps.log.warn(
      { event: 'pay_to_default', pay_to: deps.payTo },
      'SWAPEAZI_PAY_TO is not set: x402 payments name the inert 0x…dEaD address and are only recorded on the ledger; set your Base wallet',
    )
  const inertChains = inertChainsOf(deps.catalogue, deps.routerOn)
  if (inertChains.length > 0)
    deps.log.warn(
      { event: 'router_default_inert', router: DEFAULT_ROUTER_ADDRESS, chains: inertChains },
      config.router.isDefault
        ? 'SWAPEAZI_ROUTER_ADDRESS is not set: swap transactions target the inert default router; deploy your own (swapeazi router deploy) and set it'
        : `No router is set for ${inertChains.join(', ')} (SWAPEAZI_ROUTER_ADDRESSES names none there and SWAPEAZI_ROUTER_ADDRESS is not set): swaps from those chains, and swaps with a swap on arrival there, target the inert default router, and paid swaps that depend on them are refused; deploy yours there and set it`,
    )
  // The status endpoints read the tracker built below once the server listens (issue 18 item 6).
  let tracker: Tracker | undefined
  // Which chains are followed is the configuration's (an RPC for the chain): the tracker follows each once built, so a
  // status read before then is not told its swap is unfollowed.
  // extendDeps, not a spread: deps.catalogue is the live market's getter, which a spread would freeze at its value now.
  let server: Server
  let guards: ConnectionGuards
  // The app is built once the port is bound (its public URL may name it): no request is read before that, since
  // nothing between the bind and the build gives the event loop a turn.
  let appFetch: Parameters<typeof getRequestListener>[0] | undefined
  // Handlers run on after their connection is gone (a client that left, or one cut at the grace): the store closes
  // only once they have finished, so a payment settled in one is recorded.
  const handlers = countHandlers((request, env) => {
    if (appFetch === undefined) throw new Error('a request was read before the app was built')
    return appFetch(request, env)
  })
  // The embedded store's owner runs operator commands on its live store (issue 15 item 1).
  let operator: OperatorEndpoint | undefined
  try {
    operator = await startOperatorEndpoint(deps)
    ;({ server, guards } = await listen(handlers.fetch, config, deps.log))
  } catch (error) {
    await operator?.close()
    await deps.market?.stop()
    await deps.store.sql.close()
    throw error
  }
  // Once listening, a server error (too many open files to accept, say) is logged; it does not end the process.
  server.on('error', (error) => deps.log.error({ event: 'server_error', err: error }, 'server_error'))
  const inFlight = countRequestsInFlight(server)
  const info = server.address() as AddressInfo
  // SWAPEAZI_PORT=0 lets the system pick the port: the URL the service names itself by (x402 resources, OpenAPI
  // servers, the portal's origin) is the one it listens on, not port 0.
  const publicUrl = config.isPublicUrlDefault && config.port === 0 ? config.publicUrl.replace(/:0$/, `:${info.port}`) : config.publicUrl
  appFetch = createServer(
    extendDeps(deps, {
      publicUrl,
      tracking: deferredTracking({
        chains: Object.keys(config.market.rpcUrls) as ChainCode[],
        isUsable: (chain) => chainIds[chain]?.isMismatched() !== true,
        current: () => tracker,
      }),
    }),
  ).fetch
  deps.store.sql.dataDirLock?.publish({ url: reachableUrl(info) })
  deps.log.info(
    { event: 'listening', url: `http://${info.address}:${info.port}`, public_url: publicUrl, snapshot_as_of: deps.catalogue.asOf },
    'listening',
  )

  // The swap lifecycle (issue 18): the CCTP relayer and the payment reconciler, and the tracker (on by default where an
  // RPC is configured) whose final sources the relayer relays and whose finished swaps become observations; all are
  // stopped before the store closes.
  // Built wherever an RPC is configured, so statuses say which chains are followed and hints are checked even when the
  // tracker runs apart (SWAPEAZI_TRACKER=off, swapeazi track); it polls only when on.
  const relaying = startRelaying(config, extendDeps(deps, { chainIds }))
  tracker = trackerFromConfig(
    config,
    extendDeps(deps, {
      chainIds,
      catalogue: () => deps.catalogue,
      hooks: relaying.hooks,
    }),
  )
  if (config.tracker.enabled) tracker?.start()

  const stopping = stopRequests(io.stop)
  const signal = await stopping.first
  deps.log.info({ event: 'shutdown', signal, in_flight: inFlight() }, 'shutdown: no new connections; finishing the requests in flight')
  // Answered now, a keep-alive client would send its next request on a connection about to close: each answer says so.
  guards.closeAfterAnswers()
  const cut = await drain(server, config.server.shutdownGraceMs, stopping.again, inFlight)
  if (cut > 0)
    deps.log.warn(
      { event: 'shutdown_cut', in_flight: cut, grace_ms: config.server.shutdownGraceMs },
      'shutdown: connections with requests still in flight were closed, their answers lost (their work still finishes before the store closes); raise SWAPEAZI_SHUTDOWN_GRACE_MS to give them longer',
    )
  await finishHandlers(handlers, deps.log)
  stopping.dispose()
  await tracker?.stop()
  await relaying.stop()
  await operator?.close()
  // The market last writes the Across lanes' reads to the store: stopped, and those writes ended, before it closes.
  await deps.market?.stop()
  await deps.store.sql.close()
  deps.log.info({ event: 'stopped', signal }, 'stopped: store closed')
}

/** Where a process on this machine reaches the listening server (for the lock file: `swapeazi mcp`'s advice). */
function reachableUrl(info: AddressInfo): string {
  const host = info.address === '0.0.0.0' ? '127.0.0.1' : info.address === '::' ? '::1' : info.address
  return `http://${host.includes(':') ? `[${host}]` : host}:${info.port}`
}

/**
 * Binds the configured host and port with the slow-client timeouts. Node checks those timeouts on an interval
 * (30 s by default, so a 10 s header timeout could take 40 s to fire): the interval here is at most a second.
 */
function listen(
  fetch: Parameters<typeof getRequestListener>[0],
  config: Config,
  log: Logger,
): Promise<{ server: Server; guards: ConnectionGuards }> {
  const { headersTimeoutMs, requestTimeoutMs } = config.server
  // node-server's listener on node:http's server, as its createAdaptorServer builds it, with an error handler of ours:
  // a request it cannot read is then a problem, not its bare 400.
  const server = createHttpServer({
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(headersTimeoutMs / 4)),
    // A request without Host still gets a 400, from node-server (given no host to fall back on), which the error
    // handler makes a problem; Node's own is a bare status line.
    requireHostHeader: false,
  })
  // Every header line is seen: past Node's default of 2,000 it drops them from the request but still frames the body
  // by them, so a Transfer-Encoding or a second Host hidden behind 2,000 empty lines got past the checks of both
  // (review of issue 15). The 16 KiB header limit bounds how many there can be.
  server.maxHeadersCount = 0
  const guards = guardConnections(server, getRequestListener(fetch, { errorHandler: answerRequestError(log) }), log)
  server.on('request', guards.listener)
  server.on('clientError', answerClientError(log))
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(new Error(listenFailure(error, config), { cause: error }))
    server.once('error', failed)
    server.listen(config.port, config.host, () => {
      server.off('error', failed)
      resolve({ server, guards })
    })
  })
}

/** What went wrong binding SWAPEAZI_HOST:SWAPEAZI_PORT, and which variable to change: one line. */
function listenFailure(error: NodeJS.ErrnoException, config: Config): string {
  const { host, port } = config
  switch (error.code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use (EADDRINUSE): stop the process that holds it, or set SWAPEAZI_PORT to a free port`
    case 'EACCES':
      return port < 1024
        ? `not permitted to listen on port ${port} (EACCES): ports below 1024 need privileges; set SWAPEAZI_PORT to 1024 or above`
        : `not permitted to listen on ${host}:${port} (EACCES): set SWAPEAZI_PORT to another port`
    case 'EADDRNOTAVAIL':
      return `SWAPEAZI_HOST ${host} is not an address of this machine (EADDRNOTAVAIL): set SWAPEAZI_HOST to 127.0.0.1, 0.0.0.0 or one of this machine's addresses`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `SWAPEAZI_HOST ${host} does not resolve to an address (${error.code}): set SWAPEAZI_HOST to an IP address of this machine`
    default:
      return `cannot listen on ${host}:${port} (${error.code ?? error.message}): check SWAPEAZI_HOST and SWAPEAZI_PORT`
  }
}

type Handlers = { fetch: Parameters<typeof getRequestListener>[0]; count(): number; idle(): Promise<void> }

/** Counts the app's handlers from the request's arrival until the handler's own promise settles, answered or not. */
function countHandlers(fetch: Parameters<typeof getRequestListener>[0]): Handlers {
  let count = 0
  let waiting: (() => void)[] = []
  const done = (): void => {
    count -= 1
    if (count > 0) return
    for (const resolve of waiting) resolve()
    waiting = []
  }
  return {
    fetch: (request, env) => {
      count += 1
      let result: ReturnType<typeof fetch>
      try {
        result = fetch(request, env)
      } catch (error) {
        done()
        throw error
      }
      // node-server handles the handler's own outcome; this only notes when it is over.
      Promise.resolve(result).then(done, done)
      return result
    },
    count: () => count,
    idle: () => (count === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
  }
}

/**
 * After the connections are closed, the handlers still running (a payment settling with the facilitator or on chain,
 * a swap being recorded) finish before the store closes, a second signal included: it closes connections at once,
 * never the store under paid work. Bounded by HANDLER_FINISH_MS, above the longest a handler's outbound calls can
 * take (a facilitator's /verify and /settle at 30 s each; an on-chain settlement's 60 s receipt wait and its reads).
 */
async function finishHandlers(handlers: Handlers, log: Logger): Promise<void> {
  const running = handlers.count()
  if (running === 0) return
  log.warn(
    { event: 'shutdown_finishing', handlers: running },
    'shutdown: waiting for the work of requests still running (payments settling, swaps recording) before the store closes',
  )
  let timer: NodeJS.Timeout | undefined
  const isFinished = await Promise.race([
    handlers.idle().then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), HANDLER_FINISH_MS)
    }),
  ])
  clearTimeout(timer)
  if (!isFinished)
    log.error(
      { event: 'shutdown_abandoned', handlers: handlers.count(), waited_ms: HANDLER_FINISH_MS },
      'shutdown: the store closes under requests still running: a payment they were settling stays reserved (with SWAPEAZI_SETTLEMENT=onchain, the payment reconciler resolves it at the next start)',
    )
}

/** Counts requests from arrival until their response is sent or their connection closes. */
function countRequestsInFlight(server: Server): () => number {
  let count = 0
  server.on('request', (_request, response) => {
    count += 1
    response.once('close', () => {
      count -= 1
    })
  })
  return () => count
}

type StopRequests = {
  /** The first SIGTERM or SIGINT (or the test's stop). */
  first: Promise<string>
  /** A second one: stop waiting for requests in flight. */
  again: Promise<void>
  dispose(): void
}

/** SIGTERM and SIGINT, listened for only while `serve` runs, so an in-process test's worker keeps its own. */
function stopRequests(stop: AbortSignal | undefined): StopRequests {
  let signals = 0
  let resolveFirst: (signal: string) => void = () => {}
  let resolveAgain: () => void = () => {}
  const first = new Promise<string>((resolve) => {
    resolveFirst = resolve
  })
  const again = new Promise<void>((resolve) => {
    resolveAgain = resolve
  })
  const on = (signal: string) => (): void => {
    signals += 1
    if (signals === 1) resolveFirst(signal)
    else resolveAgain()
  }
  const onTerm = on('SIGTERM')
  const onInt = on('SIGINT')
  const onStop = on('stop')
  process.on('SIGTERM', onTerm)
  process.on('SIGINT', onInt)
  stop?.addEventListener('abort', onStop, { once: true })
  if (stop?.aborted) onStop()
  return {
    first,
    again,
    dispose: () => {
      process.off('SIGTERM', onTerm)
      process.off('SIGINT', onInt)
      stop?.removeEventListener('abort', onStop)
    },
  }
}

/**
 * Stops accepting connections and waits for the requests in flight, closing keep-alive connections as they go idle;
 * after `graceMs`, or at a second signal, closes the rest. Returns how many requests were cut.
 */
async function drain(server: Server, graceMs: number, again: Promise<void>, inFlight: () => number): Promise<number> {
  // net.Server's close, not http.Server's: that one (Node 19 on) closes the idle connections at once, and a kept-alive
  // connection whose client has just sent its next request (in the kernel, not read yet) is idle to Node: its client
  // got a reset for a request it had sent. Idle connections are closed after the event loop has polled instead
  // (check phase, after a whole poll), so such a request is read first, answered, and its connection closed after.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()))
  const closeIdle = (): void => {
    setImmediate(() => setImmediate(() => server.closeIdleConnections()))
  }
  closeIdle()
  const sweep = setInterval(closeIdle, IDLE_SWEEP_MS)
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs)
  })
  await Promise.race([closed, expired, again])
  clearInterval(sweep)
  clearTimeout(timer)
  const cut = inFlight()
  server.closeAllConnections()
  await closed
  // http.Server's close on the closed server: clears the timeout checker (headers, body) net.Server's close left running.
  server.close(() => {})
  return cut
}
