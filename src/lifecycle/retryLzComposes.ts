import type { Logger } from 'pino'
import { type Address, BaseError, ContractFunctionRevertedError, type Hash, type Hex, keccak256, parseAbi, parseAbiItem } from 'viem'
import type { LeaseStore } from '../store/createLifecycleStore.ts'
import { relayerLeaseName } from './cctpRelayer.ts'

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

/** An alert as the retrier reads it from the chain. */
type ComposeAlert = { from: Address; guid: Hex; index: number; message: Hex; extraData: Hex; blockNumber: bigint }

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
    getTransactionCount(parameters: { address: Address; blockTag: 'pending' }): Promise<number>
    waitForTransactionReceipt(parameters: { hash: Hash; timeout: number }): Promise<{ status: 'success' | 'reverted' }>
  }
  walletClient: { account: { address: Address }; writeContract(parameters: LzComposeCall & { nonce: number }): Promise<Hash> }
}

export type LzComposeRetryOutcome =
  | { kind: 'retried'; chain: string; guid: Hex; transaction: Hash }
  | { kind: 'failed'; chain: string; guid: Hex; reason: string }

export type LzComposeRetrier = {
  /** Reads new alerts on each chain (from `lookbackBlocks` before the head at first) and retries every compose still queued. */
  sweep(): Promise<LzComposeRetryOutcome[]>
}

export type LzComposeRetrierParameters = {
  destinations: readonly LzRetryDestination[]
  leases: LeaseStore
  holder: string
  log: Logger
  /** How far back the first sweep looks for alerts. Default 10 000 blocks. */
  lookbackBlocks?: bigint
  /** Default 120 000. */
  receiptTimeoutMs?: number
}

const RECEIVED_MESSAGE_HASH: Hex = `0x${'0'.repeat(63)}1`

/**
 * Retries LayerZero composes to our executor that failed (LzComposeAlert): the endpoint keeps such a compose queued
 * with its message's hash, and anyone may deliver it with `lzCompose`, which clears the entry before it calls, so a
 * duplicate retry reverts (LZ_ComposeNotFound) and cannot run the order twice. One replica sends from the key on a
 * chain at a time (the lease `relayer:<chain>:<address>`, shared with the CCTP relayer under another holder name, so
 * the two never race for a nonce), reading the queue before it simulates and sends.
 */
export function createLzComposeRetrier(parameters: LzComposeRetrierParameters): LzComposeRetrier {
  const { destinations, leases, holder, log } = parameters
  const lookbackBlocks = parameters.lookbackBlocks ?? 10_000n
  const receiptTimeoutMs = parameters.receiptTimeoutMs ?? 120_000
  /** Per chain: the next block to read alerts from, and the alerts not yet delivered. */
  const state = new Map<string, { nextBlock: bigint; open: Map<string, ComposeAlert> }>()

  async function retryOne(destination: LzRetryDestination, alert: ComposeAlert): Promise<LzComposeRetryOutcome | 'done'> {
    const { chain, endpoint, executor, publicClient, walletClient } = destination
    const queued = await publicClient.readContract({
      address: endpoint,
      abi: endpointV2ComposeAbi,
      functionName: 'composeQueue',
      args: [alert.from, executor, alert.guid, alert.index],
    })
    // Delivered since (by us, another replica, anyone), or not ours to deliver.
    if (queued === RECEIVED_MESSAGE_HASH || queued !== keccak256(alert.message)) return 'done'
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
    const nonce = await publicClient.getTransactionCount({ address: account, blockTag: 'pending' })
    const hash = await walletClient.writeContract({ ...call, nonce })
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs })
    return receipt.status === 'success'
      ? { kind: 'retried', chain, guid: alert.guid, transaction: hash }
      : { kind: 'failed', chain, guid: alert.guid, reason: `lzCompose ${hash} reverted` }
  }

  async function sweepChain(destination: LzRetryDestination): Promise<LzComposeRetryOutcome[]> {
    const { chain, publicClient } = destination
    const head = await publicClient.getBlockNumber()
    const known = state.get(chain) ?? { nextBlock: head > lookbackBlocks ? head - lookbackBlocks : 0n, open: new Map() }
    state.set(chain, known)
    if (known.nextBlock <= head) {
      const logs = await publicClient.getLogs({
        address: destination.endpoint,
        event: lzComposeAlertEvent,
        args: { to: destination.executor },
        fromBlock: known.nextBlock,
        toBlock: head,
      })
      for (const entry of logs) {
        const { from, guid, index, message, extraData } = entry.args as {
          from: Address
          guid: Hex
          index: number
          message: Hex
          extraData: Hex
        }
        known.open.set(`${guid}:${index}`, { from, guid, index, message, extraData, blockNumber: entry.blockNumber ?? head })
      }
      known.nextBlock = head + 1n
    }
    const outcomes: LzComposeRetryOutcome[] = []
    for (const [key, alert] of known.open) {
      let outcome: LzComposeRetryOutcome | 'done'
      try {
        outcome = await retryOne(destination, alert)
      } catch (error) {
        outcome = { kind: 'failed', chain, guid: alert.guid, reason: error instanceof Error ? error.message : String(error) }
      }
      if (outcome === 'done' || outcome.kind === 'retried') known.open.delete(key)
      if (outcome !== 'done') {
        outcomes.push(outcome)
        log.info({ event: `lz_compose_${outcome.kind}`, ...outcome }, `lz_compose_${outcome.kind}`)
      }
    }
    return outcomes
  }

  return {
    async sweep() {
      const outcomes: LzComposeRetryOutcome[] = []
      for (const destination of destinations) {
        const lease = relayerLeaseName(destination.chain, destination.walletClient.account.address)
        if (!(await leases.tryAcquire(lease, holder, 120_000))) continue
        try {
          outcomes.push(...(await sweepChain(destination)))
        } finally {
          await leases.release(lease, holder).catch(() => {})
        }
      }
      return outcomes
    },
  }
}

function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined
  return reverted.reason ?? reverted.shortMessage
}
