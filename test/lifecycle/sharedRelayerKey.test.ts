// The CCTP relayer and the LayerZero compose retrier send from one relayer key (under one lease, never at once). Their
// submissions still unmined at a nonce are kept in one place in the store, so neither queues behind the other's stuck
// one: each takes the other's nonce over, outbidding it, and a submission of either mined there counts as ours. The
// chain is a scripted client of both that mines nothing; the store is PGlite.
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
import type { AttestationClient } from '../../src/lifecycle/attestationClient.ts'
import { type CctpDestination, createCctpRelayer } from '../../src/lifecycle/cctpRelayer.ts'
import { createLzComposeRetrier, type LzRetryDestination } from '../../src/lifecycle/retryLzComposes.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import type { LeaseStore } from '../../src/store/createLifecycleStore.ts'
import { runDestinationInputs } from '../../src/tx/abis.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { BASE_DOMAIN, cctpBurnMessage, POLYGON_DOMAIN } from './cctpTestMessages.ts'

const KEY: Address = '0x000000000000000000000000000000000000bEEF'
const executor: Address = '0x00000000000000000000000000000000000000e2'
const oft: Address = '0x0000000000000000000000000000000000000F70'
/** The key's mined count: nothing of ours is mined from here on. */
const MINED_NONCE = 7
let opened: OpenedStore

beforeAll(async () => {
  opened = await storeDrivers()[0]!.open()
})
afterAll(async () => {
  await opened?.cleanup()
})

/** An OFT compose message (nonce, srcEid, amountLD, composeFrom) carrying a DestinationOrder for `ref`. */
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

/** Polygon for both submitters: one key, one pool that mines nothing, one compose alert for `ref` still queued. */
function sharedChain(ref: string) {
  const sent: { nonce: number; call: string; maxFeePerGas: bigint }[] = []
  const alert = { from: oft, guid: `0x${'9'.repeat(64)}` as Hex, index: 0 }
  const publicClient = {
    getBlockNumber: async () => 1_000n,
    getLogs: async () => [{ args: { ...alert, message: composeMessage(ref), extraData: '0x' }, blockNumber: 900n }],
    // The transmitter's usedNonces (nothing received) or the endpoint's composeQueue (still queued).
    readContract: async ({ functionName }: { functionName: string }) =>
      functionName === 'usedNonces' ? 0n : keccak256(composeMessage(ref)),
    simulateContract: async () => ({}),
    getTransactionCount: async ({ blockTag }: { blockTag: 'latest' | 'pending' }) =>
      blockTag === 'latest' ? MINED_NONCE : Math.max(MINED_NONCE, ...sent.map((entry) => entry.nonce + 1)),
    estimateFeesPerGas: async () => ({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }),
    estimateContractGas: async () => 200_000n,
    waitForTransactionReceipt: async ({ hash, timeout }: { hash: Hash; timeout: number }) => {
      await new Promise((resolve) => setTimeout(resolve, timeout))
      throw new WaitForTransactionReceiptTimeoutError({ hash })
    },
    getTransactionReceipt: async ({ hash }: { hash: Hash }) => {
      throw new TransactionReceiptNotFoundError({ hash })
    },
  }
  const walletClient = {
    account: { address: KEY },
    writeContract: async ({ functionName, nonce, maxFeePerGas }: { functionName: string; nonce: number; maxFeePerGas: bigint }) => {
      sent.push({ nonce, call: functionName, maxFeePerGas })
      return `0x${sent.length.toString(16).padStart(64, '0')}` as Hash
    },
  }
  const cctp = {
    chain: 'POL',
    domain: POLYGON_DOMAIN,
    executor,
    transmitter: '0x00000000000000000000000000000000000000f1',
    publicClient,
    walletClient,
  }
  const lz = { chain: 'POL', endpoint: '0x1a44076050125825900e736c501f859c50fE728c', executor, publicClient, walletClient }
  return { cctp: cctp as unknown as CctpDestination, lz: lz as unknown as LzRetryDestination, sent }
}

const freeLeases: LeaseStore = { tryAcquire: async () => true, renew: async () => true, release: async () => {} }

async function recordPending(ref: string): Promise<void> {
  await opened.store.recordKeyedSwap({
    ref,
    channel: 'api_key',
    status: 'built',
    fromChain: 'BAS',
    toChain: 'POL',
    fromToken: 'USDC',
    toToken: 'USDC',
    fromAmount: '1',
    toAmount: '1',
    toAmountMin: '1',
    fromAddress: executor,
    toAddress: executor,
    quote: {},
    transactionRequest: {},
    keyId: 'k_shared_key',
    createdAt: new Date(),
  })
  const source = { chain: 'BAS', txHash: `0x${'ab'.repeat(32)}`, blockNumber: 1n, blockHash: `0x${'cd'.repeat(32)}`, logIndex: 0 }
  await opened.store.lifecycle.update(ref, { state: 'pending', legs: { source }, at: new Date() }, ['built'])
}

describe('one relayer key, two submitters', () => {
  it("a compose retry takes a stuck CCTP relay's nonce over, and the relay's message goes again only there: one nonce, each an eighth above", async () => {
    const ref = newSwapRef(Date.now())
    await recordPending(ref)
    const chain = sharedChain(ref)
    const common = {
      leases: freeLeases,
      submissions: opened.store.lifecycle.submissions,
      log: pino({ level: 'silent' }),
      bumpAfterMs: 60_000,
    }
    const relayer = createCctpRelayer({
      ...common,
      attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
      sourceDomains: { BAS: BASE_DOMAIN },
      destinations: [chain.cctp],
      holder: 'replica-a:cctp',
      receiptTimeoutMs: 200,
    })
    const retrier = createLzComposeRetrier({
      ...common,
      destinations: [chain.lz],
      lifecycle: opened.store.lifecycle,
      holder: 'replica-a:lz',
      receiptTimeoutMs: 200,
    })
    const attested = { message: cctpBurnMessage(1), attestation: '0x01' as Hex, eventNonce: null }
    expect(await relayer.relayMessage(chain.cctp, attested)).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/not mined within 0.2 s/),
    })
    expect(await retrier.sweep()).toMatchObject([{ kind: 'failed', reason: 'lzCompose not mined within 0.2 s' }])
    expect(await relayer.relayMessage(chain.cctp, attested)).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/not mined within 0.2 s/),
    })
    await retrier.close()
    await relayer.close()
    // Nothing went behind the stuck one at the next nonce, where it would wait for it (and the relay sent twice could
    // be mined twice, the second reverting).
    expect(chain.sent).toEqual([
      { nonce: MINED_NONCE, call: 'receiveMessage', maxFeePerGas: 100n },
      { nonce: MINED_NONCE, call: 'lzCompose', maxFeePerGas: 113n },
      { nonce: MINED_NONCE, call: 'receiveMessage', maxFeePerGas: 128n },
    ])
  })
})
