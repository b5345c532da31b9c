// The relayer key's lease while a CCTP relay is submitted (review of the relayer): a renewal that fails (the database
// unreachable) counts as the lease lost, as in the compose retrier, and the lease is checked before the first send.
// The destination is a scripted client that never mines anything and records every transaction sent, with its time.
import pino from 'pino'
import { type Address, type Hash, numberToHex, padHex, TransactionReceiptNotFoundError, WaitForTransactionReceiptTimeoutError } from 'viem'
import { describe, expect, it } from 'vitest'
import { BASE_DOMAIN, cctpBurnMessage, POLYGON_DOMAIN } from './cctpTestMessages.ts'
import type { AttestationClient } from '../../src/lifecycle/attestationClient.ts'
import { type CctpDestination, createCctpRelayer } from '../../src/lifecycle/cctpRelayer.ts'
import type { LeaseStore } from '../../src/store/createLifecycleStore.ts'

const LEASE_TTL_MS = 3_000

type Sent = { at: number; hash: Hash; cancel: boolean }

/**
 * Polygon as a chain that mines nothing: each receipt wait runs its whole timeout. The message's nonce reads unused
 * first, then used (a keeper received it meanwhile), so every round past the first replaces the relay with a cancel,
 * which no fee cap stops.
 */
function stuckDestination(options: { simulateMs?: number } = {}): { destination: CctpDestination; sent: Sent[] } {
  const sent: Sent[] = []
  let usedNonceReads = 0
  const record = (cancel: boolean) => async (): Promise<Hash> => {
    const hash: Hash = `0x${(sent.length + 1).toString(16).padStart(64, '0')}`
    sent.push({ at: Date.now(), hash, cancel })
    return hash
  }
  const destination = {
    chain: 'POL',
    domain: POLYGON_DOMAIN,
    executor: '0x00000000000000000000000000000000000000e2',
    transmitter: '0x00000000000000000000000000000000000000f1',
    publicClient: {
      readContract: async () => {
        usedNonceReads += 1
        return usedNonceReads === 1 ? 0n : 1n
      },
      simulateContract: async () => {
        await new Promise((resolve) => setTimeout(resolve, options.simulateMs ?? 0))
        return {}
      },
      getTransactionCount: async () => 5,
      estimateFeesPerGas: async () => ({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }),
      estimateContractGas: async () => 100_000n,
      waitForTransactionReceipt: async ({ hash, timeout }: { hash: Hash; timeout: number }) => {
        await new Promise((resolve) => setTimeout(resolve, timeout))
        throw new WaitForTransactionReceiptTimeoutError({ hash })
      },
      getTransactionReceipt: async ({ hash }: { hash: Hash }) => {
        throw new TransactionReceiptNotFoundError({ hash })
      },
    },
    walletClient: {
      account: { address: '0x000000000000000000000000000000000000bEEF' as Address },
      writeContract: record(false),
      sendTransaction: record(true),
    },
  } as unknown as CctpDestination
  return { destination, sent }
}

/** A lease table that grants the lease, then cannot be reached to renew it. */
function unreachableOnRenew(): { leases: LeaseStore; acquiredAt: () => number } {
  let acquiredAt = Number.NaN
  return {
    leases: {
      tryAcquire: async () => {
        acquiredAt = Date.now()
        return true
      },
      renew: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432')
      },
      release: async () => {},
    },
    acquiredAt: () => acquiredAt,
  }
}

function relayerOn(destination: CctpDestination, leases: LeaseStore, receiptTimeoutMs: number) {
  return createCctpRelayer({
    attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
    sourceDomains: { BAS: BASE_DOMAIN },
    destinations: [destination],
    leases,
    holder: 'replica-a',
    log: pino({ level: 'silent' }),
    leaseTtlMs: LEASE_TTL_MS,
    bumpAfterMs: 200,
    receiptTimeoutMs,
  })
}

describe('the relayer lease when its renewal fails', () => {
  it('a stuck relay sends no replacement once the lease may have lapsed: none after its TTL', async () => {
    const { destination, sent } = stuckDestination()
    const { leases, acquiredAt } = unreachableOnRenew()
    const relayer = relayerOn(destination, leases, 5_000)
    const outcome = await relayer.relayMessage(destination, { message: cctpBurnMessage(1), attestation: '0x01', eventNonce: null })
    await relayer.close()
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/not mined within 5 s/) })
    // Replaced while the lease was sure to be held, then nothing.
    expect(sent.filter((entry) => entry.cancel).length).toBeGreaterThan(0)
    expect(sent.filter((entry) => entry.at >= acquiredAt() + LEASE_TTL_MS)).toEqual([])
  }, 15_000)

  it('nothing is sent when the renewal failed before the first send (a slow simulation)', async () => {
    const { destination, sent } = stuckDestination({ simulateMs: 1_500 })
    const { leases } = unreachableOnRenew()
    const relayer = relayerOn(destination, leases, 1_000)
    const outcome = await relayer.relayMessage(destination, { message: cctpBurnMessage(2), attestation: '0x01', eventNonce: null })
    await relayer.close()
    expect(sent).toEqual([])
    expect(outcome).toEqual({
      kind: 'failed',
      nonce: padHex(numberToHex(2), { size: 32 }),
      reason: 'the relayer lease relayer:POL:0x000000000000000000000000000000000000beef was lost before sending; nothing was sent',
    })
  }, 15_000)
})
