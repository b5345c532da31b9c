import { type Hash, TransactionReceiptNotFoundError, WaitForTransactionReceiptTimeoutError } from 'viem'
import { describe, expect, it } from 'vitest'
import {
  MAX_FEE_MULTIPLE,
  nextFees,
  type SubmissionFees,
  type SubmissionReceipt,
  submitWithFeeBumps,
} from '../../src/lifecycle/submitWithFeeBumps.ts'

// The fee arithmetic of a replacement, and the submitter against a scripted chain (the anvil proof of a stuck relay
// replaced, and of one cancelled, is in cctpRelayer.test.ts).

const fees = (maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): SubmissionFees => ({ maxFeePerGas, maxPriorityFeePerGas })
const hashOf = (n: number): Hash => `0x${n.toString(16).padStart(64, '0')}`

describe('nextFees', () => {
  it('raises both fees by an eighth, rounded up, when the chain asks no more', () => {
    expect(nextFees(fees(100n, 10n), fees(100n, 10n), fees(50n, 1n))).toEqual(fees(113n, 12n))
    // Never by less than geth's 10% on either fee, even at one wei.
    expect(nextFees(fees(1n, 1n), fees(1n, 1n), fees(1n, 1n))).toEqual(fees(2n, 2n))
  })

  it('follows the chain when it asks more, and keeps the fee cap at least the tip', () => {
    expect(nextFees(fees(100n, 10n), fees(100n, 10n), fees(300n, 20n))).toEqual(fees(300n, 20n))
    expect(nextFees(fees(100n, 10n), fees(100n, 90n), fees(100n, 150n))).toEqual(fees(150n, 150n))
  })

  it(`stops past ${MAX_FEE_MULTIPLE}× the first submission's fee cap`, () => {
    expect(nextFees(fees(100n, 10n), fees(450n, 10n), fees(100n, 1n))).toBeUndefined() // 507 > 500
    expect(nextFees(fees(100n, 10n), fees(400n, 10n), fees(100n, 1n))).toEqual(fees(450n, 12n))
    expect(nextFees(fees(100n, 10n), fees(100n, 10n), fees(501n, 1n))).toBeUndefined()
  })
})

/** A chain that mines a submission once its fee cap reaches `minedAbove`, scripted per round. */
function scriptedChain(options: { minedAbove: () => bigint; refuseSends?: number }) {
  const sent: { hash: Hash; fees: SubmissionFees; cancel: boolean }[] = []
  let mined: SubmissionReceipt | undefined
  let refusals = options.refuseSends ?? 0
  // What viem throws when the node answers that there is no receipt yet: the wait's timeout, the read's not-found.
  const receiptOf = (hash: Hash, notMined: () => Error): SubmissionReceipt => {
    if (mined?.transactionHash !== hash) throw notMined()
    return mined
  }
  const mineBest = (): void => {
    if (mined !== undefined) return
    const best = sent.find((entry) => entry.fees.maxFeePerGas >= options.minedAbove())
    if (best) mined = { status: 'success', gasUsed: best.cancel ? 21_000n : 100_000n, transactionHash: best.hash }
  }
  const submit = (cancel: boolean) => async (submissionFees: SubmissionFees) => {
    if (refusals > 0) {
      refusals -= 1
      throw new Error('replacement transaction underpriced')
    }
    const hash = hashOf(sent.length + 1)
    sent.push({ hash, fees: submissionFees, cancel })
    return hash
  }
  return {
    sent,
    publicClient: {
      estimateFeesPerGas: async () => fees(100n, 10n),
      waitForTransactionReceipt: async ({ hash }: { hash: Hash }) => {
        mineBest()
        return receiptOf(hash, () => new WaitForTransactionReceiptTimeoutError({ hash }))
      },
      getTransactionReceipt: async ({ hash }: { hash: Hash }) => receiptOf(hash, () => new TransactionReceiptNotFoundError({ hash })),
    },
    send: submit(false),
    cancel: submit(true),
  }
}

describe('submitWithFeeBumps', () => {
  it('replaces an unmined submission until one pays enough, and reports the one mined', async () => {
    const chain = scriptedChain({ minedAbove: () => 140n })
    const result = await submitWithFeeBumps({
      ...chain,
      isDoneElsewhere: async () => false,
      timeoutMs: 10_000,
      bumpAfterMs: 1,
      clock: Date.now,
    })
    expect(chain.sent.map((entry) => entry.fees.maxFeePerGas)).toEqual([100n, 113n, 128n, 144n])
    expect(result).toMatchObject({ kind: 'mined', cancelled: false, receipt: { transactionHash: hashOf(4) } })
  })

  it('cancels instead once the work is done elsewhere, and says the cancel was what mined', async () => {
    const chain = scriptedChain({ minedAbove: () => 110n })
    let round = 0
    const result = await submitWithFeeBumps({
      ...chain,
      isDoneElsewhere: async () => {
        round += 1
        return true
      },
      timeoutMs: 10_000,
      bumpAfterMs: 1,
      clock: Date.now,
    })
    expect(round).toBe(1)
    expect(chain.sent.map((entry) => entry.cancel)).toEqual([false, true])
    expect(result).toMatchObject({ kind: 'mined', cancelled: true, receipt: { gasUsed: 21_000n } })
  })

  it('a refused replacement is tried again from the chain fees next round; nothing mined in time is not_mined', async () => {
    const refused = scriptedChain({ minedAbove: () => 113n, refuseSends: 0 })
    const sendOnce = refused.send
    let calls = 0
    const result = await submitWithFeeBumps({
      ...refused,
      send: async (submissionFees) => {
        calls += 1
        if (calls === 2) throw new Error('replacement transaction underpriced')
        return sendOnce(submissionFees)
      },
      isDoneElsewhere: async () => false,
      timeoutMs: 10_000,
      bumpAfterMs: 1,
      clock: Date.now,
    })
    expect(result.kind).toBe('mined')
    expect(calls).toBe(3)

    const never = scriptedChain({ minedAbove: () => 10n ** 30n })
    let now = 0
    let rounds = 0
    const stuck = await submitWithFeeBumps({
      ...never,
      isDoneElsewhere: async () => {
        rounds += 1
        return false
      },
      timeoutMs: 20_000,
      bumpAfterMs: 1,
      clock: () => {
        now += 100
        return now
      },
    })
    expect(stuck.kind).toBe('not_mined')
    // Bumped by the 9/8 rule (rounded up) from 100 to 473, the last at or below 5 × 100 (the next, 533, is not),
    // and no further, though rounds went on past it.
    const caps = never.sent.map((entry) => entry.fees.maxFeePerGas)
    expect(caps).toEqual([100n, 113n, 128n, 144n, 162n, 183n, 206n, 232n, 261n, 294n, 331n, 373n, 420n, 473n])
    expect(nextFees(fees(100n, 10n), never.sent.at(-1)!.fees, fees(100n, 10n))).toBeUndefined()
    expect(100n * MAX_FEE_MULTIPLE).toBe(500n)
    expect(rounds).toBeGreaterThan(caps.length + 2)
    expect(stuck.hashes).toEqual(never.sent.map((entry) => entry.hash))
  })

  it('replaces nothing before bumpAfterMs, even when the receipt wait ends early by the clock', async () => {
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    // Each wait ends at once (as a timer firing a millisecond early would), with the clock short of the wait's end.
    let now = 0
    const result = await submitWithFeeBumps({
      ...chain,
      isDoneElsewhere: async () => false,
      timeoutMs: 800,
      bumpAfterMs: 60_000,
      clock: () => {
        now += 1
        return now
      },
    })
    expect(result.kind).toBe('not_mined')
    expect(chain.sent).toHaveLength(1)

    const bumped = scriptedChain({ minedAbove: () => 10n ** 30n })
    now = 0
    await submitWithFeeBumps({
      ...bumped,
      isDoneElsewhere: async () => false,
      timeoutMs: 1_000,
      bumpAfterMs: 300,
      clock: () => {
        now += 1
        return now
      },
    })
    // One send, then one replacement per whole 300 ms within the 1,000 ms.
    expect(bumped.sent).toHaveLength(4)
  })

  it('sends no replacement once it may no longer send from the key (its lease is lost), and waits on what it sent', async () => {
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    let now = 0
    const result = await submitWithFeeBumps({
      ...chain,
      isDoneElsewhere: async () => false,
      canReplace: async () => false,
      timeoutMs: 1_000,
      bumpAfterMs: 1,
      clock: () => {
        now += 100
        return now
      },
    })
    expect(result.kind).toBe('not_mined')
    expect(chain.sent).toHaveLength(1)
  })

  it('a receipt read the RPC fails is retried after a pause, replaces nothing, and ends rpc_failed, never not_mined', async () => {
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    // Each read fails at once (the node is unreachable); the clock moves a millisecond per reading of it.
    let now = 0
    let waits = 0
    const unreachable = async (): Promise<SubmissionReceipt> => {
      throw new Error('fetch failed')
    }
    const result = await submitWithFeeBumps({
      ...chain,
      publicClient: {
        ...chain.publicClient,
        waitForTransactionReceipt: async () => {
          waits += 1
          return unreachable()
        },
        getTransactionReceipt: unreachable,
      },
      isDoneElsewhere: async () => false,
      timeoutMs: 120_000,
      bumpAfterMs: 30_000,
      clock: () => {
        now += 1
        return now
      },
      sleep: async (ms) => {
        now += ms
      },
    })
    expect(waits).toBeLessThan(100)
    // No fee bump on a submission that could not be checked.
    expect(chain.sent).toHaveLength(1)
    expect(result).toEqual({ kind: 'rpc_failed', hashes: [hashOf(1)], fees: fees(100n, 10n), feeCeiling: 500n, reason: 'Error' })
  })

  it('a receipt wait that fails while the receipt read answers "not found" is a round unmined: replaced, then not_mined', async () => {
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    // viem's wait rejects (its getTransaction is rate-limited), while getTransactionReceipt answers: no receipt.
    let now = 0
    let waits = 0
    const result = await submitWithFeeBumps({
      ...chain,
      publicClient: {
        ...chain.publicClient,
        waitForTransactionReceipt: async () => {
          waits += 1
          throw new Error('429')
        },
      },
      isDoneElsewhere: async () => false,
      timeoutMs: 120_000,
      bumpAfterMs: 30_000,
      clock: () => {
        now += 1
        return now
      },
      sleep: async (ms) => {
        now += ms
      },
    })
    // Paused between failed waits, as after a failed read, not asked in a tight loop.
    expect(waits).toBeLessThan(100)
    expect(chain.sent.map((entry) => entry.fees.maxFeePerGas)).toEqual([100n, 113n, 128n, 144n])
    expect(result).toMatchObject({ kind: 'not_mined', hashes: chain.sent.map((entry) => entry.hash) })
  })

  it("taking over a stuck submission keeps the nonce's fee ceiling: outbids it under that ceiling, or sends nothing", async () => {
    const run = async (replacing: Parameters<typeof submitWithFeeBumps>[0]['replacing']) => {
      const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
      let now = 0
      const result = await submitWithFeeBumps({
        ...chain,
        ...(replacing === undefined ? {} : { replacing }),
        isDoneElsewhere: async () => false,
        timeoutMs: 20_000,
        bumpAfterMs: 1,
        clock: () => {
          now += 100
          return now
        },
      })
      return { result, caps: chain.sent.map((entry) => entry.fees.maxFeePerGas) }
    }
    // The stuck one offers 300 under a ceiling of 500 (its nonce's first submission offered 100): 338, 381, 429, 483.
    const under = await run({ fees: fees(300n, 10n), hashes: [hashOf(90)], feeCeiling: 500n })
    expect(under.caps).toEqual([338n, 381n, 429n, 483n])
    expect(under.result).toMatchObject({ kind: 'not_mined', feeCeiling: 500n })
    // Outbidding 473 would pass it: nothing is sent.
    const at = await run({ fees: fees(473n, 10n), hashes: [hashOf(90)], feeCeiling: 500n })
    expect(at).toEqual({ caps: [], result: { kind: 'not_sent', hashes: [], feeCeiling: 500n } })
    // Dropped from the pool (no fees to outbid): the chain's fees, under the same ceiling.
    const dropped = await run({ hashes: [hashOf(90)], feeCeiling: 200n })
    expect(dropped.caps).toEqual([100n, 113n, 128n, 144n, 162n, 183n])
    // A first submission at a nonce sets its ceiling: 5 × 100.
    expect((await run(undefined)).result).toMatchObject({ kind: 'not_mined', feeCeiling: 500n })
  })

  it('a stuck submission the node dropped, with the chain now above its ceiling, gives the ceiling up for a fresh one', async () => {
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    let now = 0
    const given: unknown[] = []
    const result = await submitWithFeeBumps({
      ...chain,
      publicClient: { ...chain.publicClient, estimateFeesPerGas: async () => fees(600n, 10n) },
      // No fees: nothing of ours in the pool at the nonce (the pending count back at it).
      replacing: { hashes: [hashOf(90)], feeCeiling: 500n },
      isDoneElsewhere: async () => false,
      onCeilingGivenUp: (entry) => given.push(entry),
      timeoutMs: 1_000,
      bumpAfterMs: 1,
      clock: () => {
        now += 100
        return now
      },
    })
    expect(chain.sent[0]?.fees.maxFeePerGas).toBe(600n)
    expect(result).toMatchObject({ kind: 'not_mined', feeCeiling: 3_000n })
    expect(given).toEqual([{ oldCeiling: 500n, ceiling: 3_000n, fees: fees(600n, 10n) }])
  })

  it('a nonce taken by a transaction that is none of ours is nonce_taken, never counted as our submission mined', async () => {
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    const foreign = hashOf(99)
    const result = await submitWithFeeBumps({
      ...chain,
      publicClient: {
        ...chain.publicClient,
        // What viem answers for a transaction replaced by another at its nonce: the other's receipt.
        waitForTransactionReceipt: async () => ({ status: 'success', gasUsed: 50_000n, transactionHash: foreign }),
      },
      isDoneElsewhere: async () => false,
      timeoutMs: 1_000,
      bumpAfterMs: 1,
      clock: Date.now,
    })
    expect(result).toMatchObject({ kind: 'nonce_taken', receipt: { transactionHash: foreign }, hashes: [hashOf(1)] })
  })

  it('past the fee cap a relay is waited out, but is still cancelled once someone else did the work', async () => {
    // Relays never pay enough here; the cancel, priced above the cap, does.
    const chain = scriptedChain({ minedAbove: () => 530n })
    let rounds = 0
    const result = await submitWithFeeBumps({
      ...chain,
      isDoneElsewhere: async () => {
        rounds += 1
        return rounds > 16
      },
      timeoutMs: 10_000,
      bumpAfterMs: 1,
      clock: Date.now,
    })
    const relays = chain.sent.filter((entry) => !entry.cancel).map((entry) => entry.fees.maxFeePerGas)
    expect(relays.at(-1)! <= 500n).toBe(true)
    expect(chain.sent.at(-1)).toMatchObject({ cancel: true })
    expect(chain.sent.at(-1)!.fees.maxFeePerGas > 500n).toBe(true)
    expect(result).toMatchObject({ kind: 'mined', cancelled: true })
  })

  it('a cancel pays at most an eighth past the ceiling, however long the chain refuses it', async () => {
    // Done elsewhere from the first round, and nothing is ever mined: cancels are all that is sent after the relay.
    const chain = scriptedChain({ minedAbove: () => 10n ** 30n })
    const result = await submitWithFeeBumps({
      ...chain,
      isDoneElsewhere: async () => true,
      timeoutMs: 2_000,
      bumpAfterMs: 1,
      clock: Date.now,
    })
    const cancels = chain.sent.filter((entry) => entry.cancel).map((entry) => entry.fees.maxFeePerGas)
    expect(cancels.length).toBeGreaterThan(3)
    // The ceiling is 5x the first fee (100): 500, and an eighth more is 563 (rounded up).
    expect(cancels.every((fee) => fee <= 563n)).toBe(true)
    expect(cancels.at(-1)).toBe(533n)
    expect(result).toMatchObject({ kind: 'not_mined' })
  })
})
