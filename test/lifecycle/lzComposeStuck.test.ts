// A LayerZero compose retry given up on while still unmined (review of the relayer): the next sweep replaces it at its
// nonce with higher fees, as the CCTP relayer replaces a stuck relay, instead of sending another lzCompose at the next
// nonce behind it each minute. The chain is a scripted client that mines nothing; the store is PGlite.
import pino from 'pino'
import {
  type Address,
  concatHex,
  encodeAbiParameters,
  type Hash,
  type Hex,
  keccak256,
  padHex,
  stringToHex,
  TransactionReceiptNotFoundError,
  WaitForTransactionReceiptTimeoutError,
} from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { relayerLeaseName } from '../../src/lifecycle/cctpRelayer.ts'
import { createLzComposeRetrier, type LzRetryDestination } from '../../src/lifecycle/retryLzComposes.ts'
import type { SubmissionFees, SubmissionReceipt } from '../../src/lifecycle/submitWithFeeBumps.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import type { LeaseStore } from '../../src/store/createLifecycleStore.ts'
import type { SubmissionStore } from '../../src/store/createSubmissionStore.ts'
import { runDestinationInputs } from '../../src/tx/abis.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { cuttableSubmissions } from './cuttableSubmissions.ts'

const executor: Address = '0x000000000000000000000000000000000000dEaD'
const oft: Address = '0x0000000000000000000000000000000000000F70'
/** The key's next nonce on chain: nothing of ours is mined from here on. */
const MINED_NONCE = 7
let opened: OpenedStore

beforeAll(async () => {
  opened = await storeDrivers()[0]!.open()
})
afterAll(async () => {
  await opened?.cleanup()
})

/** An OFT compose message (nonce, srcEid, amountLD, composeFrom: 76 bytes) carrying a DestinationOrder for `ref`. */
function composeMessage(ref: string): Hex {
  const order = {
    ref: stringToHex(ref, { size: 32 }),
    token: oft,
    tokenOut: oft,
    minOut: 1n,
    recipient: executor,
    deadline: 2n ** 40n,
    calls: [],
  }
  return concatHex([
    padHex('0x01', { size: 12 }),
    padHex('0x64', { size: 32 }),
    padHex(oft),
    encodeAbiParameters(runDestinationInputs, [order]),
  ])
}

/**
 * ARB with one alert for each of `refs`, still queued; every lzCompose sent goes to the pool and stays there. Once
 * `mineFirstOnNextSend` is set, the next send is answered by the first retry being mined instead (the compose
 * delivered), and viem's wait on the new one follows it there.
 */
function chainThatMinesNothing(...refs: string[]) {
  return chainWith({}, ...refs)
}

type ChainOptions = {
  /** The chain's fee cap asked now (100 unless given). */
  fees?: () => bigint
  /** The pool's pending count, given the highest nonce sent (one past it unless given, never below MINED_NONCE). */
  pending?: (sentMax: number | undefined) => number
}

function chainWith(options: ChainOptions, ...refs: string[]) {
  const sent: ({ nonce: number } & SubmissionFees)[] = []
  const alerts = refs.map((ref, at) => ({ from: oft, guid: `0x${(9 - at).toString(16).repeat(64)}` as Hex, index: 0, ref }))
  const state = { mineFirstOnNextSend: false, mined: undefined as SubmissionReceipt | undefined }
  const destination = {
    chain: 'ARB',
    endpoint: '0x1a44076050125825900e736c501f859c50fE728c',
    executor,
    publicClient: {
      getBlockNumber: async () => 1_000n,
      getLogs: async () =>
        alerts.map(({ ref, ...alert }) => ({ args: { ...alert, message: composeMessage(ref), extraData: '0x' }, blockNumber: 900n })),
      readContract: async ({ args }: { args: readonly [Address, Address, Hex, number] }) => {
        const alert = alerts.find((entry) => entry.guid === args[2])!
        return state.mined === undefined ? keccak256(composeMessage(alert.ref)) : `0x${'0'.repeat(63)}1`
      },
      simulateContract: async () => ({}),
      // The pool's count: one past the highest nonce sent.
      getTransactionCount: async ({ blockTag }: { blockTag: 'latest' | 'pending' }) => {
        if (blockTag === 'latest' && state.mined === undefined) return MINED_NONCE
        const sentMax = sent.length === 0 ? undefined : Math.max(...sent.map((entry) => entry.nonce))
        return options.pending?.(sentMax) ?? Math.max(MINED_NONCE, (sentMax ?? MINED_NONCE - 1) + 1)
      },
      estimateFeesPerGas: async () => ({ maxFeePerGas: options.fees?.() ?? 100n, maxPriorityFeePerGas: 10n }),
      estimateContractGas: async () => 200_000n,
      waitForTransactionReceipt: async ({ hash, timeout }: { hash: Hash; timeout: number }) => {
        if (state.mined !== undefined) return state.mined
        await new Promise((resolve) => setTimeout(resolve, timeout))
        throw new WaitForTransactionReceiptTimeoutError({ hash })
      },
      getTransactionReceipt: async ({ hash }: { hash: Hash }) => {
        if (state.mined?.transactionHash === hash) return state.mined
        throw new TransactionReceiptNotFoundError({ hash })
      },
    },
    walletClient: {
      account: { address: '0x000000000000000000000000000000000000bEEF' },
      writeContract: async ({ nonce, maxFeePerGas, maxPriorityFeePerGas }: { nonce: number } & SubmissionFees) => {
        sent.push({ nonce, maxFeePerGas, maxPriorityFeePerGas })
        if (state.mineFirstOnNextSend) state.mined = { status: 'success', gasUsed: 100_000n, transactionHash: hashOf(1) }
        return hashOf(sent.length)
      },
    },
  } as unknown as LzRetryDestination
  return { destination, sent, state }
}

const hashOf = (n: number): Hash => `0x${String(n).padStart(64, '0')}`

const freeLeases: LeaseStore = { tryAcquire: async () => true, renew: async () => true, release: async () => {} }

async function recordPending(ref: string): Promise<void> {
  await opened.store.recordKeyedSwap({
    ref,
    channel: 'api_key',
    status: 'built',
    fromChain: 'BAS',
    toChain: 'ARB',
    fromToken: 'USDC',
    toToken: 'USDC',
    fromAmount: '1',
    toAmount: '1',
    toAmountMin: '1',
    fromAddress: executor,
    toAddress: executor,
    quote: {},
    transactionRequest: {},
    keyId: 'k_lz_stuck',
    createdAt: new Date(),
  })
  const source = { chain: 'BAS', txHash: `0x${'ab'.repeat(32)}`, blockNumber: 1n, blockHash: `0x${'cd'.repeat(32)}`, logIndex: 0 }
  await opened.store.lifecycle.update(ref, { state: 'pending', legs: { source }, at: new Date() }, ['built'])
}

describe('a compose retry given up on while still unmined', () => {
  it('is replaced by the next sweep at its nonce, an eighth above its fees, never followed by another at the next nonce', async () => {
    const ref = newSwapRef(Date.now())
    await recordPending(ref)
    const chain = chainThatMinesNothing(ref)
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log: pino({ level: 'silent' }),
      // No replacement within one sweep: each ends with its retry still in the pool.
      receiptTimeoutMs: 300,
      bumpAfterMs: 60_000,
    })
    for (let sweep = 0; sweep < 3; sweep++)
      expect(await retrier.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.3 s' }])
    await retrier.close()
    expect(chain.sent).toEqual([
      { nonce: MINED_NONCE, maxFeePerGas: 100n, maxPriorityFeePerGas: 10n },
      { nonce: MINED_NONCE, maxFeePerGas: 113n, maxPriorityFeePerGas: 12n },
      { nonce: MINED_NONCE, maxFeePerGas: 128n, maxPriorityFeePerGas: 14n },
    ])
  })

  it('once the stuck retry, not its replacement, is mined, the compose is delivered: nothing more, never "not ours"', async () => {
    const ref = newSwapRef(Date.now())
    await recordPending(ref)
    const chain = chainThatMinesNothing(ref)
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log: pino({ level: 'silent' }),
      receiptTimeoutMs: 300,
      bumpAfterMs: 60_000,
    })
    expect(await retrier.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.3 s' }])
    chain.state.mineFirstOnNextSend = true
    expect(await retrier.sweep()).toEqual([])
    expect(await retrier.sweep()).toEqual([])
    await retrier.close()
    expect(chain.sent.map((entry) => entry.nonce)).toEqual([MINED_NONCE, MINED_NONCE])
  })

  it("never pays past 5× the first retry's fee cap at the nonce, however many alerts and sweeps replace it", async () => {
    const [first, second] = [newSwapRef(Date.now()), newSwapRef(Date.now())]
    await recordPending(first)
    await recordPending(second)
    const chain = chainThatMinesNothing(first, second)
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log: pino({ level: 'silent' }),
      // Replaced every 10 ms within a retry's 600 ms: each retry reaches the ceiling before it is given up on.
      receiptTimeoutMs: 600,
      bumpAfterMs: 10,
    })
    const sweeps = []
    for (let sweep = 0; sweep < 3; sweep++) sweeps.push(await retrier.sweep())
    await retrier.close()
    // The chain asks 100: the nonce's ceiling is 500, whichever alert or sweep sends.
    expect(chain.sent[0]).toEqual({ nonce: MINED_NONCE, maxFeePerGas: 100n, maxPriorityFeePerGas: 10n })
    expect(chain.sent.length).toBeGreaterThan(5)
    expect(chain.sent.filter((entry) => entry.maxFeePerGas > 500n)).toEqual([])
    expect(new Set(chain.sent.map((entry) => entry.nonce))).toEqual(new Set([MINED_NONCE]))
    // The first sweep leaves the nonce stuck after one alert: the other waits a sweep, and then nothing fits under the
    // ceiling, so nothing more is sent.
    expect(sweeps[0]).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.6 s' }])
    for (const later of sweeps.slice(1))
      expect(later).toMatchObject([{ kind: 'failed', reason: expect.stringMatching(/^nothing sent: .* fee ceiling \(500 wei per gas/) }])
  })
})

describe('compose retries behind a lower nonce pending (a stuck CCTP relay from the same key holds it)', () => {
  /** The key's mined count stays MINED_NONCE; that nonce is held in the pool by the relay, so pending starts one above. */
  const behindTheRelay = (sentMax: number | undefined) => Math.max(MINED_NONCE + 1, (sentMax ?? 0) + 1)

  it("a compose with a stuck retry of ours goes again only at that retry's nonce, never at the next where both could be mined", async () => {
    const [first, second] = [newSwapRef(Date.now()), newSwapRef(Date.now())]
    await recordPending(first)
    await recordPending(second)
    const chain = chainWith({ pending: behindTheRelay }, first, second)
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log: pino({ level: 'silent' }),
      receiptTimeoutMs: 200,
      bumpAfterMs: 60_000,
    })
    for (let sweep = 0; sweep < 4; sweep++)
      expect(await retrier.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.2 s' }])
    await retrier.close()
    // Each sweep takes over the stuck retry at the nonce above the relay's, outbidding it by an eighth; the pending count
    // (one past it) is never used, and the relay's own nonce is never touched.
    expect(chain.sent.map((entry) => entry.nonce)).toEqual([MINED_NONCE + 1, MINED_NONCE + 1, MINED_NONCE + 1, MINED_NONCE + 1])
    expect(chain.sent.map((entry) => entry.maxFeePerGas)).toEqual([100n, 113n, 128n, 144n])
  })

  it('a stuck retry the node dropped, the chain now above its fee ceiling, gives the ceiling up: retries go on, and a log says why', async () => {
    // Once dropped, the pending count is back at the retry's nonce and the chain asks 600, above its ceiling of 500.
    const state = { dropped: false }
    const ref = newSwapRef(Date.now())
    await recordPending(ref)
    const chain = chainWith(
      {
        fees: () => (state.dropped ? 600n : 100n),
        pending: (sentMax) => (state.dropped ? MINED_NONCE + 1 : behindTheRelay(sentMax)),
      },
      ref,
    )
    let logged = ''
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log: pino({ level: 'info' }, { write: (line: string) => void (logged += line) }),
      // Replaced every 10 ms within a retry's 300 ms: the first reaches its nonce's ceiling of 500.
      receiptTimeoutMs: 300,
      bumpAfterMs: 10,
    })
    expect(await retrier.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.3 s' }])
    expect(chain.sent.at(-1)?.maxFeePerGas).toBeGreaterThan(400n)
    expect(chain.sent.every((entry) => entry.maxFeePerGas <= 500n)).toBe(true)
    state.dropped = true
    const sentBefore = chain.sent.length
    expect(await retrier.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.3 s' }])
    await retrier.close()
    // Sent again at the dropped retry's nonce, at the chain's fees, under a ceiling measured afresh from them.
    const after = chain.sent.slice(sentBefore)
    expect(after[0]).toMatchObject({ nonce: MINED_NONCE + 1, maxFeePerGas: 600n })
    expect(new Set(after.map((entry) => entry.nonce))).toEqual(new Set([MINED_NONCE + 1]))
    expect(after.filter((entry) => entry.maxFeePerGas > 3_000n)).toEqual([])
    expect(logged).toMatch(
      new RegExp(`"event":"lz_compose_fee_ceiling_renewed".*"key_nonce":${MINED_NONCE + 1}.*no longer in the node's pool`),
    )
  })
})

describe('a compose retry cut short by a stop, across a restart (the submissions kept in the store)', () => {
  it('the next process takes the retry over at its nonce, outbidding it, instead of sending the compose again at the next', async () => {
    const ref = newSwapRef(Date.now())
    await recordPending(ref)
    const chain = chainThatMinesNothing(ref)
    const retrierOn = (submissions: SubmissionStore, receiptTimeoutMs: number) =>
      createLzComposeRetrier({
        destinations: [chain.destination],
        leases: freeLeases,
        submissions,
        lifecycle: opened.store.lifecycle,
        holder: 'h',
        log: pino({ level: 'silent' }),
        receiptTimeoutMs,
        bumpAfterMs: 60_000,
      })
    const sender = relayerLeaseName('ARB', '0x000000000000000000000000000000000000bEEF')
    // The first process sends the retry and is killed while it waits for the receipt.
    const killed = cuttableSubmissions(opened.store.lifecycle.submissions)
    const first = retrierOn(killed, 1_500)
    const cutShort = first.sweep()
    await expect
      .poll(() => opened.store.lifecycle.submissions.list(sender), { timeout: 1_000, interval: 20 })
      .toMatchObject([{ nonce: MINED_NONCE, maxFeePerGas: 100n, hashes: [hashOf(1)], feeCeiling: 500n }])
    killed.cut()
    const next = retrierOn(opened.store.lifecycle.submissions, 200)
    expect(await next.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.2 s' }])
    await next.close()
    expect(chain.sent).toEqual([
      { nonce: MINED_NONCE, maxFeePerGas: 100n, maxPriorityFeePerGas: 10n },
      { nonce: MINED_NONCE, maxFeePerGas: 113n, maxPriorityFeePerGas: 12n },
    ])
    expect((await opened.store.lifecycle.submissions.list(sender))[0]?.hashes).toEqual([hashOf(1), hashOf(2)])
    await cutShort
    await first.close()
  })
})
