import type { Logger } from 'pino'
import { BaseError, type Chain, createPublicClient, type EIP1193RequestFn, http, type Transport } from 'viem'
import { arbitrum, base, bsc, celo, gnosis, mainnet, optimism, polygon } from 'viem/chains'
import type { Config } from '../config.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS } from '../market/createChainReader.ts'
import type { ChainCode } from '../schemas/catalogue.ts'

/** viem's definition of each chain SWAPEAZI_RPC_URLS may name: its id, and Multicall3 where viem knows it. */
export const LIVE_CHAINS: Readonly<Record<string, Chain>> = {
  ETH: mainnet,
  POL: polygon,
  ARB: arbitrum,
  OPT: optimism,
  BAS: base,
  BNB: bsc,
  GNO: gnosis,
  CEL: celo,
}

/** An SWAPEAZI_RPC_URLS entry whose RPC answered another chain id: the chain is not used, by anything, until restart. */
export class ChainIdMismatchError extends Error {
  override name = 'ChainIdMismatchError'

  constructor(
    readonly chain: ChainCode,
    readonly servedChainId: number,
    readonly expectedChainId: number,
  ) {
    super(
      `invalid configuration: SWAPEAZI_RPC_URLS.${chain}: the RPC serves chain ${servedChainId}, not ${chain} (${expectedChainId}); give ${chain} an RPC of its own chain`,
    )
  }
}

/**
 * The chain-id check of one SWAPEAZI_RPC_URLS entry, shared by every client made from it (the live market, the
 * tracker, the relayer, the pre-flight simulation): once verified it costs nothing; a mismatch is final.
 */
export type ChainIdCheck = {
  chain: ChainCode
  /**
   * Resolves once the RPC has answered the chain's own id. Rejects with ChainIdMismatchError for another id (logged
   * once, `rpc_chain_mismatch`), or with an error saying the id could not be read (asked again at the next call).
   */
  verified(): Promise<void>
  /** Whether the RPC was found serving another chain: nothing uses the chain then. */
  isMismatched(): boolean
  /**
   * At start, within the start-up budget: a mismatch rejects (start-up ends with its one line, not also logged); no
   * answer in time only warns, and the check runs again before the chain's first use.
   */
  atStart(deadlineMs: number): Promise<void>
}

export type CreateChainIdCheckParameters = {
  chain: ChainCode
  expectedChainId: number
  getChainId: () => Promise<number>
  log: Pick<Logger, 'warn' | 'error'>
}

/** The check of one chain's RPC; see ChainIdCheck. */
export function createChainIdCheck(parameters: CreateChainIdCheckParameters): ChainIdCheck {
  const { chain, expectedChainId, getChainId, log } = parameters
  let verified: Promise<void> | undefined
  let mismatch: ChainIdMismatchError | undefined
  let isReported = false
  const verify = (): Promise<void> => {
    if (mismatch !== undefined) return Promise.reject(mismatch)
    verified ??= getChainId().then(
      (id) => {
        if (id !== expectedChainId) {
          mismatch = new ChainIdMismatchError(chain, id, expectedChainId)
          throw mismatch
        }
      },
      (error: unknown) => {
        verified = undefined // unreachable: ask again at the next use
        // viem's message carries the URL (and with it the provider's key), and this one reaches health and the logs:
        // say only what failed.
        throw new Error(`its chain id could not be read from the RPC: ${error instanceof BaseError ? error.shortMessage : 'RPC error'}`)
      },
    )
    return verified
  }
  const report = (error: unknown): never => {
    if (error instanceof ChainIdMismatchError && !isReported) {
      isReported = true
      log.error(
        {
          event: 'rpc_chain_mismatch',
          chain,
          variable: `SWAPEAZI_RPC_URLS.${chain}`,
          served_chain_id: error.servedChainId,
          expected_chain_id: error.expectedChainId,
        },
        `${error.message}; until then ${chain} is not read, tracked, relayed on or simulated`,
      )
    }
    throw error
  }
  return {
    chain,
    verified: () => verify().catch(report),
    isMismatched: () => mismatch !== undefined,
    async atStart(deadlineMs) {
      const answered = await Promise.race([
        verify().then(
          () => true,
          (error: unknown) => error,
        ),
        sleep(Math.max(0, deadlineMs - Date.now())).then(() => false),
      ])
      if (answered === true) return
      if (answered instanceof ChainIdMismatchError) {
        isReported = true
        throw answered
      }
      log.warn(
        { event: 'rpc_chain_id_unchecked', chain },
        `SWAPEAZI_RPC_URLS.${chain}: its chain id could not be read at start; it is checked before the chain's first use`,
      )
    },
  }
}

/** Each chain's check in SWAPEAZI_RPC_URLS, by chain code: one process makes one per chain and shares it. */
export type ChainIdChecks = Partial<Record<ChainCode, ChainIdCheck>>

/** A check for every chain of SWAPEAZI_RPC_URLS, each asking `eth_chainId` over its own client. */
export function chainIdChecksFromConfig(config: Config, log: Pick<Logger, 'warn' | 'error'>): ChainIdChecks {
  const checks: ChainIdChecks = {}
  for (const [chain, url] of Object.entries(config.market.rpcUrls) as [ChainCode, string][]) {
    const known = LIVE_CHAINS[chain]
    if (known === undefined) continue
    const client = createPublicClient({ transport: http(url, CHAIN_RPC_TRANSPORT_OPTIONS) })
    checks[chain] = createChainIdCheck({ chain, expectedChainId: known.id, getChainId: () => client.getChainId(), log })
  }
  return checks
}

/**
 * The transport of every client made from a SWAPEAZI_RPC_URLS entry: each request waits for the chain-id check, so
 * an RPC of another chain is never read from or sent to, and one not checked at start is checked before its first
 * use. A chain the configuration accepts always has a check; one without (never the case) is refused outright.
 */
export function checkedRpcTransport(checks: ChainIdChecks, chain: ChainCode, url: string): Transport {
  const transport = http(url, CHAIN_RPC_TRANSPORT_OPTIONS)
  const check = checks[chain]
  return (options) => {
    const inner = transport(options)
    const request = async (args: Parameters<EIP1193RequestFn>[0], requestOptions?: Parameters<EIP1193RequestFn>[1]) => {
      if (check === undefined) throw new Error(`SWAPEAZI_RPC_URLS.${chain}: no chain id to check it against`)
      await check.verified()
      return inner.request(args, requestOptions)
    }
    // One wrapper for every method: the inner transport's generic signature is kept as it is.
    return { ...inner, request: request as typeof inner.request }
  }
}

/** Whether a log record's error is, or was caused by, a chain-id mismatch, which its check has logged once already. */
function isMismatchRecord(record: unknown): boolean {
  let error = typeof record === 'object' && record !== null ? (record as { err?: unknown }).err : undefined
  // viem wraps what a transport throws in its own errors (a call's, a transaction's), keeping it as the cause.
  for (let depth = 0; error instanceof Error && depth < 5; depth++) {
    if (error instanceof ChainIdMismatchError) return true
    error = error.cause
  }
  return false
}

type LevelLog = Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>

/**
 * A logger for a loop that retries a chain's work at every poll (the tracker): a failure that is a chain-id mismatch
 * goes to debug, since `rpc_chain_mismatch` said it once and each poll would only repeat it.
 */
export function quietOnMismatch(log: LevelLog): LevelLog {
  const at =
    (level: 'warn' | 'error'): Logger['warn'] =>
    (record: unknown, ...rest: unknown[]): void => {
      const args = [record, ...rest] as Parameters<Logger['warn']>
      if (isMismatchRecord(record)) log.debug(...args)
      else log[level](...args)
    }
  return { info: log.info.bind(log), debug: log.debug.bind(log), warn: at('warn'), error: at('error') }
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref()
  })
