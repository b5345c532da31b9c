// How the LayerZero compose retrier reads alerts and when it sends (review of issue 18 item 4): eth_getLogs in ranges
// of at most maxBlockRange blocks from head - lookback + 1, its position kept in the store (`lz:<chain>`) so a failed
// read is retried over the same range and a restart resumes where it stopped; only a compose whose order is a recorded
// swap pending to that chain is retried; and nothing is sent once the relayer lease could not be renewed. The chain is
// a scripted client; the store is PGlite.
import pino from 'pino'
import { type Address, concatHex, encodeAbiParameters, type Hash, type Hex, keccak256, padHex, stringToHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLzComposeRetrier, type LzRetryDestination, lzCursorName } from '../../src/lifecycle/retryLzComposes.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import type { LeaseStore } from '../../src/store/createLifecycleStore.ts'
import { runDestinationInputs } from '../../src/tx/abis.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'

const log = pino({ level: 'silent' })
const executor: Address = '0x000000000000000000000000000000000000dEaD'
const oft: Address = '0x0000000000000000000000000000000000000F70'
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

type Alert = { block: bigint; ref: string; guid: Hex }

/** A destination whose endpoint alerted `alerts`; records every getLogs range and every send. */
function scriptedChain(chain: string, alerts: Alert[], failReads: () => boolean = () => false) {
  const ranges: [bigint, bigint][] = []
  const sent: Hex[] = []
  const delivered = new Set<Hex>()
  const state = { head: 1_000_000n }
  const destination = {
    chain,
    endpoint: '0x1a44076050125825900e736c501f859c50fE728c',
    executor,
    publicClient: {
      getBlockNumber: async () => state.head,
      getLogs: async ({ fromBlock, toBlock }: { fromBlock: bigint; toBlock: bigint }) => {
        ranges.push([fromBlock, toBlock])
        if (failReads()) throw new Error('query exceeds max block range')
        return alerts
          .filter((alert) => alert.block >= fromBlock && alert.block <= toBlock)
          .map((alert) => ({
            args: { from: oft, guid: alert.guid, index: 0, message: composeMessage(alert.ref), extraData: '0x' },
            blockNumber: alert.block,
          }))
      },
      readContract: async ({ args }: { args: readonly [Address, Address, Hex, number] }) => {
        const alert = alerts.find((entry) => entry.guid === args[2])!
        return delivered.has(alert.guid) ? `0x${'0'.repeat(63)}1` : keccak256(composeMessage(alert.ref))
      },
      simulateContract: async () => ({}),
      getTransactionCount: async () => sent.length,
      estimateFeesPerGas: async () => ({ maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }),
      estimateContractGas: async () => 200_000n,
      waitForTransactionReceipt: async ({ hash }: { hash: Hash }) => ({ status: 'success' as const, gasUsed: 1n, transactionHash: hash }),
      getTransactionReceipt: async ({ hash }: { hash: Hash }) => ({ status: 'success' as const, gasUsed: 1n, transactionHash: hash }),
    },
    walletClient: {
      account: { address: '0x000000000000000000000000000000000000bEEF' },
      writeContract: async ({ args }: { args: readonly [Address, Address, Hex] }) => {
        sent.push(args[2])
        delivered.add(args[2])
        return `0x${String(sent.length).padStart(64, '0')}` as Hash
      },
    },
  } as unknown as LzRetryDestination
  return { destination, ranges, sent, state }
}

const freeLeases: LeaseStore = { tryAcquire: async () => true, renew: async () => true, release: async () => {} }

async function recordPending(ref: string, toChain: string): Promise<void> {
  const { store } = opened
  await store.recordKeyedSwap({
    ref,
    channel: 'api_key',
    status: 'built',
    fromChain: 'BAS',
    toChain,
    fromToken: 'USDC',
    toToken: 'USDC',
    fromAmount: '1',
    toAmount: '1',
    toAmountMin: '1',
    fromAddress: executor,
    toAddress: executor,
    quote: {},
    transactionRequest: {},
    keyId: 'k_lz_scan',
    createdAt: new Date(),
  })
  const source = { chain: 'BAS', txHash: `0x${'ab'.repeat(32)}`, blockNumber: 1n, blockHash: `0x${'cd'.repeat(32)}`, logIndex: 0 }
  await opened.store.lifecycle.update(ref, { state: 'pending', legs: { source }, at: new Date() }, ['built'])
}

describe('reading LzComposeAlert logs', () => {
  it('in ranges of at most 2 000 blocks from head - 10 000 + 1, resuming from the stored position', async () => {
    const { store } = opened
    const chain = scriptedChain('ARB', [])
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: store.lifecycle,
      holder: 'h',
      log,
    })
    await retrier.sweep()
    expect(chain.ranges).toEqual([
      [990_001n, 992_000n],
      [992_001n, 994_000n],
      [994_001n, 996_000n],
      [996_001n, 998_000n],
      [998_001n, 1_000_000n],
    ])
    expect((await store.lifecycle.getCursor(lzCursorName('ARB')))?.block).toBe(1_000_000n)
    // A day of blocks later, in another replica (or after a restart): read on from the stored block, a bounded
    // number of ranges per sweep, and the rest on the next sweep.
    chain.state.head += 100_000n
    chain.ranges.length = 0
    const restarted = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: store.lifecycle,
      holder: 'h',
      log,
      maxRangesPerSweep: 3,
    })
    await restarted.sweep()
    expect(chain.ranges).toEqual([
      [1_000_001n, 1_002_000n],
      [1_002_001n, 1_004_000n],
      [1_004_001n, 1_006_000n],
    ])
    expect((await store.lifecycle.getCursor(lzCursorName('ARB')))?.block).toBe(1_006_000n)
  })

  it('a failed read is retried over the same range, never a larger one', async () => {
    const { store } = opened
    let failing = true
    const chain = scriptedChain('OPT', [], () => failing)
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: store.lifecycle,
      holder: 'h',
      log,
    })
    for (let sweep = 0; sweep < 3; sweep++) {
      chain.state.head += 14_400n
      await expect(retrier.sweep()).rejects.toThrow(/max block range/)
    }
    expect(chain.ranges.every(([from, to]) => to - from + 1n <= 2_000n)).toBe(true)
    const first = chain.ranges[0]![0]
    expect(chain.ranges.every(([from]) => from === first)).toBe(true)
    expect((await store.lifecycle.getCursor(lzCursorName('OPT')))?.block).toBe(first - 1n)
    failing = false
    chain.ranges.length = 0
    await retrier.sweep()
    expect(chain.ranges[0]?.[0]).toBe(first)
    expect(first).toBe(1_000_000n + 14_400n - 10_000n + 1n)
  })
})

describe('which composes are retried', () => {
  it('only one whose order is a recorded swap pending to this chain', async () => {
    const ours = newSwapRef(Date.now())
    const elsewhere = newSwapRef(Date.now() + 1)
    const unknown = newSwapRef(Date.now() + 2)
    await recordPending(ours, 'POL')
    await recordPending(elsewhere, 'ARB')
    const guid = (n: number): Hex => padHex(`0x${n}`, { size: 32 })
    const chain = scriptedChain('POL', [
      { block: 999_990n, ref: ours, guid: guid(1) },
      { block: 999_991n, ref: elsewhere, guid: guid(2) },
      { block: 999_992n, ref: unknown, guid: guid(3) },
    ])
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: freeLeases,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log,
    })
    expect((await retrier.sweep()).map((outcome) => [outcome.kind, outcome.guid])).toEqual([['retried', guid(1)]])
    expect(chain.sent).toEqual([guid(1)])
  })

  it('nothing is sent once the relayer lease could not be renewed (the CCTP relayer may hold the key)', async () => {
    const ref = newSwapRef(Date.now() + 10)
    await recordPending(ref, 'GNO')
    const chain = scriptedChain('GNO', [{ block: 999_999n, ref, guid: padHex('0x77', { size: 32 }) }])
    const lost: LeaseStore = { tryAcquire: async () => true, renew: async () => false, release: async () => {} }
    const retrier = createLzComposeRetrier({
      destinations: [chain.destination],
      leases: lost,
      lifecycle: opened.store.lifecycle,
      holder: 'h',
      log,
    })
    expect(await retrier.sweep()).toEqual([])
    expect(chain.sent).toEqual([])
  })
})
