import { decodeFunctionData, type Hex } from 'viem'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { ChainCursor, TrackedSwap } from '../store/createStore.ts'
import { blockAtOrBefore } from './blockAtOrBefore.ts'
import { blocksWithSenders } from './blocksWithSenders.ts'
import { type ExpectedOrder, expectedOrderOf } from './expectedOrder.ts'
import { refOfBytes32, swappedEvent } from './lifecycleEvents.ts'
import { openSwaps } from './openSwaps.ts'
import { mismatchOf, REOPENABLE, recordSourceFinal, type SwappedLog } from './recordSource.ts'
import { revertReason } from './revertReason.ts'
import { clientOf, runHook, type SourceReceipt, type TrackerClient, type TrackerContext } from './trackerContext.ts'

/** How far back a scan re-reads when the block at its cursor changed: deeper than any reorganisation past the depth. */
const REORG_REWIND_BLOCKS = 64n
/** The most blocks whose transactions are read in one step while swaps are open (to find reverted sources). */
const MAX_TRANSACTION_SCAN_BLOCKS = 200n
/**
 * How far back a chain's first scan reaches for swaps built before any tracker ran: a store that predates the tracker
 * holds swaps long expired, and reading years of blocks for them would hold up every new one. Those older swaps are
 * expired unread (their order could have run only in its ten-minute window).
 */
const FIRST_LOOKBACK_MS = 24 * 3600 * 1000
/** Blocks read at once while looking for reverted sources. */
const BLOCK_READ_CONCURRENCY = 4

/**
 * One step of a chain's source scan, under its lease: reads the router's `Swapped` logs from the block after the
 * cursor up to the last final block (head less the chain's confirmation depth, at most `maxBlockRange` at a time),
 * records each that matches a recorded swap (a batch's legs by their order in the transaction), marks failed the
 * swaps whose transaction reverted in those blocks, expires those whose deadline is before the last block read, and
 * moves the cursor. A cursor block whose hash changed is a reorganisation: the scan rewinds and re-reads. Returns
 * true when blocks remain to be read.
 */
export async function scanSourceChain(context: TrackerContext, chain: ChainCode): Promise<boolean> {
  const client = clientOf(context, chain)
  const { lifecycle } = context.store
  const head = await client.getBlockNumber({ cacheTime: 0 })
  const final = head - BigInt(context.confirmations(chain))
  if (final < 0n) return false
  let cursor = await lifecycle.getCursor(chain)
  if (cursor === undefined) {
    const start = await cursorOf(client, await firstBlock(context, chain, final))
    if (!(await lifecycle.setCursor(chain, start, null))) return true
    context.log.info(
      { event: 'tracker_cursor_started', chain, block: start.block.toString() },
      `tracker: ${chain} is read from block ${start.block}`,
    )
    cursor = start
  }
  // A chain now shorter than the cursor reorganised too (to a shorter chain): there is no block there to compare.
  const atCursor = cursor.block <= head ? await client.getBlock({ blockNumber: cursor.block }) : undefined
  if (atCursor?.hash !== cursor.blockHash) {
    await rewind(context, chain, cursor, final)
    return true
  }
  if (cursor.block >= final) {
    await expireOpen(context, chain, cursor)
    return false
  }
  // Only an order whose deadline is not before the blocks read can run in them (its transaction can revert there).
  const cursorSec = BigInt(Math.floor(cursor.blockTime.getTime() / 1000))
  const catalogue = context.catalogue()
  const open = (await openSwaps(context, [chain])).filter(
    (entry) => entry.lifecycle.state === 'built' && (expectedOrderOf(entry.swap, catalogue)?.deadline ?? 0n) >= cursorSec,
  )
  const range = open.length > 0 && context.maxBlockRange > MAX_TRANSACTION_SCAN_BLOCKS ? MAX_TRANSACTION_SCAN_BLOCKS : context.maxBlockRange
  const fromBlock = cursor.block + 1n
  const toBlock = final < cursor.block + range ? final : cursor.block + range
  const router = context.routerOn(chain).router
  const logs = await client.getLogs({ address: router, event: swappedEvent, fromBlock, toBlock, strict: true })
  await recordSwappedLogs(context, chain, router, logs)
  if (open.length > 0) await recordRevertedSources(context, chain, router, open, fromBlock, toBlock)
  const next = await cursorOf(client, toBlock)
  await expireOpen(context, chain, next)
  await lifecycle.setCursor(chain, next, cursor.block)
  return toBlock < final
}

async function cursorOf(client: TrackerClient, blockNumber: bigint): Promise<ChainCursor> {
  const block = await client.getBlock({ blockNumber })
  return { block: block.number, blockHash: block.hash, blockTime: new Date(Number(block.timestamp) * 1000) }
}

/**
 * Where a chain's first scan starts: before the oldest open swap from it was built (so a swap built while no tracker
 * ran is still found), at most FIRST_LOOKBACK_MS back, or at the last final block when none is open.
 */
async function firstBlock(context: TrackerContext, chain: ChainCode, final: bigint): Promise<bigint> {
  const open = await openSwaps(context, [chain])
  if (open.length === 0) return final
  const oldestMs = Math.max(context.clock() - FIRST_LOOKBACK_MS, Math.min(...open.map((entry) => Date.parse(entry.swap.createdAt))))
  const blockTime = context.catalogue().chains.get(chain)?.blockTimeSec ?? 2
  const start = await blockAtOrBefore(clientOf(context, chain), BigInt(Math.floor(oldestMs / 1000)), blockTime)
  return start < final ? start : final
}

/**
 * The block at the cursor is no longer the one read: the chain reorganised deeper than its confirmation depth. Pending
 * swaps whose source transaction is gone or moved go back to built, and the cursor moves back to re-read.
 */
async function rewind(context: TrackerContext, chain: ChainCode, cursor: ChainCursor, final: bigint): Promise<void> {
  const client = clientOf(context, chain)
  const back = cursor.block > REORG_REWIND_BLOCKS ? cursor.block - REORG_REWIND_BLOCKS : 0n
  const rewindTo = back < final ? back : final
  context.log.warn(
    { event: 'chain_reorg', chain, cursor: cursor.block.toString(), rewind_to: rewindTo.toString() },
    `chain_reorg: the block at the cursor changed on ${chain}; re-reading from ${rewindTo}`,
  )
  for (const tracked of await openSwaps(context, [chain])) {
    const source = tracked.lifecycle.legs.source
    if (tracked.lifecycle.state !== 'pending' || source === undefined || source.blockNumber <= rewindTo) continue
    const receipt = await client.getTransactionReceipt({ hash: source.txHash as Hex }).catch(() => undefined)
    if (receipt?.blockHash === source.blockHash) continue
    await context.store.lifecycle.update(
      tracked.swap.ref,
      {
        state: 'built',
        reason: `source block ${source.blockNumber} was reorganised away; looking for the transaction again`,
        legs: { source: null, bridge: null },
        destinationFromBlock: null,
        at: new Date(context.clock()),
      },
      ['pending'],
    )
  }
  await context.store.lifecycle.setCursor(chain, await cursorOf(client, rewindTo), cursor.block)
}

/** Matches each `Swapped` log to its swap or batch leg, checks it against the record, and records the source final. */
async function recordSwappedLogs(context: TrackerContext, chain: ChainCode, router: string, logs: readonly SwappedLog[]): Promise<void> {
  const client = clientOf(context, chain)
  const byTransaction = new Map<string, SwappedLog[]>()
  for (const log of logs) byTransaction.set(log.transactionHash, [...(byTransaction.get(log.transactionHash) ?? []), log])
  for (const [hash, inTransaction] of byTransaction) {
    let receipt: SourceReceipt | undefined
    let blockTime: bigint | undefined
    const seen = new Map<string, number>()
    for (const log of [...inTransaction].sort((a, b) => a.logIndex - b.logIndex)) {
      const orderRef = refOfBytes32(log.args.ref)
      const position = seen.get(orderRef) ?? 0
      seen.set(orderRef, position + 1)
      const ref = orderRef.startsWith('dsb_') ? `${orderRef}.${position}` : orderRef
      if (!/^(swp|dsb)_/.test(orderRef)) continue
      const tracked = await context.store.lifecycle.getTracked(ref)
      if (tracked === undefined || !REOPENABLE.includes(tracked.lifecycle.state)) continue
      const expected = expectedOrderOf(tracked.swap, context.catalogue())
      if (expected === undefined) continue
      const mismatch = mismatchOf(log, expected, router)
      if (mismatch !== undefined) {
        context.log.warn({ event: 'swapped_mismatch', ref, chain, tx: hash, mismatch }, `swapped_mismatch: ${ref}: ${mismatch}`)
        continue
      }
      receipt ??= await client.getTransactionReceipt({ hash: hash as Hex })
      blockTime ??= (await client.getBlock({ blockNumber: log.blockNumber })).timestamp
      await recordSourceFinal(context, tracked, expected, log, receipt, blockTime)
    }
  }
}

/**
 * A reverted transaction emits no event: the transactions from the senders of open swaps to the router are read
 * (from the blocks in which their nonces moved, blocksWithSenders), and a reverted one whose order carries an open swap's reference fails it (with the revert reason), or
 * expires it when the router refused it for its deadline.
 */
async function recordRevertedSources(
  context: TrackerContext,
  chain: ChainCode,
  router: string,
  open: readonly TrackedSwap[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<void> {
  const client = clientOf(context, chain)
  const catalogue = context.catalogue()
  const bySender = new Map<string, { tracked: TrackedSwap; expected: ExpectedOrder }[]>()
  for (const tracked of open) {
    const expected = expectedOrderOf(tracked.swap, catalogue)
    if (expected === undefined) continue
    const key = expected.sender.toLowerCase()
    bySender.set(key, [...(bySender.get(key) ?? []), { tracked, expected }])
  }
  const senders = [...new Set([...bySender.values()].map((entries) => entries[0]?.expected.sender).filter((s) => s !== undefined))]
  let blocks = await blocksWithSenders(client, senders, fromBlock, toBlock)
  if (blocks === undefined) {
    blocks = []
    for (let block = fromBlock; block <= toBlock; block++) blocks.push(block)
  }
  for (let k = 0; k < blocks.length; k += BLOCK_READ_CONCURRENCY) {
    const read = await Promise.all(
      blocks.slice(k, k + BLOCK_READ_CONCURRENCY).map((blockNumber) => client.getBlock({ blockNumber, includeTransactions: true })),
    )
    for (const block of read) {
      for (const tx of block.transactions) {
        if (tx.to?.toLowerCase() !== router.toLowerCase()) continue
        const candidates = bySender.get(tx.from.toLowerCase())
        if (candidates === undefined) continue
        const receipt = await client.getTransactionReceipt({ hash: tx.hash })
        if (receipt.status !== 'reverted') continue
        const refs = orderRefsOf(tx.input)
        const hit = candidates.filter(({ expected }) => refs[expected.orderIndex] === expected.orderRefBytes32.toLowerCase())
        if (hit.length === 0) continue
        const reason = (await revertReason(client, tx, receipt.blockNumber)) ?? { text: 'reverted', isExpired: false }
        for (const { tracked } of hit) await recordReverted(context, chain, tracked, receipt, reason)
      }
    }
  }
}

/** The references of the orders a router call carries, lowercase bytes32, by position. */
function orderRefsOf(input: Hex): string[] {
  try {
    const decoded = decodeFunctionData({ abi: swapEaziRouterAbi, data: input })
    if (decoded.functionName === 'executeBatch') return (decoded.args[0] as readonly { ref: Hex }[]).map((order) => order.ref.toLowerCase())
    if (decoded.functionName === 'execute' || decoded.functionName === 'executeWithPermit')
      return [(decoded.args[0] as { ref: Hex }).ref.toLowerCase()]
  } catch {
    // not a router call we build
  }
  return []
}

/** A reverted source: failed with its reason, or expired when the router refused it for its deadline. */
export async function recordReverted(
  context: TrackerContext,
  chain: ChainCode,
  tracked: TrackedSwap,
  receipt: SourceReceipt,
  reason: { text: string; isExpired: boolean },
): Promise<void> {
  const ref = tracked.swap.ref
  const source = { chain, txHash: receipt.transactionHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash, logIndex: -1 }
  const moved = await context.store.lifecycle.update(
    ref,
    {
      state: reason.isExpired ? 'expired' : 'failed',
      reason: `source transaction reverted: ${reason.text}`,
      legs: { source },
      at: new Date(context.clock()),
    },
    ['built'],
  )
  if (!moved?.updated) return
  if (reason.isExpired) {
    context.log.info(
      { event: 'swap_expired', ref, chain, tx: receipt.transactionHash },
      'swap_expired: the router refused it for its deadline',
    )
    await runHook(context, 'onFinished', ref, () => context.onFinished?.(moved.record, tracked))
    return
  }
  // Not finished yet: the same signed order may be sent again and run until its deadline (REOPENABLE), so it is
  // handed on as finished (an observation) only once its deadline has passed unrun (expireOpen).
  context.log.info({ event: 'swap_failed', ref, chain, tx: receipt.transactionHash, reason: reason.text }, 'swap_failed: source reverted')
}

/**
 * Built swaps whose deadline is before the time of the last block read: the router refuses them in any later block,
 * and every block up to that one was read without their `Swapped` event, so they never ran.
 */
async function expireOpen(context: TrackerContext, chain: ChainCode, cursor: ChainCursor): Promise<void> {
  const catalogue = context.catalogue()
  const blockTimeSec = BigInt(Math.floor(cursor.blockTime.getTime() / 1000))
  for (const tracked of await openSwaps(context, [chain])) {
    if (tracked.lifecycle.state !== 'built' && tracked.lifecycle.state !== 'failed') continue
    const expected = expectedOrderOf(tracked.swap, catalogue)
    if (expected === undefined || expected.deadline >= blockTimeSec) continue
    if (tracked.lifecycle.state === 'failed') {
      // Reverted and never run again before its deadline: the failure is final now.
      const failed = tracked.lifecycle
      await runHook(context, 'onFinished', tracked.swap.ref, () => context.onFinished?.(failed, tracked))
      continue
    }
    const deadline = new Date(Number(expected.deadline) * 1000).toISOString()
    const moved = await context.store.lifecycle.update(
      tracked.swap.ref,
      {
        state: 'expired',
        reason: `the order's deadline ${deadline} passed with no Swapped event (read to block ${cursor.block} of ${chain})`,
        at: new Date(context.clock()),
      },
      ['built'],
    )
    if (!moved?.updated) continue
    context.log.info({ event: 'swap_expired', ref: tracked.swap.ref, chain, deadline }, 'swap_expired: never ran before its deadline')
    await runHook(context, 'onFinished', tracked.swap.ref, () => context.onFinished?.(moved.record, tracked))
  }
}
