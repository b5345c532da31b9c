// Matching a source transaction's CCTP burns to the messages Circle attested (review of issue 18): two burns alike
// but for their amount, or alike in every field, in one transaction (a batch paying one address twice over one CCTP
// lane) are two messages, and each is relayed once. The destination is a scripted client that records what is sent
// and marks a nonce used when its message is submitted, as the transmitter does.
import pino from 'pino'
import { type Address, encodeAbiParameters, encodeEventTopics, type Hash, type Hex, numberToHex, padHex } from 'viem'
import { describe, expect, it } from 'vitest'
import type { AttestationClient, AttestedMessage } from '../../src/lifecycle/attestationClient.ts'
import { BASE_DOMAIN, cctpBurnMessage, POLYGON_DOMAIN } from './cctpTestMessages.ts'
import { attestedMessageFields, depositForBurnEvent, type ReceiptLog } from '../../src/lifecycle/cctpMessages.ts'
import { type CctpDestination, createCctpRelayer } from '../../src/lifecycle/cctpRelayer.ts'

const executorOnSource: Address = '0x00000000000000000000000000000000000000e1'
const recipient: Address = '0x00000000000000000000000000000000000000ab'
const txHash: Hash = `0x${'1'.repeat(64)}`

/** A DepositForBurn by our executor on the source with no hook (anyone may receive it) to `recipient` on Polygon. */
function burnLog(amount: bigint, logIndex: number): ReceiptLog {
  return {
    address: '0x0000000000000000000000000000000000000b0b',
    logIndex,
    topics: encodeEventTopics({
      abi: [depositForBurnEvent],
      eventName: 'DepositForBurn',
      args: { burnToken: '0x0000000000000000000000000000000000000001', depositor: executorOnSource, minFinalityThreshold: 1000 },
    }) as Hex[],
    data: encodeAbiParameters(
      [
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'uint32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'bytes' },
      ],
      [amount, padHex(recipient), POLYGON_DOMAIN, padHex('0x01'), padHex('0x00'), 0n, '0x'],
    ),
  }
}

function relayerAttesting(attested: AttestedMessage[]): { relay: ReturnType<typeof createCctpRelayer>; submitted: Hex[] } {
  const submitted: Hex[] = []
  const used = new Set<Hex>()
  const destination = {
    chain: 'POL',
    domain: POLYGON_DOMAIN,
    executor: '0x00000000000000000000000000000000000000e2',
    transmitter: '0x00000000000000000000000000000000000000f1',
    publicClient: {
      readContract: async ({ args }: { args: readonly [Hex] }) => (used.has(args[0]) ? 1n : 0n),
      simulateContract: async () => ({}),
      getTransactionCount: async () => submitted.length,
      estimateFeesPerGas: async () => ({ maxFeePerGas: 2n, maxPriorityFeePerGas: 1n }),
      estimateContractGas: async () => 200_000n,
      waitForTransactionReceipt: async ({ hash }: { hash: Hash }) => ({ status: 'success' as const, gasUsed: 1n, transactionHash: hash }),
      getTransactionReceipt: async ({ hash }: { hash: Hash }) => ({ status: 'success' as const, gasUsed: 1n, transactionHash: hash }),
    },
    walletClient: {
      account: { address: '0x000000000000000000000000000000000000bEEF' },
      writeContract: async ({ args }: { args: readonly [Hex, Hex] }) => {
        submitted.push(args[0])
        used.add(attestedMessageFields(args[0])!.nonce)
        return `0x${String(submitted.length).padStart(64, '0')}` as Hash
      },
    },
  } as unknown as CctpDestination
  const attestations: Pick<AttestationClient, 'waitForAttestation'> = { waitForAttestation: async () => attested }
  const relay = createCctpRelayer({
    attestations: attestations as AttestationClient,
    sourceDomains: { BAS: BASE_DOMAIN },
    sourceExecutors: { BAS: executorOnSource },
    destinations: [destination],
    leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
    holder: 'replica-a',
    log: pino({ level: 'silent' }),
  })
  return { relay, submitted }
}

const record = { ref: 'dsb_01M8838W8GQ1051DJ56X0T7YMC.1', fromChain: 'BAS', transactionRequest: {} }

describe('two CCTP burns to one address in one transaction', () => {
  it('with different amounts: each burn takes the message of its own amount', async () => {
    const { relay, submitted } = relayerAttesting([
      { message: cctpBurnMessage(1, { amount: 100n, recipient }), attestation: '0x01', eventNonce: null },
      { message: cctpBurnMessage(2, { amount: 300n, recipient }), attestation: '0x02', eventNonce: null },
    ])
    const outcome = await relay.relayForSwap(record, { transactionHash: txHash, logs: [burnLog(300n, 0), burnLog(100n, 1)] })
    await relay.close()
    expect(outcome.messages.map((message) => [message.kind, message.nonce])).toEqual([
      ['relayed', padHex(numberToHex(2), { size: 32 })],
      ['relayed', padHex(numberToHex(1), { size: 32 })],
    ])
    expect(submitted).toEqual([cctpBurnMessage(2, { amount: 300n, recipient }), cctpBurnMessage(1, { amount: 100n, recipient })])
  })

  it('alike in every field: each attested message is taken once, so both are relayed', async () => {
    const { relay, submitted } = relayerAttesting([
      { message: cctpBurnMessage(1, { amount: 100n, recipient }), attestation: '0x01', eventNonce: null },
      { message: cctpBurnMessage(2, { amount: 100n, recipient }), attestation: '0x02', eventNonce: null },
    ])
    const outcome = await relay.relayForSwap(record, { transactionHash: txHash, logs: [burnLog(100n, 0), burnLog(100n, 1)] })
    await relay.close()
    expect(outcome.messages.map((message) => message.kind)).toEqual(['relayed', 'relayed'])
    expect(submitted).toEqual([cctpBurnMessage(1, { amount: 100n, recipient }), cctpBurnMessage(2, { amount: 100n, recipient })])
  })

  it('a burn the service attested no message for is not given another burn’s message', async () => {
    const { relay, submitted } = relayerAttesting([
      { message: cctpBurnMessage(1, { amount: 100n, recipient }), attestation: '0x01', eventNonce: null },
    ])
    const outcome = await relay.relayForSwap(record, { transactionHash: txHash, logs: [burnLog(100n, 0), burnLog(100n, 1)] })
    await relay.close()
    expect(outcome.messages).toEqual([
      expect.objectContaining({ kind: 'relayed' }),
      { kind: 'failed', nonce: null, reason: 'the attestation service gave no message for this burn' },
    ])
    expect(submitted).toEqual([cctpBurnMessage(1, { amount: 100n, recipient })])
  })
})
