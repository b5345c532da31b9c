import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  erc20Abi,
  getAbiItem,
  type Hash,
  type Hex,
  isAddressEqual,
  isHash,
  type Log,
  parseEventLogs,
  parseSignature,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { PaymentRow } from '../../store/createStore.ts'
import { eip3009Abi } from './eip3009Abi.ts'
import { externalSettler } from './collectExternally.ts'
import type { ExternalSettlement, PaymentRejection, ReconcileOutcome, Settler, VerifiedPayment } from './settlement.ts'

type Eip3009Abi = typeof eip3009Abi

type TransferWithAuthorizationArgs = readonly [
  from: Address,
  to: Address,
  value: bigint,
  validAfter: bigint,
  validBefore: bigint,
  nonce: Hex,
  v: number,
  r: Hex,
  s: Hex,
]

/** The contract call that settles a payment, as both simulation and broadcast take it. */
export type TransferWithAuthorizationCall = {
  address: Address
  abi: Eip3009Abi
  functionName: 'transferWithAuthorization'
  args: TransferWithAuthorizationArgs
}

type AuthorizationStateRead = {
  address: Address
  abi: Eip3009Abi
  functionName: 'authorizationState'
  args: readonly [authorizer: Address, nonce: Hex]
  blockNumber?: bigint
}
type BalanceOfRead = { address: Address; abi: Eip3009Abi; functionName: 'balanceOf'; args: readonly [account: Address] }

/** What settlement reads from Base; a viem public client fits. */
export type OnchainSettlerPublicClient = {
  // One overload per call, so viem's generic readContract is inferred against each. The results are checked at run
  // time: a generic return does not narrow through a structural port (and a test literal may answer anything).
  readContract(parameters: AuthorizationStateRead): Promise<unknown>
  readContract(parameters: BalanceOfRead): Promise<unknown>
  /** Resolves if the call would succeed from `account`; rejects with the revert otherwise. */
  simulateContract(parameters: TransferWithAuthorizationCall & { account: Address }): Promise<unknown>
  waitForTransactionReceipt(parameters: { hash: Hash; timeout: number }): Promise<{ status: 'success' | 'reverted' }>
  /** Rejects with viem's TransactionReceiptNotFoundError while the transaction is not mined. */
  getTransactionReceipt(parameters: { hash: Hash }): Promise<{ status: 'success' | 'reverted'; logs: readonly ReceiptLog[] }>
  /** The node's latest block: reconciliation judges expiry by chain time, at one block. */
  getBlock(parameters: { blockTag: 'latest' }): Promise<{ number: bigint; timestamp: bigint }>
  /** USDC's events of one (authorizer, nonce) in a block range: which transaction used or canceled it. */
  getLogs(parameters: AuthorizationLogsQuery): Promise<readonly { transactionHash: Hash | null }[]>
}

/** A receipt's log as viem gives it: what reconciliation decodes the transfer of a used authorization from. */
type ReceiptLog = { address: Address; topics: readonly Hex[]; data: Hex; logIndex: number | null }

type AuthorizationLogsQuery = {
  address: Address
  event: typeof AUTHORIZATION_USED | typeof AUTHORIZATION_CANCELED
  args: { authorizer: Address; nonce: Hex }
  fromBlock: bigint
  toBlock: bigint
}

const AUTHORIZATION_USED = getAbiItem({ abi: eip3009Abi, name: 'AuthorizationUsed' })
const AUTHORIZATION_CANCELED = getAbiItem({ abi: eip3009Abi, name: 'AuthorizationCanceled' })

/** Base makes a block every 2 s (OP Stack): how reconciliation turns times into the blocks to search. */
const BASE_BLOCK_SECONDS = 2n
/** Blocks searched beyond either end of the estimate: five minutes, for clock skew and a node's lag. */
const LOG_MARGIN_BLOCKS = 150n
/** The widest range one getLogs asks of the node (many limit a query to a few thousand blocks). */
const LOG_CHUNK_BLOCKS = 2_000n
/** An authorization was checked unused when it was reserved: its use is searched from this long before then. */
const BEFORE_RESERVATION_SEC = 60n

/** The gas-paying wallet that broadcasts the settlement; a viem wallet client with an account and a chain fits. */
export type OnchainSettlerWalletClient = {
  account: { address: Address }
  writeContract(parameters: TransferWithAuthorizationCall): Promise<Hash>
}

export type OnchainSettlerParameters = {
  publicClient: OnchainSettlerPublicClient
  walletClient: OnchainSettlerWalletClient
  /** How long to wait for the receipt after broadcasting; past it the outcome is ambiguous. Default 60 000. */
  receiptTimeoutMs?: number
}

const DEFAULT_RECEIPT_TIMEOUT_MS = 60_000

const UNREACHABLE = 'Base could not be reached to settle the payment (RPC error); nothing was charged. Retry shortly with the same payment.'

/**
 * DESIGN 7.10 mode `onchain`: checks the authorization is unused and funded, then broadcasts USDC's
 * `transferWithAuthorization` from our own gas wallet, simulated first so a revert costs nothing and is reported.
 * Every failure is a value; one after the broadcast whose outcome is unknown is marked ambiguous with its hash.
 */
export function onchainSettler(parameters: OnchainSettlerParameters): Settler & ExternalSettlement {
  const { publicClient, walletClient } = parameters
  const receiptTimeoutMs = parameters.receiptTimeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS
  const external: ExternalSettlement = {
    async check(payment) {
      let isUsed: unknown
      let balance: unknown
      try {
        ;[isUsed, balance] = await Promise.all([
          publicClient.readContract({
            address: payment.asset,
            abi: eip3009Abi,
            functionName: 'authorizationState',
            args: [payment.payer, payment.nonce],
          }),
          publicClient.readContract({
            address: payment.asset,
            abi: eip3009Abi,
            functionName: 'balanceOf',
            args: [payment.payer],
          }),
        ])
      } catch {
        return reject(
          'settlement_failed',
          'Base could not be reached to check the payment (RPC error); nothing was charged. Retry shortly with the same payment.',
        )
      }
      if (typeof isUsed !== 'boolean' || typeof balance !== 'bigint')
        return reject('settlement_failed', 'Base gave an unexpected answer about the USDC authorization; nothing was charged.')
      if (isUsed)
        return reject(
          'payment_already_used',
          `The authorization with nonce ${payment.nonce} from ${payment.payer} was already used or canceled on chain; sign a new payment from a fresh challenge.`,
        )
      if (balance < payment.value)
        return reject(
          'insufficient_funds',
          `${payment.payer} holds ${balance} atomic USDC on Base; the fee is ${payment.value}. Fund the wallet and pay again.`,
        )
      return { ok: true }
    },

    async settle(payment) {
      let call: TransferWithAuthorizationCall
      try {
        call = transferWithAuthorizationCall(payment)
      } catch {
        return reject('invalid_signature', 'The signature is not a 65-byte ECDSA signature; pay from an externally owned account.')
      }
      try {
        await publicClient.simulateContract({ ...call, account: walletClient.account.address })
      } catch (error) {
        const revert = revertReason(error)
        if (revert === undefined) return reject('settlement_failed', UNREACHABLE)
        return reject('settlement_failed', `USDC refused the transfer (${revert}); nothing was charged.`)
      }

      let hash: Hash
      try {
        hash = await walletClient.writeContract(call)
      } catch (error) {
        const revert = revertReason(error)
        // Reverted in gas estimation: nothing was sent (another settlement may have won a race since the simulation).
        if (revert !== undefined) return reject('settlement_failed', `USDC refused the transfer (${revert}); nothing was charged.`)
        // Failed while sending: the node may have taken the transaction before the connection broke.
        return {
          ok: false,
          reason: 'settlement_failed',
          isAmbiguous: true,
          message: 'Sending the settlement transaction failed and it may have reached the network; its outcome is being reconciled.',
        }
      }

      let status: 'success' | 'reverted'
      try {
        ;({ status } = await publicClient.waitForTransactionReceipt({ hash, timeout: receiptTimeoutMs }))
      } catch {
        return {
          ok: false,
          reason: 'settlement_failed',
          isAmbiguous: true,
          transaction: hash,
          message: `The settlement transaction ${hash} was broadcast but not confirmed within ${receiptTimeoutMs / 1000} s; its outcome is being reconciled.`,
        }
      }
      // Reverted, but the transaction published the signed authorization: anyone may still submit it until it
      // expires (and one submitted first is why ours reverts), so the payment is held and reconciled, never released.
      if (status !== 'success')
        return {
          ok: false,
          reason: 'settlement_failed',
          isAmbiguous: true,
          transaction: hash,
          message: `The settlement transaction ${hash} reverted on chain, but the signed authorization it published stays valid until ${new Date(Number(payment.validBefore) * 1000).toISOString()} and may have paid, or still pay, through another transaction; the payment is held and reconciled.`,
        }
      return { ok: true, transaction: hash }
    },

    // Expiry is judged by the chain's time, not ours (reconcileOnchain).
    reconcile: (payment) => reconcileOnchain(publicClient, payment),
  }
  return externalSettler('onchain', external)
}

/**
 * Where a payment left unsettled stands on Base, from reads only (nothing is broadcast again): its transaction's
 * receipt, then USDC's `authorizationState`, and for a used one its events (reconcileUsed). Money moved under a
 * successful receipt or an AuthorizationUsed event; it can no longer move once the authorization expired with its
 * nonce unused, or was canceled (a reverted transaction of ours is not enough: anyone may still submit the signed
 * authorization until it expires). Anything else is pending.
 */
async function reconcileOnchain(publicClient: OnchainSettlerPublicClient, payment: PaymentRow): Promise<ReconcileOutcome> {
  const pending = (why: string): ReconcileOutcome => ({ state: 'pending', message: why })
  const hash = payment.transaction !== null && isHash(payment.transaction) ? payment.transaction : undefined
  let receipt: { status: 'success' | 'reverted' } | undefined
  if (hash !== undefined)
    try {
      receipt = await publicClient.getTransactionReceipt({ hash })
    } catch (error) {
      if (!(error instanceof BaseError && error.walk((cause) => cause instanceof TransactionReceiptNotFoundError)))
        return pending('Base could not be reached to look up the settlement (RPC error).')
    }
  if (receipt?.status === 'success' && hash !== undefined) return { state: 'settled', transaction: hash }
  // The authorization's state and its expiry are judged at one block of this node, by chain time: a node that lags
  // can only see an older block, where an unused, unexpired authorization stays pending.
  let isUsed: unknown
  let block: { number: bigint; timestamp: bigint }
  try {
    block = await publicClient.getBlock({ blockTag: 'latest' })
    isUsed = await publicClient.readContract({
      address: payment.asset as Address,
      abi: eip3009Abi,
      functionName: 'authorizationState',
      args: [payment.payer as Address, payment.nonce as Hex],
      blockNumber: block.number,
    })
  } catch {
    return pending('Base could not be reached to look up the authorization (RPC error).')
  }
  if (isUsed === true) return reconcileUsed(publicClient, payment, block, hash)
  if (isUsed !== false) return pending('Base gave an unexpected answer about the authorization.')
  // A reverted settlement spent nothing, but it published the signed authorization: until it expires anyone can
  // still submit it and move the money, so the payment is held (with its swap) until then, never released early.
  if (block.timestamp >= payment.validBefore)
    return { state: 'unused', message: 'The authorization expired unused, so it can no longer move money; nothing was charged.' }
  if (receipt?.status === 'reverted')
    return pending(
      `The settlement transaction ${hash} reverted, but the authorization stays valid until ${new Date(Number(payment.validBefore) * 1000).toISOString()} and could still be submitted; it is released once it expires unused.`,
    )
  return pending(
    hash === undefined
      ? 'The settlement may have reached the network and is not mined yet.'
      : `The settlement transaction ${hash} is not mined yet.`,
  )
}

/**
 * An authorization used or canceled on chain, but not by a transaction of ours known to have succeeded: ours may have
 * confirmed after the request waiting for it stopped (a crash: its hash was never kept), a send that failed may have
 * reached the network, or another party submitted the published authorization first. Found by its AuthorizationUsed
 * event, it settles with that transaction if the transaction paid payTo our value from the payer (ours binds both, but
 * the event only names the payer's nonce, which another authorization of the payer's may have spent: then ours can
 * never move money, and it is released). One its signer canceled (AuthorizationCanceled) is released too.
 */
async function reconcileUsed(
  publicClient: OnchainSettlerPublicClient,
  payment: PaymentRow,
  latest: { number: bigint; timestamp: bigint },
  ours: Hash | undefined,
): Promise<ReconcileOutcome> {
  const { fromBlock, toBlock } = usageBlocks(payment, latest)
  const args = { authorizer: payment.payer as Address, nonce: payment.nonce as Hex }
  const find = async (event: AuthorizationLogsQuery['event']): Promise<{ hash: Hash } | undefined> => {
    for (let from = fromBlock; from <= toBlock; from += LOG_CHUNK_BLOCKS) {
      const to = from + LOG_CHUNK_BLOCKS - 1n < toBlock ? from + LOG_CHUNK_BLOCKS - 1n : toBlock
      const logs = await publicClient.getLogs({ address: payment.asset as Address, event, args, fromBlock: from, toBlock: to })
      const found = logs.find((log) => log.transactionHash !== null)
      if (found?.transactionHash != null) return { hash: found.transactionHash }
    }
    return undefined
  }
  try {
    const used = await find(AUTHORIZATION_USED)
    if (used !== undefined) {
      // The event names (payer, nonce) only, and a payer's nonces are shared by every authorization it signs: one of
      // its own with this nonce (to itself, say) spends it as well. Ours paid only if the transaction moved exactly
      // our value from the payer to payTo, in the Transfer USDC emits right after the event (FiatToken's order).
      const receipt = await publicClient.getTransactionReceipt({ hash: used.hash })
      const paid = paidUs(receipt.logs, payment)
      // Not in the receipt as the logs showed it (a reorg of the unsafe head, nodes behind a balancer that disagree):
      // nothing is decided on it.
      if (paid === undefined)
        return {
          state: 'pending',
          message: `The authorization's use in transaction ${used.hash} could not be read back from its receipt; it is looked up again.`,
        }
      if (paid) return { state: 'settled', transaction: used.hash }
      return {
        state: 'unused',
        message: `The nonce of this authorization was spent on chain by another authorization the payer signed (transaction ${used.hash} moved no ${payment.value} atomic USDC to ${payment.payTo}), so this one can never move money; nothing was charged.`,
      }
    }
    const canceled = await find(AUTHORIZATION_CANCELED)
    if (canceled !== undefined)
      return {
        state: 'unused',
        message: `The payer canceled the authorization on chain (transaction ${canceled.hash}) before it was used, so it moved no money and never will; nothing was charged.`,
      }
  } catch {
    return { state: 'pending', message: 'Base could not be reached to look up which transaction used the authorization (RPC error).' }
  }
  return {
    state: 'pending',
    message: `The authorization was used on chain${ours === undefined ? '' : ` (not by ${ours})`}, but no AuthorizationUsed event of it was found in blocks ${fromBlock} to ${toBlock}; an operator reconciles it.`,
  }
}

/**
 * Whether the transaction whose receipt `logs` are paid us: USDC's Transfer of the payment's value from the payer to
 * payTo right after the AuthorizationUsed of its (payer, nonce) in the same receipt (FiatToken emits nothing between:
 * `_markAuthorizationAsUsed`, then `_transfer`). Both positions are the receipt's own, never compared with those of
 * another call. Undefined when the receipt holds no such AuthorizationUsed.
 */
function paidUs(logs: readonly ReceiptLog[], payment: PaymentRow): boolean | undefined {
  const asset = payment.asset as Address
  const used = parseEventLogs({ abi: eip3009Abi, eventName: 'AuthorizationUsed', logs: logs as Log[], strict: true }).find(
    (log) =>
      isAddressEqual(log.address, asset) &&
      isAddressEqual(log.args.authorizer, payment.payer as Address) &&
      log.args.nonce.toLowerCase() === payment.nonce.toLowerCase(),
  )
  if (used === undefined || used.logIndex === null) return undefined
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: logs as Log[], strict: true })
  return transfers.some(
    (log) =>
      log.logIndex === used.logIndex + 1 &&
      isAddressEqual(log.address, asset) &&
      isAddressEqual(log.args.from, payment.payer as Address) &&
      isAddressEqual(log.args.to, payment.payTo as Address) &&
      log.args.value === payment.value,
  )
}

/**
 * The blocks an authorization can have been used in, estimated from the latest block at Base's block time: from a
 * little before it was reserved (it was checked unused then) to a little after it expired, or the latest block.
 */
function usageBlocks(payment: PaymentRow, latest: { number: bigint; timestamp: bigint }): { fromBlock: bigint; toBlock: bigint } {
  const blocksBefore = (sec: bigint): bigint => (sec >= latest.timestamp ? 0n : (latest.timestamp - sec) / BASE_BLOCK_SECONDS)
  const reservedSec = BigInt(Math.floor(Date.parse(payment.reservedAt) / 1000)) - BEFORE_RESERVATION_SEC
  const from = latest.number - blocksBefore(reservedSec) - LOG_MARGIN_BLOCKS
  const to = latest.number - blocksBefore(payment.validBefore) + LOG_MARGIN_BLOCKS
  return { fromBlock: from < 0n ? 0n : from, toBlock: to > latest.number ? latest.number : to }
}

function transferWithAuthorizationCall(payment: VerifiedPayment): TransferWithAuthorizationCall {
  const { r, s, v, yParity } = parseSignature(payment.signature)
  return {
    address: payment.asset,
    abi: eip3009Abi,
    functionName: 'transferWithAuthorization',
    args: [
      payment.payer,
      payment.payTo,
      payment.value,
      payment.validAfter,
      payment.validBefore,
      payment.nonce,
      v === undefined ? 27 + yParity : Number(v),
      r,
      s,
    ],
  }
}

/** The contract's revert reason, or undefined when the error is not a revert (an RPC or transport failure). */
function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined
  return reverted.reason ?? reverted.shortMessage
}

function reject(reason: PaymentRejection['reason'], message: string): PaymentRejection {
  return { ok: false, reason, message }
}
