import type { Logger } from 'pino'
import { type Address, BaseError, ContractFunctionRevertedError, type Hash, type Hex, isAddressEqual, zeroAddress } from 'viem'
import { swapEaziExecutorAbi } from '../contracts/routerArtifact.ts'
import type { LeaseStore } from '../store/createLifecycleStore.ts'
import type { SubmissionStore } from '../store/createSubmissionStore.ts'
import { type KeptSubmissions, keptSubmissions } from './keptSubmissions.ts'
import { type AttestationClient, type AttestedMessage, AttestationServiceError } from './attestationClient.ts'
import {
  MAX_FEE_MULTIPLE,
  type NonceChoice,
  type Submission,
  type SubmissionFees,
  type SubmissionPublicClient,
  submitWithFeeBumps,
} from './submitWithFeeBumps.ts'
import {
  attestedMessageFields,
  type CctpBurn,
  cctpBurnsOf,
  cctpHooksOfBuild,
  isSameBurn,
  messageTransmitterAbi,
  orderRefOfSwap,
  type ReceiptLog,
} from './cctpMessages.ts'

/** The executor's `relayCctp(transmitter, message, attestation)`, as simulation and broadcast take it. */
export type RelayCctpCall = {
  address: Address
  abi: typeof swapEaziExecutorAbi
  functionName: 'relayCctp'
  args: readonly [transmitter: Address, message: Hex, attestation: Hex]
}

/** MessageTransmitterV2's `receiveMessage(message, attestation)`: what mints a message anyone may receive. */
export type ReceiveMessageCall = {
  address: Address
  abi: typeof messageTransmitterAbi
  functionName: 'receiveMessage'
  args: readonly [message: Hex, attestation: Hex]
}

type UsedNoncesRead = { address: Address; abi: typeof messageTransmitterAbi; functionName: 'usedNonces'; args: readonly [Hex] }

/** What the relayer reads on a destination chain; a viem public client fits. */
export type RelayerPublicClient = {
  readContract(parameters: UsedNoncesRead): Promise<unknown>
  /** Resolves if the call would succeed from `account`; rejects with the revert otherwise. */
  simulateContract(parameters: RelayCctpCall & { account: Address }): Promise<unknown>
  simulateContract(parameters: ReceiveMessageCall & { account: Address }): Promise<unknown>
  getTransactionCount(parameters: { address: Address; blockTag: 'pending' | 'latest' }): Promise<number>
  /** The call's gas on the latest block (not the pending one, which may hold a submission of ours this one replaces). */
  estimateContractGas(parameters: RelayCctpCall & { account: Address; blockTag: 'latest' }): Promise<bigint>
  estimateContractGas(parameters: ReceiveMessageCall & { account: Address; blockTag: 'latest' }): Promise<bigint>
} & SubmissionPublicClient

/** The relayer key's wallet on a destination chain; a viem wallet client with an account and a chain fits. */
export type RelayerWalletClient = {
  account: { address: Address }
  writeContract(parameters: RelayCctpCall & { nonce: number; gas: bigint } & SubmissionFees): Promise<Hash>
  writeContract(parameters: ReceiveMessageCall & { nonce: number; gas: bigint } & SubmissionFees): Promise<Hash>
  /** The cancel of a stuck submission: 0 to the key itself at its nonce (gas estimated: Arbitrum's includes its L1 part). */
  sendTransaction(parameters: { to: Address; value: bigint; nonce: number } & SubmissionFees): Promise<Hash>
}

/** A chain the relayer delivers to: its CCTP domain, our executor and Circle's transmitter there. */
export type CctpDestination = {
  chain: string
  domain: number
  executor: Address
  transmitter: Address
  publicClient: RelayerPublicClient
  walletClient: RelayerWalletClient
}

export type CctpRelayerParameters = {
  attestations: AttestationClient
  /** Each source chain's CCTP domain (manifest/bridges.json). */
  sourceDomains: Readonly<Record<string, number>>
  /**
   * Our executor on each source chain: a burn it made with no hook data (a route that ends at the bridge, minted to
   * the recipient by whoever receives the message) is relayed too, with the transmitter's receiveMessage.
   */
  sourceExecutors?: Readonly<Record<string, Address>>
  destinations: readonly CctpDestination[]
  /** Submissions from one relayer key on one chain are made by one replica at a time. */
  leases: LeaseStore
  /**
   * Where relays still unmined at their nonce are kept across a restart (keptSubmissions.ts); without it, in memory
   * for this process's life.
   */
  submissions?: SubmissionStore
  /** This replica's name in the lease table. */
  holder: string
  log: Logger
  clock?: () => number
  /** How long to wait for Circle's attestation after the source is final. Default 2 hours (a standard transfer from Ethereum takes ~15-20 minutes). */
  attestationWaitMs?: number
  /** The lease is taken for this long and renewed while a submission is waited for. Default 60 000. */
  leaseTtlMs?: number
  /** How long one submission's receipt is waited for, its replacements included. Default 120 000. */
  receiptTimeoutMs?: number
  /** How long a submission may stay unmined before it is replaced with higher fees (submitWithFeeBumps). Default 30 000. */
  bumpAfterMs?: number
  /** Tests: the waits between lease attempts. */
  sleep?: (ms: number) => Promise<void>
}

/**
 * The swap to relay: its reference, its source chain and the transaction we built for it (the swap record's stored
 * transactionRequest), whose DestinationOrders are the only hooks relayed.
 */
export type RelayRecord = { ref: string; fromChain: string; transactionRequest: unknown }
/** The source transaction's receipt; viem's fits. */
export type RelayReceipt = { transactionHash: Hex; logs: readonly ReceiptLog[] }

/** What became of one attested message. */
export type MessageRelayOutcome =
  | { kind: 'relayed'; nonce: Hex; transaction: Hash; gasUsed: bigint }
  /** Its nonce was already used on the destination: someone (another replica, a keeper, the user) minted it. */
  | { kind: 'already_received'; nonce: Hex }
  /** Not submitted, or submitted and reverted, for `reason`; a later call may try again. */
  | { kind: 'failed'; nonce: Hex | null; reason: string; transaction?: Hash }

export type RelayOutcome = { ref: string; messages: MessageRelayOutcome[] }

export type CctpRelayer = {
  /**
   * For a swap whose source leg is final: finds the burns carrying our DestinationOrder, waits for Circle's
   * attestation, and submits each through our executor's `relayCctp` on its destination. Never rejects: every outcome
   * is a value, so the tracker's hook may call it without awaiting. Idempotent: a message already received is not
   * submitted again.
   */
  relayForSwap(record: RelayRecord, receipt: RelayReceipt): Promise<RelayOutcome>
  /** Submits one attested message (what relayForSwap does per message); exported for operators and tests. */
  relayMessage(destination: CctpDestination, attested: AttestedMessage): Promise<MessageRelayOutcome>
  /** True when the source transaction holds a burn of this swap the relayer delivers (what the sweep relays). */
  hasBurnsToRelay(record: RelayRecord, receipt: RelayReceipt): boolean
  /**
   * Stops: nothing more is sent from the moment it is called (no relay, replacement or cancel; a relay not yet sent
   * ends as failed, and so does one waiting for its attestation), and resolves once the relays in progress have ended
   * and given the lease back. A submission already sent is still waited for, to its receipt or receiptTimeoutMs
   * (startRelaying bounds that wait).
   */
  close(): Promise<void>
}

const DEFAULT_ATTESTATION_WAIT_MS = 2 * 60 * 60 * 1000
const DEFAULT_LEASE_TTL_MS = 60_000
const DEFAULT_RECEIPT_TIMEOUT_MS = 120_000
const DEFAULT_BUMP_AFTER_MS = 30_000
/** A relay's gas limit over its estimate on the latest block (routing.md 5.1: estimate, then a 25-40% buffer). */
const GAS_MARGIN_PERCENT = 130n
const LEASE_RETRY_MS = 1_000
/** A relay close() came before: nothing was sent, and the swap, still pending without a delivery, is swept again. */
const STOPPED_REASON = 'the relayer stopped before sending; nothing was sent (the swap stays pending, and a later sweep relays it)'

/** Thrown by a send or cancel asked for once close() was called: nothing is sent. */
class RelayerStoppedError extends Error {
  constructor() {
    super('the relayer stopped')
    this.name = 'RelayerStoppedError'
  }
}

/**
 * Our own CCTP relayer (live-chain.md (c): Circle's forwarding service cannot call our executor). A duplicate
 * submission cannot pay twice: the transmitter marks the message's nonce used in the transaction that mints, so a
 * second `receiveMessage` reverts ("Nonce already used"), and with it the whole `relayCctp`, before any order runs.
 * The relayer also reads `usedNonces` and simulates before it sends, so it does not spend gas on a message already
 * received; one replica at a time sends from the key (the lease `relayer:<chain>:<address>`), taking the next
 * nonce from the node's pending count, so two replicas never race for one nonce.
 */
export function createCctpRelayer(parameters: CctpRelayerParameters): CctpRelayer {
  const { attestations, sourceDomains, destinations, leases, holder, log } = parameters
  const clock = parameters.clock ?? Date.now
  const attestationWaitMs = parameters.attestationWaitMs ?? DEFAULT_ATTESTATION_WAIT_MS
  const leaseTtlMs = parameters.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS
  const receiptTimeoutMs = parameters.receiptTimeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS
  const bumpAfterMs = parameters.bumpAfterMs ?? DEFAULT_BUMP_AFTER_MS
  const sleep = parameters.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const stopping = new AbortController()
  /** Within this process, one submission per lease at a time (the lease itself is re-entrant for its holder). */
  const localQueues = new Map<string, Promise<unknown>>()
  /**
   * Per relayer lease, the submissions given up on while still unmined, by nonce: the next submission from the key
   * takes the lowest such nonce (with fees above it) instead of queueing behind it, and a message with a stuck relay
   * of ours goes only at that relay's nonce; its message, still unreceived, is relayed again by the sweep. Each keeps
   * every submission still pending at its nonce (any of them may be mined yet, and each is ours) and the nonce's fee
   * ceiling, from its first submission, which no replacement raises. Kept in the store under the lease's name, which
   * the compose retrier shares, so a restart knows them and neither submitter queues behind the other's.
   */
  const stuck = new Map<string, KeptSubmissions>()
  const stuckOf = (lease: string): KeptSubmissions => {
    const existing = stuck.get(lease)
    if (existing !== undefined) return existing
    const created = keptSubmissions(parameters.submissions, lease, log)
    stuck.set(lease, created)
    return created
  }

  /**
   * The burns of the swap's source transaction the relayer delivers, each with its destination: a burn whose hook data
   * is a DestinationOrder we built for this swap (byte for byte the one in its recorded transaction) with our executor
   * as destination caller (relayCctp), or, with no hook data, a burn by our executor that anyone may receive
   * (receiveMessage). Someone else's burns and hooks, and a hook that carries our reference but not our order, are
   * left alone.
   */
  function burnsToRelay(record: RelayRecord, receipt: RelayReceipt): { burn: CctpBurn; destination: CctpDestination }[] {
    const orderRef = orderRefOfSwap(record.ref).toLowerCase()
    const builtHooks = new Set(cctpHooksOfBuild(record.transactionRequest, record.ref).map((hook) => hook.toLowerCase()))
    const sourceExecutor = parameters.sourceExecutors?.[record.fromChain]
    return cctpBurnsOf(receipt.logs).flatMap((burn) => {
      const destination = destinations.find((entry) => entry.domain === burn.destinationDomain)
      if (destination === undefined) return []
      const isOurOrder =
        burn.orderRef?.toLowerCase() === orderRef &&
        builtHooks.has(burn.hookData.toLowerCase()) &&
        isAddressEqual(destination.executor, burn.destinationCaller)
      const isOurPlainBurn =
        burn.hookData === '0x' &&
        isAddressEqual(burn.destinationCaller, zeroAddress) &&
        sourceExecutor !== undefined &&
        isAddressEqual(burn.depositor, sourceExecutor)
      return isOurOrder || isOurPlainBurn ? [{ burn, destination }] : []
    })
  }

  async function withLease<T>(
    name: string,
    deadlineMs: number,
    work: (holds: () => boolean) => Promise<T>,
  ): Promise<T | 'lease_unavailable' | 'stopped'> {
    const previous = localQueues.get(name) ?? Promise.resolve()
    let done: () => void = () => {}
    const mine = new Promise<void>((resolve) => {
      done = resolve
    })
    const queued = previous.then(() => mine)
    localQueues.set(name, queued)
    await previous
    try {
      // A relay queued behind the one under way when close() was called sends nothing.
      if (stopping.signal.aborted) return 'stopped'
      while (!(await leases.tryAcquire(name, holder, leaseTtlMs))) {
        if (stopping.signal.aborted) return 'stopped'
        if (clock() >= deadlineMs) return 'lease_unavailable'
        await sleep(LEASE_RETRY_MS)
      }
      // Renewed while the work runs; once a renewal is refused (another replica took it) or fails (the database is
      // unreachable, so the lease may lapse unseen and another replica take it), the work sends nothing more, as the
      // compose retrier counts a failed renewal as a lost lease.
      let isHeld = true
      const renewal = setInterval(
        () => {
          leases
            .renew(name, holder, leaseTtlMs)
            .then((renewed) => {
              if (!renewed) isHeld = false
            })
            .catch((error: unknown) => {
              isHeld = false
              log.warn({ event: 'relay_lease_renew_failed', lease: name, err: error }, 'relay_lease_renew_failed')
            })
        },
        Math.max(1_000, Math.floor(leaseTtlMs / 3)),
      )
      try {
        return await work(() => isHeld)
      } finally {
        clearInterval(renewal)
        await leases.release(name, holder).catch(() => {})
      }
    } finally {
      done()
      if (localQueues.get(name) === queued) localQueues.delete(name)
    }
  }

  async function relayMessage(destination: CctpDestination, attested: AttestedMessage): Promise<MessageRelayOutcome> {
    const fields = attestedMessageFields(attested.message)
    if (fields === undefined) return { kind: 'failed', nonce: null, reason: 'the attested message is not a CCTP v2 burn message' }
    const { nonce } = fields
    const account = destination.walletClient.account.address
    const lease = relayerLeaseName(destination.chain, account)
    // Our executor must receive a message it is the destination caller of (its order runs with the mint); one that
    // anyone may receive goes straight to the transmitter.
    const isOrder = isAddressEqual(fields.destinationCaller, destination.executor)
    const call: RelayCctpCall | ReceiveMessageCall = isOrder
      ? {
          address: destination.executor,
          abi: swapEaziExecutorAbi,
          functionName: 'relayCctp',
          args: [destination.transmitter, attested.message, attested.attestation],
        }
      : {
          address: destination.transmitter,
          abi: messageTransmitterAbi,
          functionName: 'receiveMessage',
          args: [attested.message, attested.attestation],
        }
    const what = call.functionName
    const outcome = await withLease(lease, clock() + leaseTtlMs * 5, async (holds): Promise<MessageRelayOutcome> => {
      let used: unknown
      try {
        used = await destination.publicClient.readContract({
          address: destination.transmitter,
          abi: messageTransmitterAbi,
          functionName: 'usedNonces',
          args: [nonce],
        })
      } catch {
        return { kind: 'failed', nonce, reason: `${destination.chain} could not be reached to read the transmitter (RPC error)` }
      }
      if (used === 1n) return { kind: 'already_received', nonce }
      try {
        await (call.functionName === 'relayCctp'
          ? destination.publicClient.simulateContract({ ...call, account })
          : destination.publicClient.simulateContract({ ...call, account }))
      } catch (error) {
        const revert = revertReason(error)
        return {
          kind: 'failed',
          nonce,
          reason: revert === undefined ? `${destination.chain} RPC error in simulation` : `${what} reverts: ${revert}`,
        }
      }
      let submission: Submission
      let txNonce: number
      // The nonce this one goes at, and the stuck relay of ours there it takes over, if any.
      let choice: NonceChoice
      const held = stuckOf(lease)
      try {
        const [mined, pending] = await Promise.all([
          destination.publicClient.getTransactionCount({ address: account, blockTag: 'latest' }),
          destination.publicClient.getTransactionCount({ address: account, blockTag: 'pending' }),
        ])
        // Outbid only while the node still holds one of them at the nonce (one dropped from the pool leaves nothing to
        // outbid), always under the nonce's own ceiling; this message, if a relay of it is stuck, only at that nonce.
        choice = await held.choose(nonce, mined, pending)
        txNonce = choice.nonce
        const taking = choice.replacing
        // With a margin: the state it runs on may differ from the estimate's (a mint or swap before it in the block).
        const estimated = await (call.functionName === 'relayCctp'
          ? destination.publicClient.estimateContractGas({ ...call, account, blockTag: 'latest' })
          : destination.publicClient.estimateContractGas({ ...call, account, blockTag: 'latest' }))
        const gas = (estimated * GAS_MARGIN_PERCENT) / 100n
        // The reads and the simulation take time: the nonce is ours to send at only while the lease still is.
        if (!holds()) return { kind: 'failed', nonce, reason: `the relayer lease ${lease} was lost before sending; nothing was sent` }
        if (stopping.signal.aborted) return { kind: 'failed', nonce, reason: STOPPED_REASON }
        // Nothing is sent once close() is called, even mid-submission: no first send (the fee read takes time), no
        // replacement and no cancel; a submission already sent is only waited for.
        const unlessStopped = (sending: () => Promise<Hash>): Promise<Hash> =>
          stopping.signal.aborted ? Promise.reject(new RelayerStoppedError()) : sending()
        submission = await submitWithFeeBumps({
          ...(taking === undefined ? {} : { replacing: taking }),
          publicClient: destination.publicClient,
          send: (fees) =>
            unlessStopped(() =>
              call.functionName === 'relayCctp'
                ? destination.walletClient.writeContract({ ...call, nonce: txNonce, gas, ...fees })
                : destination.walletClient.writeContract({ ...call, nonce: txNonce, gas, ...fees }),
            ),
          cancel: (fees) =>
            unlessStopped(() => destination.walletClient.sendTransaction({ to: account, value: 0n, nonce: txNonce, ...fees })),
          canReplace: async () => holds() && !stopping.signal.aborted,
          isDoneElsewhere: async () =>
            (await destination.publicClient.readContract({
              address: destination.transmitter,
              abi: messageTransmitterAbi,
              functionName: 'usedNonces',
              args: [nonce],
            })) === 1n,
          // Kept at each send, so a relay cut short by a stop is known as ours at the next start.
          onSent: (sent) => held.sent(choice, nonce, sent),
          timeoutMs: receiptTimeoutMs,
          bumpAfterMs,
          // Waiting on the chain is wall time, whatever clock the attestation deadline reads.
          clock: Date.now,
          onCeilingGivenUp: (given) =>
            log.warn(
              {
                event: 'cctp_relay_fee_ceiling_renewed',
                chain: destination.chain,
                key_nonce: txNonce,
                nonce,
                old_fee_ceiling: given.oldCeiling.toString(),
                fee_ceiling: given.ceiling.toString(),
                max_fee_per_gas: given.fees.maxFeePerGas.toString(),
                reason: `the stuck submission of ours at the key's nonce ${txNonce} on ${destination.chain} is no longer in the node's pool (the pending count is back at it) and the chain asks ${given.fees.maxFeePerGas} wei per gas, above its fee ceiling of ${given.oldCeiling}: that ceiling is given up, and this relay is sent at the chain's fees under a fresh one`,
              },
              'cctp_relay_fee_ceiling_renewed',
            ),
          onReplaced: (replacement) =>
            log.info(
              {
                event: replacement.cancel ? 'cctp_relay_cancelled' : 'cctp_relay_fee_bumped',
                chain: destination.chain,
                nonce,
                transaction: replacement.hash,
                max_fee_per_gas: replacement.fees.maxFeePerGas.toString(),
                max_priority_fee_per_gas: replacement.fees.maxPriorityFeePerGas.toString(),
              },
              replacement.cancel ? 'cctp_relay_cancelled' : 'cctp_relay_fee_bumped',
            ),
        })
      } catch (error) {
        if (error instanceof RelayerStoppedError) return { kind: 'failed', nonce, reason: STOPPED_REASON }
        const revert = revertReason(error)
        return {
          kind: 'failed',
          nonce,
          reason: revert === undefined ? `sending ${what} failed on ${destination.chain}` : `${what} reverts: ${revert}`,
        }
      }
      // Unmined, or unknown (the RPC failed to answer): still pending at the nonce, as far as the relayer knows, with
      // the submissions it replaced; mined (or taken): forgotten. Nothing sent: kept as it was.
      await held.settle(choice, nonce, submission)
      if (submission.kind === 'nonce_taken')
        return {
          kind: 'failed',
          nonce,
          reason: `the key's nonce on ${destination.chain} was taken by ${submission.receipt.transactionHash}, not one of ours (another sender with the key); a later call reads usedNonces again`,
        }
      // Nothing sent: the stuck relay is kept as it was, still to be taken over (or mined) at its nonce.
      if (submission.kind === 'not_sent')
        return {
          kind: 'failed',
          nonce,
          reason: `nothing sent: the key's nonce ${txNonce} on ${destination.chain} is held by a stuck relay of ours, and outbidding it would pass the nonce's fee ceiling (${submission.feeCeiling} wei per gas, ${MAX_FEE_MULTIPLE}× its first submission's); this message is relayed again by the sweep`,
        }
      if (submission.kind === 'earlier_mined') {
        // Our own stuck relay took the nonce (its message is received); this message is not, unless someone did it.
        const received = await destination.publicClient
          .readContract({ address: destination.transmitter, abi: messageTransmitterAbi, functionName: 'usedNonces', args: [nonce] })
          .then((used) => used === 1n)
          .catch(() => false)
        if (received) return { kind: 'already_received', nonce }
        return {
          kind: 'failed',
          nonce,
          reason: `the stuck submission of ours this replaced at the key's nonce ${txNonce} on ${destination.chain} (a relay or compose retry from the key) was mined instead (${submission.receipt.transactionHash}); this message is relayed again by the sweep`,
          transaction: submission.receipt.transactionHash,
        }
      }
      if (submission.kind === 'not_mined' || submission.kind === 'rpc_failed') {
        // Still pending: a later call reads usedNonces; if one of these mines later, a resubmission only reverts.
        const hash = submission.hashes[submission.hashes.length - 1] as Hash
        return {
          kind: 'failed',
          nonce,
          reason:
            submission.kind === 'not_mined'
              ? `${what} ${hash} not mined within ${receiptTimeoutMs / 1000} s (${submission.hashes.length} submissions, fees raised each ${bumpAfterMs / 1000} s)`
              : `${what} ${hash}: its receipt could not be read on ${destination.chain} (RPC error: ${submission.reason}); it may still be mined`,
          transaction: hash,
        }
      }
      const { receipt } = submission
      // Someone else minted it while ours waited, and our cancel took the nonce back.
      if (submission.cancelled) return { kind: 'already_received', nonce }
      if (receipt.status === 'success') return { kind: 'relayed', nonce, transaction: receipt.transactionHash, gasUsed: receipt.gasUsed }
      return {
        kind: 'failed',
        nonce,
        reason: `${what} reverted on chain (the message was received meanwhile)`,
        transaction: receipt.transactionHash,
      }
    })
    if (outcome === 'stopped') return { kind: 'failed', nonce, reason: STOPPED_REASON }
    return outcome === 'lease_unavailable'
      ? { kind: 'failed', nonce, reason: `another replica held the relayer lease ${lease} throughout` }
      : outcome
  }

  async function relayForSwap(record: RelayRecord, receipt: RelayReceipt): Promise<RelayOutcome> {
    const { ref, fromChain } = record
    const burns = burnsToRelay(record, receipt)
    if (burns.length === 0) return { ref, messages: [] }
    const sourceDomain = sourceDomains[fromChain]
    if (sourceDomain === undefined)
      return { ref, messages: [{ kind: 'failed', nonce: null, reason: `${fromChain} has no CCTP domain in the catalogue` }] }
    let attested: AttestedMessage[]
    try {
      attested = await attestations.waitForAttestation(sourceDomain, receipt.transactionHash, {
        deadlineMs: clock() + attestationWaitMs,
        now: clock,
        signal: stopping.signal,
      })
    } catch (error) {
      const reason = error instanceof AttestationServiceError ? error.message : 'the relayer stopped before the attestation came'
      log.warn(
        { event: 'cctp_attestation_missing', swap_ref: ref, transaction: receipt.transactionHash, reason },
        'cctp_attestation_missing',
      )
      return { ref, messages: [{ kind: 'failed', nonce: null, reason }] }
    }
    const messages: MessageRelayOutcome[] = []
    // Each attested message answers one burn: of two burns alike in every field, the second takes the second message.
    const taken = new Set<AttestedMessage>()
    for (const { burn, destination } of burns) {
      const match = attested.find((entry) => {
        if (taken.has(entry)) return false
        const fields = attestedMessageFields(entry.message)
        return fields !== undefined && isSameBurn(burn, fields)
      })
      if (match !== undefined) taken.add(match)
      if (match === undefined) {
        messages.push({ kind: 'failed', nonce: null, reason: 'the attestation service gave no message for this burn' })
        continue
      }
      const outcome = await relayMessage(destination, match)
      messages.push(outcome)
      log.info(
        {
          event: `cctp_${outcome.kind}`,
          swap_ref: ref,
          chain: destination.chain,
          nonce: outcome.nonce,
          ...(outcome.kind === 'relayed' ? { transaction: outcome.transaction, gas_used: outcome.gasUsed.toString() } : {}),
          ...(outcome.kind === 'failed' ? { reason: outcome.reason } : {}),
        },
        `cctp_${outcome.kind}`,
      )
    }
    return { ref, messages }
  }

  return {
    async relayForSwap(record, receipt) {
      try {
        return await relayForSwap(record, receipt)
      } catch (error) {
        log.error({ event: 'cctp_relay_error', swap_ref: record.ref, err: error }, 'cctp_relay_error')
        return { ref: record.ref, messages: [{ kind: 'failed', nonce: null, reason: 'the relayer failed unexpectedly (logged)' }] }
      }
    },
    relayMessage,
    hasBurnsToRelay(record, receipt) {
      return burnsToRelay(record, receipt).length > 0
    },
    async close() {
      stopping.abort()
      await Promise.allSettled([...localQueues.values()])
    },
  }
}

/**
 * The lease of one relayer key on one chain: whoever holds it is the only sender from the key there (CCTP relays and
 * LayerZero compose retries alike), so the nonce read inside it is the next one.
 */
export function relayerLeaseName(chain: string, account: Address): string {
  return `relayer:${chain}:${account.toLowerCase()}`
}

/** The contract's revert reason, or undefined when the error is not a revert (an RPC or transport failure). */
function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined
  return reverted.reason ?? reverted.shortMessage
}
