import { type Address, encodeAbiParameters, encodeEventTopics, erc20Abi, type Hash, type Hex, pad } from 'viem'
import { describe, expect, it } from 'vitest'
import { eip3009Abi } from '../../src/payments/x402/eip3009Abi.ts'
import { type OnchainSettlerPublicClient, onchainSettler } from '../../src/payments/x402/onchainSettler.ts'
import type { PaymentRow } from '../../src/store/createStore.ts'

// Review of issue 15: on anvil the block range a used authorization is searched in clamps to the whole chain, so
// the estimate from Base's block time and the chunking were never exercised. Here at Base-like heights.

const LATEST = 30_000_000n
const NOW_SEC = 1_800_000_000n
const PAYER: Address = '0x1111111111111111111111111111111111111111'
const PAY_TO: Address = '0x2222222222222222222222222222222222222222'
const USDC: Address = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const NONCE: Hex = `0x${'ab'.repeat(32)}`
const USED_IN: Hash = `0x${'cd'.repeat(32)}`

const reservedAtSec = NOW_SEC - 7_200n
const payment: PaymentRow = {
  payer: PAYER.toLowerCase(),
  nonce: NONCE,
  status: 'unsettled',
  value: 20_000n,
  asset: USDC.toLowerCase(),
  payTo: PAY_TO.toLowerCase(),
  validAfter: 0n,
  validBefore: reservedAtSec + 3_600n,
  signature: '0x',
  settlementMode: 'onchain',
  swapRef: 'swp_01KAAAAAAAAAAAAAAAAAAAAAAA',
  transaction: null,
  error: null,
  reservedAt: new Date(Number(reservedAtSec) * 1000).toISOString(),
  settledAt: null,
  requestKey: null,
  result: null,
}

const logAt = (logIndex: number) => ({
  logIndex,
  blockNumber: LATEST - 1_700n,
  transactionHash: USED_IN,
  transactionIndex: 0,
  blockHash: pad('0x01'),
  removed: false,
})

function usedLog(logIndex: number) {
  return {
    ...logAt(logIndex),
    address: USDC,
    topics: encodeEventTopics({ abi: eip3009Abi, eventName: 'AuthorizationUsed', args: { authorizer: PAYER, nonce: NONCE } }) as Hex[],
    data: '0x' as Hex,
  }
}

function transferLog(to: Address, value: bigint, logIndex: number) {
  return {
    address: USDC,
    topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: PAYER, to } }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint256' }], [value]),
    logIndex,
    blockNumber: LATEST - 1_700n,
    transactionHash: USED_IN,
    transactionIndex: 0,
    blockHash: pad('0x01'),
    removed: false,
  }
}

/**
 * Base at LATEST: the authorization used in block LATEST - 1,700 by USED_IN, which moved `paid` to `to`; its receipt
 * holds the AuthorizationUsed at 3 and the Transfer at 4 (block-wide positions), or `receiptLogs` when given.
 */
function baseAt(paid: { to: Address; value: bigint }, receiptLogs?: ReturnType<typeof usedLog>[]) {
  const ranges: [bigint, bigint][] = []
  const client = {
    readContract: async () => true,
    simulateContract: async () => ({}),
    waitForTransactionReceipt: async () => ({ status: 'success' as const }),
    getTransactionReceipt: async () => ({
      status: 'success' as const,
      logs: receiptLogs ?? [usedLog(3), transferLog(paid.to, paid.value, 4)],
    }),
    getBlock: async () => ({ number: LATEST, timestamp: NOW_SEC }),
    getLogs: async (query: { event: { name: string }; fromBlock: bigint; toBlock: bigint }) => {
      ranges.push([LATEST - query.fromBlock, LATEST - query.toBlock])
      const hit = query.event.name === 'AuthorizationUsed' && query.fromBlock <= LATEST - 1_700n && LATEST - 1_700n <= query.toBlock
      return hit ? [{ transactionHash: USED_IN, logIndex: 3 }] : []
    },
  } satisfies OnchainSettlerPublicClient
  const settler = onchainSettler({
    publicClient: client,
    walletClient: { account: { address: PAY_TO }, writeContract: async () => USED_IN },
  })
  return { settler, ranges }
}

describe('reconciling a used authorization at Base heights', () => {
  it('searches from a minute before the reservation to its expiry, by 2 s blocks with five minutes of margin, 2,000 blocks a query', async () => {
    const { settler, ranges } = baseAt({ to: PAY_TO, value: 20_000n })
    expect(await settler.reconcile?.(payment, NOW_SEC)).toEqual({ state: 'settled', transaction: USED_IN })
    // Blocks back from LATEST: (7,200 + 60) / 2 + 150 = 3,780 to 3,600 / 2 - 150 = 1,650, in two queries.
    expect(ranges).toEqual([
      [3_780n, 1_781n],
      [1_780n, 1_650n],
    ])
  })

  it('releases when the transaction that spent the nonce paid someone else, or another amount', async () => {
    for (const paid of [
      { to: '0x4444444444444444444444444444444444444444' as Address, value: 20_000n },
      { to: PAY_TO, value: 1n },
    ]) {
      const { settler } = baseAt(paid)
      expect(await settler.reconcile?.(payment, NOW_SEC)).toMatchObject({ state: 'unused' })
    }
  })

  it('decides nothing when the receipt does not show the use the logs did (a reorg, nodes that disagree), or not in its order', async () => {
    const noUse = baseAt({ to: PAY_TO, value: 20_000n }, [transferLog(PAY_TO, 20_000n, 4)])
    expect(await noUse.settler.reconcile?.(payment, NOW_SEC)).toMatchObject({ state: 'pending' })
    // Reordered by a reorg: the use and its transfer at other positions, still adjacent in the receipt: paid.
    const moved = baseAt({ to: PAY_TO, value: 20_000n }, [usedLog(11), transferLog(PAY_TO, 20_000n, 12)])
    expect(await moved.settler.reconcile?.(payment, NOW_SEC)).toEqual({ state: 'settled', transaction: USED_IN })
  })
})
