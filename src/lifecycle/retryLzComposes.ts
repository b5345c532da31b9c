import type { Logger } from 'pino'
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  decodeAbiParameters,
  type Hash,
  type Hex,
  hexToString,
  keccak256,
  parseAbi,
  parseAbiItem,
  size,
  sliceHex,
} from 'viem'
import type { ChainCursor, LeaseStore, LifecycleStore } from '../store/createLifecycleStore.ts'
import type { SubmissionStore } from '../store/createSubmissionStore.ts'
import { runDestinationInputs } from '../tx/abis.ts'
import { relayerLeaseName } from './cctpRelayer.ts'
import { type KeptSubmissions, keptSubmissions } from './keptSubmissions.ts'
import { MAX_FEE_MULTIPLE, type SubmissionFees, type SubmissionPublicClient, submitWithFeeBumps } from './submitWithFeeBumps.ts'

/** EndpointV2's alert of a compose that failed, retryable (LayerZero-v2 ILayerZeroEndpointV2 / IMessagingComposer). */
export const lzComposeAlertEvent = parseAbiItem(
  'event LzComposeAlert(address indexed from, address indexed to, address indexed executor, bytes32 guid, uint16 index, uint256 gas, uint256 value, bytes message, bytes extraData, bytes reason)',
)

/** What the retrier calls on EndpointV2: the queue read (a hash, or 0x…01 once delivered) and lzCompose itself. */
export const endpointV2ComposeAbi = parseAbi([
  'function composeQueue(address from, address to, bytes32 guid, uint16 index) view returns (bytes32 messageHash)',
  'function lzCompose(address from, address to, bytes32 guid, uint16 index, bytes message, bytes extraData) payable',
])

type LzComposeArgs = readonly [from: Address, to: Address, guid: Hex, index: number, message: Hex, extraData: Hex]
export type LzComposeCall = { address: Address; abi: typeof endpointV2ComposeAbi; functionName: 'lzCompose'; args: LzComposeArgs }
type ComposeQueueRead = {
  address: Address
  abi: typeof endpointV2ComposeAbi
  functionName: 'composeQueue'
  args: readonly [Address, Address, Hex, number]
}

/** An alert as the retrier reads it from the chain, with the reference of the DestinationOrder its message carries. */
type ComposeAlert = { from: Address; guid: Hex; index: number; message: Hex; extraData: Hex; blockNumber: bigint; orderRef: string }

/** The destination chain's reads and writes; viem's public and wallet clients fit. */
export type LzRetryDestination = {
  chain: string
  /** The LayerZero EndpointV2 there (the bridge's deliveredBy). */
  endpoint: Address
  /** Our executor: only composes to it are retried. */
  executor: Address
  publicClient: {
    getBlockNumber(): Promise<bigint>
    getLogs(parameters: {
      address: Address
      event: typeof lzComposeAlertEvent
      args: { to: Address }
      fromBlock: bigint
      toBlock: bigint
    }): Promise<readonly { args: Partial<Record<string, unknown>>; blockNumber: bigint | null }[]>
    readContract(parameters: ComposeQueueRead): Promise<unknown>
    simulateContract(parameters: LzComposeCall & { account: Address }): Promise<unknown>
    getTransactionCount(parameters: { address: Address; blockTag: 'pending' | 'latest' }): Promise<number>
    /** The call's gas on the latest block. */
    estimateContractGas(parameters: LzComposeCall & { account: Address; blockTag: 'latest' }): Promise<bigint>
  } & SubmissionPublicClient
  walletClient: {
    account: { address: Address }
    writeContract(parameters: LzComposeCall & { nonce: number; gas: bigint } & SubmissionFees): Promise<Hash>
    /** The cancel of a stuck submission: 0 to the key itself at its nonce (gas estimated: Arbitrum's includes its L1 part). */
    sendTransaction(parameters: { to: Address; value: bigint; nonce: number } & SubmissionFees): Promise<Hash>
  }
}

export type LzComposeRetryOutcome =
  | { kind: 'retried'; chain: string; guid: Hex; transaction: Hash }
  | { kind: 'failed'; chain: string; guid: Hex; reason: string }

export type LzComposeRetrier = {
  /**
   * Reads new alerts on each chain (from the stored position `lz:<chain>`, or `lookbackBlocks` before the head at
   * first, in ranges of at most `maxBlockRange` blocks) and retries every compose still queued whose order is a
   * recorded swap still pending to that chain.
   */
  sweep(): Promise<LzComposeRetryOutcome[]>
  /**
   * Stops: no sweep starts after it, the sweep under way retries no further compose (the one it is submitting is
   * waited for), and it resolves once that sweep has ended, so the store may be closed then.
   */
  close(): Promise<void>
}

/** The store the retrier reads: the swaps an order's reference names, and its scan position per chain. */
export type LzRetryStore = Pick<LifecycleStore, 'getTracked' | 'getBatchLegs' | 'getCursor' | 'setCursor'>

export type LzComposeRetrierParameters = {
  destinations: readonly LzRetryDestination[]
  leases: LeaseStore
  /**
   * Where retries still unmined at their nonce are kept across a restart (keptSubmissions.ts); without it, in memory
   * for this process's life.
   */
  submissions?: SubmissionStore
  holder: string
  log: Logger
  lifecycle: LzRetryStore
  /** How far back the first scan of a chain looks for alerts (a chain with no stored position). Default 10 000 blocks. */
  lookbackBlocks?: bigint
  /** The most blocks one eth_getLogs asks for (public nodes refuse more than a few thousand). Default 2 000. */
  maxBlockRange?: bigint
  /** The most ranges read per chain per sweep: a long outage is caught up over several sweeps. Default 10. */
  maxRangesPerSweep?: number
  /** The relayer lease is taken for this long and renewed while the sweep runs. Default 120 000. */
  leaseTtlMs?: number
  /** How long a retry's receipt is waited for, its replacements included. Default 120 000. */
  receiptTimeoutMs?: number
  /** How long a retry may stay unmined before it is replaced with higher fees (submitWithFeeBumps). Default 30 000. */
  bumpAfterMs?: number
}

/** The name under which a chain's alert scan position is kept beside the tracker's cursors. */
export const lzCursorName = (chain: string): string => `lz:${chain}`

/** The retrier's position as a cursor: only its block is read back (no hash or time is compared, unlike the tracker's). */
const scanPosition = (block: bigint): ChainCursor => ({ block, blockHash: '', blockTime: new Date(0) })

/** Where the DestinationOrder starts in an OFT compose message (OFTComposeMsgCodec: nonce, srcEid, amountLD, composeFrom). */
const LZ_COMPOSE_MSG_START = 76

/** The reference of the DestinationOrder an OFT compose message carries; undefined when it carries none. */
export function composeOrderRef(message: Hex): string | undefined {
  if (size(message) <= LZ_COMPOSE_MSG_START) return undefined
  try {
    const [order] = decodeAbiParameters(runDestinationInputs, sliceHex(message, LZ_COMPOSE_MSG_START))
    const ref = hexToString(order.ref, { size: 32 })
    return /^(swp|dsb)_[0-9A-Z]{26}$/.test(ref) ? ref : undefined
  } catch {
    return undefined
  }
}

const RECEIVED_MESSAGE_HASH: Hex = `0x${'0'.repeat(63)}1`

/**
 * Retries LayerZero composes to our executor that failed (LzComposeAlert): the endpoint keeps such a compose queued
 * with its message's hash, and anyone may deliver it with `lzCompose`, which clears the entry before it calls, so a
 * duplicate retry reverts (LZ_ComposeNotFound) and cannot run the order twice. Only a compose whose DestinationOrder
 * names a recorded swap still pending to that chain is retried: our key pays no gas for someone else's order to our
 * executor. One replica sends from the key on a chain at a time (the lease `relayer:<chain>:<address>`, shared with
 * the CCTP relayer under another holder name, so the two never race for a nonce), renewed while the sweep runs and
 * checked before each send; the queue is read before it simulates and sends.
 */
export function createLzComposeRetrier(parameters: LzComposeRetrierParameters): LzComposeRetrier {
  const { destinations, leases, holder, log, lifecycle } = parameters
  const lookbackBlocks = parameters.lookbackBlocks ?? 10_000n
  const maxBlockRange = parameters.maxBlockRange ?? 2_000n
  const maxRangesPerSweep = parameters.maxRangesPerSweep ?? 10
  const leaseTtlMs = parameters.leaseTtlMs ?? 120_000
  const receiptTimeoutMs = parameters.receiptTimeoutMs ?? 120_000
  const bumpAfterMs = parameters.bumpAfterMs ?? 30_000
  /** Per chain, the alerts read and not yet delivered (each retried while its swap is pending there). */
  const open = new Map<string, Map<string, ComposeAlert>>()
  /** Chains scanned since this process started: the first scan also rereads the lookback for alerts still open. */
  const started = new Set<string>()
  /** The sweep under way: one at a time (two would both send from the key under its re-entrant lease). */
  let running: Promise<LzComposeRetryOutcome[]> | undefined
  let isClosed = false
  /**
   * Per chain, a retry given up on while still unmined: the next retry from the key takes its nonce (with fees above
   * it, under the nonce's `feeCeiling`, which no replacement raises), as the CCTP relayer's next relay does, instead of
   * queueing another lzCompose behind it at the next nonce. Kept in the store under the key's lease name, shared with
   * the CCTP relayer: a stuck relay's nonce is taken over the same way, and a restart knows them.
   */
  const stuck = new Map<string, KeptSubmissions>()

  /** True while the swap (or a leg of the batch) the order names is pending to `chain`; 'drop' once it never will be. */
  async function isPendingTo(orderRef: string, chain: string): Promise<boolean | 'drop'> {
    const refs = orderRef.startsWith('dsb_') ? (await lifecycle.getBatchLegs(orderRef)).map((leg) => leg.ref) : [orderRef]
    let waiting = false
    for (const ref of refs) {
      const tracked = await lifecycle.getTracked(ref)
      if (tracked === undefined || tracked.swap.toChain !== chain) continue
      if (tracked.lifecycle.state === 'pending') return true
      if (tracked.lifecycle.state === 'built') waiting = true
    }
    return waiting ? false : 'drop'
  }

  async function retryOne(
    destination: LzRetryDestination,
    alert: ComposeAlert,
    holdsLease: () => Promise<boolean>,
    /** Called when the retry leaves the key's nonce held by a stuck retry (this one, or the one it did not replace). */
    onNonceHeld: () => void,
  ): Promise<LzComposeRetryOutcome | 'done' | 'wait' | 'lease_lost'> {
    const { chain, endpoint, executor, publicClient, walletClient } = destination
    const skipped = (reason: string): void =>
      log.debug({ event: 'lz_compose_skipped', chain, guid: alert.guid, order_ref: alert.orderRef, reason }, 'lz_compose_skipped')
    const pending = await isPendingTo(alert.orderRef, chain)
    if (pending === 'drop') {
      skipped('the order names no swap of ours to this chain that is built or pending: dropped')
      return 'done'
    }
    if (!pending) {
      skipped('the swap is not yet seen pending: kept for the next sweep')
      return 'wait'
    }
    const queued = await publicClient.readContract({
      address: endpoint,
      abi: endpointV2ComposeAbi,
      functionName: 'composeQueue',
      args: [alert.from, executor, alert.guid, alert.index],
    })
    // Delivered since (by us, another replica, anyone), or not ours to deliver.
    if (queued === RECEIVED_MESSAGE_HASH || queued !== keccak256(alert.message)) {
      skipped(queued === RECEIVED_MESSAGE_HASH ? 'already delivered' : "the endpoint's queue holds another message for it")
      return 'done'
    }
    const call: LzComposeCall = {
      address: endpoint,
      abi: endpointV2ComposeAbi,
      functionName: 'lzCompose',
      args: [alert.from, executor, alert.guid, alert.index, alert.message, alert.extraData],
    }
    const account = walletClient.account.address
    try {
      await publicClient.simulateContract({ ...call, account })
    } catch (error) {
      return { kind: 'failed', chain, guid: alert.guid, reason: `lzCompose reverts: ${revertReason(error) ?? 'RPC error'}` }
    }
    // The nonce read below is the next one only while no other sender holds the key's lease.
    if (!(await holdsLease())) return 'lease_lost'
    const [minedCount, pendingCount] = await Promise.all([
      publicClient.getTransactionCount({ address: account, blockTag: 'latest' }),
      publicClient.getTransactionCount({ address: account, blockTag: 'pending' }),
    ])
    let held = stuck.get(chain)
    if (held === undefined) {
      held = keptSubmissions(parameters.submissions, relayerLeaseName(chain, account), log)
      stuck.set(chain, held)
    }
    // Kept by nonce (a retry left unmined behind a lower nonce pending, a stuck CCTP relay's, is not forgotten when the
    // next is left unmined too), and a compose with a stuck retry of ours goes only at that retry's nonce, never at
    // another where both could be mined. Outbid only while the node still holds one of them at the nonce, always under
    // the nonce's own ceiling.
    const work = `${alert.guid}:${alert.index}`
    const kept = held
    const choice = await kept.choose(work, minedCount, pendingCount)
    const { nonce } = choice
    const taking = choice.replacing
    // With a margin, as a CCTP relay: the state it runs on may differ from the estimate's.
    const gas = ((await publicClient.estimateContractGas({ ...call, account, blockTag: 'latest' })) * 130n) / 100n
    const isDoneElsewhere = async (): Promise<boolean> =>
      (await publicClient.readContract({
        address: endpoint,
        abi: endpointV2ComposeAbi,
        functionName: 'composeQueue',
        args: [alert.from, executor, alert.guid, alert.index],
      })) === RECEIVED_MESSAGE_HASH
    const submission = await submitWithFeeBumps({
      ...(taking === undefined ? {} : { replacing: taking }),
      publicClient,
      send: (fees) => walletClient.writeContract({ ...call, nonce, gas, ...fees }),
      cancel: (fees) => walletClient.sendTransaction({ to: account, value: 0n, nonce, ...fees }),
      canReplace: holdsLease,
      isDoneElsewhere,
      // Kept at each send, so a retry cut short by a stop is known as ours at the next start.
      onSent: (sent) => kept.sent(choice, work, sent),
      timeoutMs: receiptTimeoutMs,
      bumpAfterMs,
      // Waiting on the chain is wall time, whatever clock the rest reads.
      clock: Date.now,
      onCeilingGivenUp: (given) =>
        log.warn(
          {
            event: 'lz_compose_fee_ceiling_renewed',
            chain,
            guid: alert.guid,
            key_nonce: nonce,
            old_fee_ceiling: given.oldCeiling.toString(),
            fee_ceiling: given.ceiling.toString(),
            max_fee_per_gas: given.fees.maxFeePerGas.toString(),
            reason: `the stuck retry of ours at the key's nonce ${nonce} on ${chain} is no longer in the node's pool (the pending count is back at it) and the chain asks ${given.fees.maxFeePerGas} wei per gas, above its fee ceiling of ${given.oldCeiling}: that ceiling is given up, and this retry is sent at the chain's fees under a fresh one`,
          },
          'lz_compose_fee_ceiling_renewed',
        ),
    })
    // Unmined, or unknown (the RPC failed to answer): still pending at the nonce, as far as the retrier knows.
    // Mined (or taken): forgotten; nothing sent: kept as it was.
    await kept.settle(choice, work, submission)
    if (submission.kind === 'not_mined' || submission.kind === 'rpc_failed') onNonceHeld()
    // Nothing sent: the stuck retry is kept as it was, waited out at its nonce.
    if (submission.kind === 'not_sent') {
      onNonceHeld()
      return {
        kind: 'failed',
        chain,
        guid: alert.guid,
        reason: `nothing sent: the key's nonce ${nonce} is held by a stuck retry of ours, and outbidding it would pass the nonce's fee ceiling (${submission.feeCeiling} wei per gas, ${MAX_FEE_MULTIPLE}× its first submission's); retried next sweep`,
      }
    }
    // Our own stuck retry took the nonce: this compose is delivered if it was its (or someone delivered it meanwhile).
    if (submission.kind === 'earlier_mined')
      return (await isDoneElsewhere().catch(() => false))
        ? 'done'
        : {
            kind: 'failed',
            chain,
            guid: alert.guid,
            reason: `the stuck submission of ours this replaced (a compose retry or CCTP relay from the key) was mined instead (${submission.receipt.transactionHash}); retried next sweep`,
          }
    if (submission.kind === 'not_mined')
      return { kind: 'failed', chain, guid: alert.guid, reason: `lzCompose not mined within ${receiptTimeoutMs / 1000} s` }
    if (submission.kind === 'rpc_failed')
      return {
        kind: 'failed',
        chain,
        guid: alert.guid,
        reason: `lzCompose receipt could not be read (RPC error: ${submission.reason}); it may still be mined`,
      }
    if (submission.kind === 'nonce_taken')
      return {
        kind: 'failed',
        chain,
        guid: alert.guid,
        reason: `the key's nonce was taken by ${submission.receipt.transactionHash}, not ours`,
      }
    if (submission.cancelled) return 'done'
    const { receipt } = submission
    return receipt.status === 'success'
      ? { kind: 'retried', chain, guid: alert.guid, transaction: receipt.transactionHash }
      : { kind: 'failed', chain, guid: alert.guid, reason: `lzCompose ${receipt.transactionHash} reverted` }
  }

  /**
   * Reads the alerts to our executor from the stored position on, a range of at most `maxBlockRange` blocks at a time,
   * storing the position after each range: a failed read is retried from the same block, over the same range.
   */
  async function readAlerts(destination: LzRetryDestination, known: Map<string, ComposeAlert>): Promise<void> {
    const { chain, publicClient } = destination
    const head = await publicClient.getBlockNumber()
    const cursor = await lifecycle.getCursor(lzCursorName(chain))
    const lookbackStart = head >= lookbackBlocks ? head - lookbackBlocks + 1n : 0n
    let from = cursor === undefined ? lookbackStart : cursor.block + 1n
    // A replica that just started rereads the lookback too: the alerts still open are kept in memory only.
    if (!started.has(chain) && lookbackStart < from) from = lookbackStart
    started.add(chain)
    let stored = cursor?.block ?? null
    // The first position is stored before the first read, so a chain whose reads fail starts again from the same block.
    if (stored === null) {
      if (!(await lifecycle.setCursor(lzCursorName(chain), scanPosition(from - 1n), null))) return
      stored = from - 1n
    }
    for (let ranges = 0; ranges < maxRangesPerSweep && from <= head; ranges++) {
      const to = from + maxBlockRange - 1n < head ? from + maxBlockRange - 1n : head
      const logs = await publicClient.getLogs({
        address: destination.endpoint,
        event: lzComposeAlertEvent,
        args: { to: destination.executor },
        fromBlock: from,
        toBlock: to,
      })
      log.debug(
        { event: 'lz_compose_alerts_scanned', chain, from_block: String(from), to_block: String(to), alerts: logs.length },
        'lz_compose_alerts_scanned',
      )
      for (const entry of logs) {
        const {
          from: oft,
          guid,
          index,
          message,
          extraData,
        } = entry.args as {
          from: Address
          guid: Hex
          index: number
          message: Hex
          extraData: Hex
        }
        const orderRef = composeOrderRef(message)
        if (orderRef === undefined) continue
        log.debug(
          { event: 'lz_compose_alert_read', chain, guid, order_ref: orderRef, block: String(entry.blockNumber) },
          'lz_compose_alert_read',
        )
        known.set(`${guid}:${index}`, { from: oft, guid, index, message, extraData, blockNumber: entry.blockNumber ?? to, orderRef })
      }
      if (to > stored) {
        const moved = await lifecycle.setCursor(lzCursorName(chain), scanPosition(to), stored)
        if (!moved) {
          log.debug({ event: 'lz_compose_scan_overtaken', chain, block: String(stored) }, 'lz_compose_scan_overtaken')
          return
        }
        stored = to
      }
      from = to + 1n
    }
  }

  async function sweepChain(destination: LzRetryDestination, holdsLease: () => Promise<boolean>): Promise<LzComposeRetryOutcome[]> {
    const { chain } = destination
    const known = open.get(chain) ?? new Map<string, ComposeAlert>()
    open.set(chain, known)
    await readAlerts(destination, known)
    const outcomes: LzComposeRetryOutcome[] = []
    // Once a retry leaves the key's nonce stuck, the next would only replace it at that nonce: the other alerts wait for
    // the next sweep, so a stuck retry is replaced a sweep later, not by each alert after it.
    let nonceHeld = false
    for (const [key, alert] of known) {
      if (isClosed || nonceHeld) break
      let outcome: Awaited<ReturnType<typeof retryOne>>
      try {
        outcome = await retryOne(destination, alert, holdsLease, () => {
          nonceHeld = true
        })
      } catch (error) {
        // viem's message carries the RPC URL (a provider's key): its short message says what failed.
        outcome = {
          kind: 'failed',
          chain,
          guid: alert.guid,
          reason: error instanceof BaseError ? error.shortMessage : error instanceof Error ? error.name : String(error),
        }
      }
      if (outcome === 'lease_lost') {
        log.warn({ event: 'lz_compose_lease_lost', chain }, 'lz_compose_lease_lost')
        break
      }
      if (outcome === 'wait') continue
      if (outcome === 'done' || outcome.kind === 'retried') known.delete(key)
      if (outcome !== 'done') {
        outcomes.push(outcome)
        log.info({ event: `lz_compose_${outcome.kind}`, ...outcome }, `lz_compose_${outcome.kind}`)
      }
    }
    return outcomes
  }

  async function sweepAll(): Promise<LzComposeRetryOutcome[]> {
    const outcomes: LzComposeRetryOutcome[] = []
    for (const destination of destinations) {
      if (isClosed) break
      const lease = relayerLeaseName(destination.chain, destination.walletClient.account.address)
      if (!(await leases.tryAcquire(lease, holder, leaseTtlMs))) {
        log.debug({ event: 'lz_compose_lease_held', chain: destination.chain, lease }, 'lz_compose_lease_held')
        continue
      }
      let held = true
      const renew = async (): Promise<boolean> => {
        held = held && (await leases.renew(lease, holder, leaseTtlMs).catch(() => false))
        return held
      }
      // Renewed while receipts are waited for, as the CCTP relayer does, so the lease never lapses mid-send.
      const renewal = setInterval(() => void renew(), Math.max(1_000, Math.floor(leaseTtlMs / 3)))
      try {
        outcomes.push(...(await sweepChain(destination, renew)))
      } finally {
        clearInterval(renewal)
        await leases.release(lease, holder).catch(() => {})
      }
    }
    return outcomes
  }

  return {
    sweep() {
      if (isClosed) return Promise.resolve([])
      // A sweep asked for while one runs (a slow sweep outlasting the interval) is that one.
      running ??= sweepAll().finally(() => {
        running = undefined
      })
      return running
    },
    async close() {
      isClosed = true
      await running?.catch(() => {})
    },
  }
}

function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined
  return reverted.reason ?? reverted.shortMessage
}
