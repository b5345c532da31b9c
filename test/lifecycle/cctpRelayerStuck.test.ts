// A CCTP relay that replaces a stuck one of ours (review of the relayer): when the earlier relay, not its replacement,
// is the one mined, the nonce went to our own work, never to "another sender with the key". The destination is a
// scripted client that mines nothing until it is told to mine the earlier relay.
import pino from 'pino'
import { type Hash, type Hex, numberToHex, padHex, TransactionReceiptNotFoundError, WaitForTransactionReceiptTimeoutError } from 'viem'
import { describe, expect, it } from 'vitest'
import { BASE_DOMAIN, cctpBurnMessage, POLYGON_DOMAIN } from './cctpTestMessages.ts'
import type { AttestationClient } from '../../src/lifecycle/attestationClient.ts'
import { attestedMessageFields } from '../../src/lifecycle/cctpMessages.ts'
import { type CctpDestination, createCctpRelayer, relayerLeaseName } from '../../src/lifecycle/cctpRelayer.ts'
import type { SubmissionReceipt } from '../../src/lifecycle/submitWithFeeBumps.ts'
import type { SubmissionStore } from '../../src/store/createSubmissionStore.ts'
import { storeDrivers } from '../store/storeDrivers.ts'
import { cuttableSubmissions } from './cuttableSubmissions.ts'

/** The relayer key's next nonce on chain while nothing of ours is mined. */
const KEY_NONCE = 5

/**
 * Polygon, mining nothing: every receipt wait runs out. Once `mineFirstOnNextSend` is set, the next send is answered by
 * the first relay being mined instead (its message received), and viem's wait on the new one follows it there, as it
 * follows any transaction replaced at its nonce.
 */
function scriptedChain() {
  const sent: { hash: Hash; nonce: number; message: Hex; maxFeePerGas: bigint }[] = []
  const used = new Set<Hex>()
  const state = { mineFirstOnNextSend: false, mined: undefined as SubmissionReceipt | undefined }
  const destination = {
    chain: 'POL',
    domain: POLYGON_DOMAIN,
    executor: '0x00000000000000000000000000000000000000e2',
    transmitter: '0x00000000000000000000000000000000000000f1',
    publicClient: {
      readContract: async ({ args }: { args: readonly [Hex] }) => (used.has(args[0]) ? 1n : 0n),
      simulateContract: async () => ({}),
      getTransactionCount: async ({ blockTag }: { blockTag: 'latest' | 'pending' }) =>
        state.mined !== undefined || (blockTag === 'pending' && sent.length > 0) ? KEY_NONCE + 1 : KEY_NONCE,
      estimateFeesPerGas: async () => ({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }),
      estimateContractGas: async () => 100_000n,
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
      writeContract: async ({ args, nonce, maxFeePerGas }: { args: readonly [Hex, Hex]; nonce: number; maxFeePerGas: bigint }) => {
        const hash: Hash = `0x${(sent.length + 1).toString(16).padStart(64, '0')}`
        sent.push({ hash, nonce, message: args[0], maxFeePerGas })
        const first = sent[0]!
        if (state.mineFirstOnNextSend) {
          state.mined = { status: 'success', gasUsed: 100_000n, transactionHash: first.hash }
          used.add(attestedMessageFields(first.message)!.nonce)
        }
        return hash
      },
    },
  } as unknown as CctpDestination
  return { destination, sent, state }
}

describe('a relay that replaces a stuck one of ours', () => {
  it('when the stuck one is mined instead, says so (its message received, this one to relay again), not another sender', async () => {
    const chain = scriptedChain()
    const relayer = createCctpRelayer({
      attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
      sourceDomains: { BAS: BASE_DOMAIN },
      destinations: [chain.destination],
      leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
      holder: 'replica-a',
      log: pino({ level: 'silent' }),
      // No replacement within a relay's wait: the first is given up on, still in the pool.
      receiptTimeoutMs: 300,
      bumpAfterMs: 60_000,
    })
    const [first, second] = [cctpBurnMessage(1), cctpBurnMessage(2)]
    const attested = (message: Hex) => ({ message, attestation: '0x01' as Hex, eventNonce: null })
    expect(await relayer.relayMessage(chain.destination, attested(first))).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/not mined within 0.3 s/),
    })
    chain.state.mineFirstOnNextSend = true
    const replacing = await relayer.relayMessage(chain.destination, attested(second))
    const again = await relayer.relayMessage(chain.destination, attested(first))
    await relayer.close()
    expect(chain.sent.map((entry) => entry.nonce)).toEqual([KEY_NONCE, KEY_NONCE])
    const firstHash = chain.sent[0]!.hash
    expect(replacing).toEqual({
      kind: 'failed',
      nonce: padHex(numberToHex(2), { size: 32 }),
      reason: `the stuck submission of ours this replaced at the key's nonce ${KEY_NONCE} on POL (a relay or compose retry from the key) was mined instead (${firstHash}); this message is relayed again by the sweep`,
      transaction: firstHash,
    })
    expect(again).toEqual({ kind: 'already_received', nonce: padHex(numberToHex(1), { size: 32 }) })
  })

  it("never pays past 5× the first relay's fee cap at the nonce, though each relay that takes it over is replaced in turn", async () => {
    const chain = scriptedChain()
    const relayer = createCctpRelayer({
      attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
      sourceDomains: { BAS: BASE_DOMAIN },
      destinations: [chain.destination],
      leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
      holder: 'replica-a',
      log: pino({ level: 'silent' }),
      // Replaced every 10 ms within a relay's 600 ms: each relay reaches the ceiling before it is given up on.
      receiptTimeoutMs: 600,
      bumpAfterMs: 10,
    })
    const attested = (message: Hex) => ({ message, attestation: '0x01' as Hex, eventNonce: null })
    const outcomes = []
    for (const message of [cctpBurnMessage(1), cctpBurnMessage(2), cctpBurnMessage(3)])
      outcomes.push(await relayer.relayMessage(chain.destination, attested(message)))
    await relayer.close()
    // The chain asks 100: the nonce's ceiling is 500, whichever relay sends.
    expect(chain.sent[0]).toMatchObject({ nonce: KEY_NONCE, maxFeePerGas: 100n })
    expect(chain.sent.length).toBeGreaterThan(5)
    expect(chain.sent.filter((entry) => entry.maxFeePerGas > 500n)).toEqual([])
    expect(new Set(chain.sent.map((entry) => entry.nonce))).toEqual(new Set([KEY_NONCE]))
    expect(outcomes[0]).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/not mined within 0.6 s/) })
    // The stuck relay already offers what the ceiling allows: the next relays send nothing and say why.
    for (const later of outcomes.slice(1))
      expect(later).toMatchObject({
        kind: 'failed',
        reason: expect.stringMatching(/^nothing sent: the key's nonce 5 on POL is held by a stuck relay of ours, .* \(500 wei per gas/),
      })
  })
})

describe('stuck relays behind a lower nonce pending (another sender of ours, the compose retrier, stuck at it)', () => {
  /** The key's mined count stays 5; nonce 5 is held in the pool by someone else's submission, so pending starts at 6. */
  function chainBehindALowerNonce(options: { fees?: () => bigint; pending?: (sentMax: number | undefined) => number } = {}) {
    const sent: { nonce: number; message: Hex; maxFeePerGas: bigint }[] = []
    const destination = {
      chain: 'POL',
      domain: POLYGON_DOMAIN,
      executor: '0x00000000000000000000000000000000000000e2',
      transmitter: '0x00000000000000000000000000000000000000f1',
      publicClient: {
        readContract: async () => 0n,
        simulateContract: async () => ({}),
        getTransactionCount: async ({ blockTag }: { blockTag: 'latest' | 'pending' }) => {
          if (blockTag === 'latest') return KEY_NONCE
          const sentMax = sent.length === 0 ? undefined : Math.max(...sent.map((entry) => entry.nonce))
          return options.pending?.(sentMax) ?? Math.max(KEY_NONCE + 1, (sentMax ?? 0) + 1)
        },
        estimateFeesPerGas: async () => {
          const maxFeePerGas = options.fees?.() ?? 100n
          return { maxFeePerGas, maxPriorityFeePerGas: 10n }
        },
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
        account: { address: '0x000000000000000000000000000000000000bEEF' },
        writeContract: async ({ args, nonce, maxFeePerGas }: { args: readonly [Hex, Hex]; nonce: number; maxFeePerGas: bigint }) => {
          sent.push({ nonce, message: args[0], maxFeePerGas })
          return `0x${sent.length.toString(16).padStart(64, '0')}` as Hash
        },
      },
    } as unknown as CctpDestination
    return { destination, sent }
  }
  const attested = (message: Hex) => ({ message, attestation: '0x01' as Hex, eventNonce: null })

  it('a message with a stuck relay of ours is never sent again at another nonce (the probe: messages 1, 2, 3, 1)', async () => {
    const chain = chainBehindALowerNonce()
    const relayer = createCctpRelayer({
      attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
      sourceDomains: { BAS: BASE_DOMAIN },
      destinations: [chain.destination],
      leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
      holder: 'replica-a',
      log: pino({ level: 'silent' }),
      receiptTimeoutMs: 200,
      bumpAfterMs: 60_000,
    })
    for (const message of [cctpBurnMessage(1), cctpBurnMessage(2), cctpBurnMessage(3), cctpBurnMessage(1)])
      await relayer.relayMessage(chain.destination, attested(message))
    await relayer.close()
    const noncesOf = (message: Hex) => new Set(chain.sent.filter((entry) => entry.message === message).map((entry) => entry.nonce))
    expect(chain.sent).toHaveLength(4)
    expect(noncesOf(cctpBurnMessage(1)).size).toBe(1)
    // Each takes over the stuck relay at nonce 6 (outbidding it) instead of queueing another behind it.
    expect(chain.sent.map((entry) => entry.nonce)).toEqual([6, 6, 6, 6])
    expect(chain.sent.map((entry) => entry.maxFeePerGas)).toEqual([100n, 113n, 128n, 144n])
  })
  it('a stuck relay the node dropped, the chain now above its fee ceiling, gives the ceiling up: relays go on, and a log says why', async () => {
    // Nonce 5 is ours alone (nothing pending below it); once dropped, the pending count is back at 5 and the chain asks 600.
    const state = { dropped: false }
    const chain = chainBehindALowerNonce({
      fees: () => (state.dropped ? 600n : 100n),
      pending: (sentMax) => (state.dropped || sentMax === undefined ? KEY_NONCE : sentMax + 1),
    })
    let logged = ''
    const relayer = createCctpRelayer({
      attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
      sourceDomains: { BAS: BASE_DOMAIN },
      destinations: [chain.destination],
      leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
      holder: 'replica-a',
      log: pino({ level: 'info' }, { write: (line: string) => void (logged += line) }),
      // Replaced every 10 ms within a relay's 300 ms: the first reaches its nonce's ceiling of 500.
      receiptTimeoutMs: 300,
      bumpAfterMs: 10,
    })
    const first = await relayer.relayMessage(chain.destination, attested(cctpBurnMessage(1)))
    expect(first).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/not mined within 0.3 s/) })
    expect(chain.sent.at(-1)?.maxFeePerGas).toBeGreaterThan(400n)
    state.dropped = true
    const sentBefore = chain.sent.length
    const later = []
    for (const message of [cctpBurnMessage(2), cctpBurnMessage(3)])
      later.push(await relayer.relayMessage(chain.destination, attested(message)))
    await relayer.close()
    for (const outcome of later) expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/not mined within/) })
    // Sent at the dropped relay's nonce, at the chain's fees, under a ceiling measured afresh from them.
    const after = chain.sent.slice(sentBefore)
    expect(after[0]).toMatchObject({ nonce: KEY_NONCE, maxFeePerGas: 600n })
    expect(new Set(after.map((entry) => entry.nonce))).toEqual(new Set([KEY_NONCE]))
    expect(after.filter((entry) => entry.maxFeePerGas > 3_000n)).toEqual([])
    expect(logged).toMatch(/"event":"cctp_relay_fee_ceiling_renewed".*"key_nonce":5.*no longer in the node's pool/)
  })
})

describe('a relay cut short by a stop, across a restart (the submissions kept in the store)', () => {
  it.each(storeDrivers().map((driver) => [driver.name, driver] as const))(
    'on %s: the next process takes the relay over at its nonce, outbidding it, instead of sending it again at the next',
    async (_name, driver) => {
      const opened = await driver.open()
      try {
        const chain = scriptedChain()
        const attested = (message: Hex) => ({ message, attestation: '0x01' as Hex, eventNonce: null })
        const relayerOn = (submissions: SubmissionStore, receiptTimeoutMs: number) =>
          createCctpRelayer({
            attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
            sourceDomains: { BAS: BASE_DOMAIN },
            destinations: [chain.destination],
            leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
            submissions,
            holder: 'replica-a',
            log: pino({ level: 'silent' }),
            receiptTimeoutMs,
            bumpAfterMs: 60_000,
          })
        // The first process sends the relay and is killed while it waits for the receipt.
        const killed = cuttableSubmissions(opened.store.lifecycle.submissions)
        const first = relayerOn(killed, 1_500)
        const cutShort = first.relayMessage(chain.destination, attested(cctpBurnMessage(1)))
        const sender = relayerLeaseName('POL', '0x000000000000000000000000000000000000bEEF')
        await expect
          .poll(() => opened.store.lifecycle.submissions.list(sender), { timeout: 1_000, interval: 20 })
          .toEqual([
            {
              nonce: KEY_NONCE,
              maxFeePerGas: 100n,
              maxPriorityFeePerGas: 10n,
              hashes: [`0x${'1'.padStart(64, '0')}`],
              feeCeiling: 500n,
              works: [padHex(numberToHex(1), { size: 32 })],
            },
          ])
        killed.cut()
        // The next process, on the same store, relays the same message: at the kept relay's nonce, an eighth above it.
        const next = relayerOn(opened.store.lifecycle.submissions, 200)
        expect(await next.relayMessage(chain.destination, attested(cctpBurnMessage(1)))).toMatchObject({
          kind: 'failed',
          reason: expect.stringMatching(/not mined within 0.2 s/),
        })
        await next.close()
        expect(chain.sent.map(({ nonce, maxFeePerGas }) => ({ nonce, maxFeePerGas }))).toEqual([
          { nonce: KEY_NONCE, maxFeePerGas: 100n },
          { nonce: KEY_NONCE, maxFeePerGas: 113n },
        ])
        // Both sends are kept as the nonce's, so either one mined is ours.
        expect((await opened.store.lifecycle.submissions.list(sender))[0]?.hashes).toEqual(chain.sent.map((entry) => entry.hash))
        await cutShort
        await first.close()
      } finally {
        await opened.cleanup()
      }
    },
  )

  it('forgets a kept relay once its nonce is mined', async () => {
    const opened = await storeDrivers()[0]!.open()
    try {
      const chain = scriptedChain()
      const relayer = createCctpRelayer({
        attestations: { waitForAttestation: async () => [] } as unknown as AttestationClient,
        sourceDomains: { BAS: BASE_DOMAIN },
        destinations: [chain.destination],
        leases: { tryAcquire: async () => true, renew: async () => true, release: async () => {} },
        submissions: opened.store.lifecycle.submissions,
        holder: 'replica-a',
        log: pino({ level: 'silent' }),
        receiptTimeoutMs: 200,
        bumpAfterMs: 60_000,
      })
      const attested = (message: Hex) => ({ message, attestation: '0x01' as Hex, eventNonce: null })
      const sender = relayerLeaseName('POL', '0x000000000000000000000000000000000000bEEF')
      await relayer.relayMessage(chain.destination, attested(cctpBurnMessage(1)))
      expect(await opened.store.lifecycle.submissions.list(sender)).toHaveLength(1)
      chain.state.mineFirstOnNextSend = true
      await relayer.relayMessage(chain.destination, attested(cctpBurnMessage(2)))
      await relayer.close()
      expect(await opened.store.lifecycle.submissions.list(sender)).toEqual([])
    } finally {
      await opened.cleanup()
    }
  })
})
