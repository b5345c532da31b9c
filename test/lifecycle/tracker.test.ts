// The swap tracker (issue 18 items 1-3) on two anvil chains (BAS → POL) with stand-ins at the catalogue's addresses:
// swaps built as the service builds them, signed and broadcast by a test wallet, delivered by the bridges' stand-ins
// (relay()), and followed by the tracker to done, partial, expired or failed; a restart resumes from the cursor, a
// reorganisation re-reads, and two trackers on one PostgreSQL follow each swap once.
import { type Address, createPublicClient, createWalletClient, erc20Abi, getAddress, http, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi, swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { QuoteParams } from '../../src/schemas/quote.ts'
import { disburse } from '../../src/service/disburse.ts'
import { routeQuoteRequest } from '../../src/service/getQuote.ts'
import type { LifecycleRecord, Store } from '../../src/store/createStore.ts'
import type { TrackerClient } from '../../src/lifecycle/trackerContext.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { relay, routerOnWorld, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { mintTo, moveTimeTo, sendRequest } from '../chain/safetyHelpers.ts'
import { standInAbi, standInEvents } from '../chain/standIns.ts'
import { testDeps } from '../http/testApp.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { balance, broadcast, buildRecorded, DEPTH, mine, recordingClient, trackerOn } from './trackerHelpers.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const [pglite, postgres] = storeDrivers()
let world: CatalogueOnChains
let opened: OpenedStore

beforeAll(async () => {
  ;[world, opened] = await Promise.all([deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL']), pglite!.open()])
}, 180_000)
afterAll(async () => {
  await world?.stop()
  await opened?.cleanup()
})

let recipientCount = 0
/** A recipient nobody else on these chains uses: its balances start at zero. */
const freshRecipient = (): Address => getAddress(`0x${'7ac4'.padEnd(36, '0')}${(++recipientCount).toString(16).padStart(4, '0')}`)

const toEure = (bridge: string) => (id: string) => id.startsWith(`${bridge}:BAS>POL|pol-univ3-eure-usdc-500`)
const acrossOnly = (id: string) => id === 'across-usdc:BAS>POL'

async function lifecycle(store: Store, ref: string): Promise<LifecycleRecord> {
  const record = await store.lifecycle.get(ref)
  if (record === undefined) throw new Error(`${ref} is not recorded`)
  return record
}

describe('the tracker follows a swap from its Swapped event to its delivery', () => {
  it('bridge then destination swap: built, then pending once the source is final, then done/completed with what arrived', async () => {
    const { store } = opened
    const finals: { ref: string; tx: string }[] = []
    const tracker = trackerOn(world, store, {
      onSourceFinal: (record, receipt) => void finals.push({ ref: record.ref, tx: receipt.transactionHash }),
    })
    const recipient = freshRecipient()
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:EURe',
      whole: '1000',
      pick: toEure('across-usdc'),
      sender: 2,
      recipient,
    })
    const ref = swap.result.swapEaziRef
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('built')

    const receipt = await broadcast(world, swap)
    expect(receipt.status).toBe('success')
    // Mined, but not yet DEPTH blocks deep: not final.
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('built')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const pending = await lifecycle(store, ref)
    const [swapped] = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(pending).toMatchObject({
      state: 'pending',
      legs: {
        source: {
          chain: 'BAS',
          txHash: receipt.transactionHash,
          blockNumber: receipt.blockNumber,
          blockHash: receipt.blockHash,
          logIndex: swapped!.logIndex,
        },
        bridge: { chain: 'BAS', txHash: receipt.transactionHash },
      },
      sent: { chain: 'BAS', token: tokenOf(world, 'BAS:USDC').address, amount: BigInt(swap.result.approval.amount) },
    })
    // The bridge leg is the deposit, before the Swapped event.
    expect(pending.legs.bridge!.logIndex).toBeLessThan(swapped!.logIndex)
    expect(finals).toEqual([{ ref, tx: receipt.transactionHash }])

    const eure = tokenOf(world, 'POL:EURe')
    const delivery = await relay(world, swap.plan, receipt)
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('pending')
    await mine(world, 'POL')
    await tracker.pollOnce()
    const done = await lifecycle(store, ref)
    const [executed] = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
    const arrived = await balance(world, 'POL', eure.address, recipient)
    expect(arrived >= BigInt(swap.plan.toAmountMin)).toBe(true)
    expect(done).toMatchObject({
      state: 'done',
      substatus: 'completed',
      reason: null,
      received: { chain: 'POL', token: eure.address, amount: arrived },
      legs: { destination: { chain: 'POL', txHash: delivery.transactionHash, logIndex: executed!.logIndex } },
    })
    expect(done.transitions.map((t) => [t.state, t.substatus])).toEqual([
      ['built', null],
      ['pending', null],
      ['done', 'completed'],
    ])
    expect(done.transitions[2]!.legs.destination?.txHash).toBe(delivery.transactionHash)
    // onSourceFinal ran once, and a later poll moves nothing.
    await tracker.pollOnce()
    expect(finals).toHaveLength(1)
    expect((await lifecycle(store, ref)).transitions).toHaveLength(3)
  })

  it('a bridge with no destination swap: done/completed at the bridge delivery to the recipient', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const recipient = freshRecipient()
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '500',
      pick: acrossOnly,
      sender: 2,
      recipient,
    })
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect((await lifecycle(store, swap.result.swapEaziRef)).state).toBe('pending')
    const delivery = await relay(world, swap.plan, receipt)
    await mine(world, 'POL')
    await tracker.pollOnce()
    const usdc = tokenOf(world, 'POL:USDC')
    expect(await lifecycle(store, swap.result.swapEaziRef)).toMatchObject({
      state: 'done',
      substatus: 'completed',
      received: { chain: 'POL', token: usdc.address, amount: await balance(world, 'POL', usdc.address, recipient) },
      legs: { destination: { chain: 'POL', txHash: delivery.transactionHash } },
    })
  })

  it('two bridge deliveries to one recipient: each swap takes its own, whichever arrived first', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const recipient = freshRecipient()
    const small = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '200',
      pick: acrossOnly,
      sender: 2,
      recipient,
    })
    const large = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '260',
      pick: acrossOnly,
      sender: 2,
      recipient,
    })
    const smallReceipt = await broadcast(world, small)
    const largeReceipt = await broadcast(world, large)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    // The larger one is delivered first: it also meets the smaller swap's minimum.
    const largeDelivery = await relay(world, large.plan, largeReceipt)
    const smallDelivery = await relay(world, small.plan, smallReceipt)
    await mine(world, 'POL')
    await tracker.pollOnce()
    expect(await lifecycle(store, small.result.swapEaziRef)).toMatchObject({
      state: 'done',
      legs: { destination: { txHash: smallDelivery.transactionHash } },
    })
    expect(await lifecycle(store, large.result.swapEaziRef)).toMatchObject({
      state: 'done',
      legs: { destination: { txHash: largeDelivery.transactionHash } },
    })
  })

  it('a same-chain swap is done/completed with the Swapped event, through pending', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const recipient = freshRecipient()
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'BAS:EURC',
      whole: '300',
      pick: (id) => id === 'bas-univ3-eurc-usdc-500:USDC>EURC',
      sender: 2,
      recipient,
    })
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const eurc = tokenOf(world, 'BAS:EURC')
    const record = await lifecycle(store, swap.result.swapEaziRef)
    expect(record).toMatchObject({
      state: 'done',
      substatus: 'completed',
      received: { chain: 'BAS', token: eurc.address, amount: await balance(world, 'BAS', eurc.address, recipient) },
      legs: { source: { txHash: receipt.transactionHash }, destination: { txHash: receipt.transactionHash } },
    })
    expect(record.transitions.map((t) => t.state)).toEqual(['built', 'pending', 'done'])
  })

  it('done/partial when the destination swap cannot meet its minimum: the bridged token, and how much', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const destination = setupOf(world, 'POL')
    const venue = world.catalogue.venues.find((entry) => entry.id === 'pol-univ3-eure-usdc-500')!
    const usdc = tokenOf(world, 'POL:USDC')
    const eure = tokenOf(world, 'POL:EURe')
    const recipient = freshRecipient()
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:EURe',
      whole: '1000',
      pick: toEure('across-usdc'),
      sender: 2,
      recipient,
    })
    const [num, den] = (await destination.instance.publicClient.readContract({
      address: venue.contract,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'rateOf',
      args: [usdc.address, eure.address],
    })) as [bigint, bigint]
    const setRate = (denominator: bigint) =>
      writeContractAndWait(destination.instance, destination.instance.accounts[0]!, {
        address: venue.contract,
        abi: standInAbi('UniswapV3RouterStandIn'),
        functionName: 'setRate',
        args: [usdc.address, eure.address, num, denominator],
      })
    // The pool now pays half the oracle rate: far below the minimum.
    await setRate(den * 2n)
    try {
      const receipt = await broadcast(world, swap)
      await mine(world, 'BAS')
      await tracker.pollOnce()
      await relay(world, swap.plan, receipt)
      await mine(world, 'POL')
      await tracker.pollOnce()
    } finally {
      await setRate(den)
    }
    const record = await lifecycle(store, swap.result.swapEaziRef)
    const bridged = await balance(world, 'POL', usdc.address, recipient)
    expect(bridged > 0n).toBe(true)
    expect(await balance(world, 'POL', eure.address, recipient)).toBe(0n)
    expect(record).toMatchObject({ state: 'done', substatus: 'partial', received: { chain: 'POL', token: usdc.address, amount: bridged } })
    expect(record.reason).toMatch(/^the destination swap did not run \(Too little received\): the recipient got the bridged token$/)
  })

  it('expired when never broadcast and the deadline passed', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '200',
      pick: acrossOnly,
      sender: 4,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const deadline = BigInt(Date.parse(swap.result.deadline) / 1000)
    // At the deadline itself the order could still run.
    await moveTimeTo(world, deadline)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('built')
    await moveTimeTo(world, deadline + 1n)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const record = await lifecycle(store, ref)
    expect(record.state).toBe('expired')
    expect(record.reason).toContain(`deadline ${swap.result.deadline.replace(/\.\d{3}Z$/, '')}`)
    expect(record.transitions.map((t) => t.state)).toEqual(['built', 'expired'])
  })

  it('failed with the reason when the source transaction reverts', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:EURe',
      whole: '100',
      pick: toEure('across-usdc'),
      sender: 5,
      recipient: freshRecipient(),
    })
    // Signed without the approval first: the router refuses to pull the input.
    const receipt = await broadcast(world, swap, { approve: false })
    expect(receipt.status).toBe('reverted')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const record = await lifecycle(store, swap.result.swapEaziRef)
    expect(record).toMatchObject({
      state: 'failed',
      legs: { source: { chain: 'BAS', txHash: receipt.transactionHash, blockNumber: receipt.blockNumber } },
    })
    expect(record.reason).toBe('source transaction reverted: SwapEazi: approve the router for the input amount first')
    // A revert spends nothing: approved, the same transaction sent again before the deadline runs, and the swap goes on.
    const { instance } = setupOf(world, 'BAS')
    expect((await sendRequest(instance, swap.sender, swap.result.approval.transactionRequest as never)).status).toBe('success')
    const again = await sendRequest(instance, swap.sender, swap.result.transactionRequest as never)
    expect(again.status).toBe('success')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const resumed = await lifecycle(store, swap.result.swapEaziRef)
    expect(resumed).toMatchObject({ state: 'pending', legs: { source: { txHash: again.transactionHash } } })
    expect(resumed.transitions.map((t) => t.state)).toEqual(['built', 'failed', 'pending'])
  })

  it('a reverted swap is finished (an observation) only once its deadline passes unrun, not at the revert', async () => {
    const { store } = opened
    const finished: LifecycleRecord[] = []
    const tracker = trackerOn(world, store, { onFinished: (record: LifecycleRecord) => void finished.push(record) })
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:EURe',
      whole: '100',
      pick: toEure('across-usdc'),
      sender: 6,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap, { approve: false })
    expect(receipt.status).toBe('reverted')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('failed')
    // The same order may still be sent again and run: not finished yet.
    expect(finished.filter((record) => record.ref === ref)).toEqual([])
    const deadline = BigInt(Date.parse(swap.result.deadline) / 1000)
    await moveTimeTo(world, deadline + 1n)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect(finished.filter((record) => record.ref === ref).map((record) => record.state)).toEqual(['failed'])
    expect((await lifecycle(store, ref)).transitions.map((t) => t.state)).toEqual(['built', 'failed'])
  })

  it('checks a hinted source transaction: the right one is recorded at once, another is refused', async () => {
    const { store } = opened
    // A tracker that never scans on its own here: the hint alone moves the swap.
    const tracker = trackerOn(world, store)
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '150',
      pick: acrossOnly,
      sender: 6,
      recipient: freshRecipient(),
    })
    const other = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '160',
      pick: acrossOnly,
      sender: 6,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    expect(await tracker.hintSourceTransaction(ref, receipt.transactionHash)).toMatchObject({ ok: true, isFinal: false })
    expect((await lifecycle(store, ref)).state).toBe('built')
    await mine(world, 'BAS')
    const hinted = await tracker.hintSourceTransaction(ref, receipt.transactionHash)
    expect(hinted).toMatchObject({
      ok: true,
      isFinal: true,
      records: [{ ref, state: 'pending', legs: { source: { txHash: receipt.transactionHash } } }],
    })
    expect(await tracker.hintSourceTransaction(other.result.swapEaziRef, receipt.transactionHash)).toMatchObject({
      ok: false,
      reason: 'not_this_swap',
    })
    // Once its source is recorded, a hint is answered from the store: no RPC call (this tracker's node answers none).
    const unreachable = new Proxy({} as TrackerClient, {
      get: () => () => Promise.reject(new Error('no RPC call expected')),
    })
    const offline = trackerOn(world, store, { clients: { BAS: unreachable } })
    expect(await offline.hintSourceTransaction(ref, receipt.transactionHash)).toMatchObject({
      ok: true,
      records: [{ ref, state: 'pending' }],
    })
    expect(await offline.hintSourceTransaction(ref, `0x${'12'.repeat(32)}`)).toMatchObject({
      ok: false,
      reason: 'not_this_swap',
      detail: `${ref} already ran in ${receipt.transactionHash} on BAS`,
    })
    expect(await tracker.hintSourceTransaction(other.result.swapEaziRef, `0x${'12'.repeat(32)}`)).toMatchObject({
      ok: false,
      reason: 'transaction_not_found',
    })
    expect(await tracker.hintSourceTransaction('swp_0000000000000000000000000Z', receipt.transactionHash)).toMatchObject({
      ok: false,
      reason: 'unknown_ref',
    })
    expect((await lifecycle(store, other.result.swapEaziRef)).state).toBe('built')
  })

  it('a hint the RPC cannot check decides nothing: rpc_unavailable (a failed receipt read is not "not mined")', async () => {
    const { store } = opened
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '170',
      pick: acrossOnly,
      sender: 6,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    // Nothing listens on port 1: every read fails in the transport, as with a provider that is down.
    const down = createPublicClient({
      transport: http('http://127.0.0.1:1', { retryCount: 0, timeout: 2_000 }),
    }) as unknown as TrackerClient
    expect(await trackerOn(world, store, { clients: { BAS: down } }).hintSourceTransaction(ref, receipt.transactionHash)).toEqual({
      ok: false,
      reason: 'rpc_unavailable',
      detail: "BAS's RPC could not be read just now",
    })
    // The receipt is read, then the node fails: still nothing decided, and nothing thrown.
    const real = trackerOn(world, store)
    const flaky = new Proxy(setupOf(world, 'BAS').instance.publicClient as unknown as TrackerClient, {
      get: (target, name, receiver) =>
        name === 'getBlockNumber' || name === 'getBlock'
          ? () => down.getBlockNumber({ cacheTime: 0 })
          : Reflect.get(target, name, receiver),
    })
    expect(await trackerOn(world, store, { clients: { BAS: flaky } }).hintSourceTransaction(ref, receipt.transactionHash)).toMatchObject({
      ok: false,
      reason: 'rpc_unavailable',
    })
    expect((await lifecycle(store, ref)).state).toBe('built')
    // With the node back, the same hint records the swap.
    expect(await real.hintSourceTransaction(ref, receipt.transactionHash)).toMatchObject({ ok: true, isFinal: true })
    expect((await lifecycle(store, ref)).state).toBe('pending')
  })

  it('a poll that loses its chain lease to another replica stops scanning at once', async () => {
    const { store } = opened
    await trackerOn(world, store).pollOnce()
    const behind = (await store.lifecycle.getCursor('BAS'))?.block ?? 0n
    // Ten blocks to read one by one: ten steps in one poll.
    for (let i = 0; i < 10; i++) await mine(world, 'BAS')
    const client = recordingClient(setupOf(world, 'BAS').instance.publicClient as never)
    const getLogs = client.getLogs
    // After the first step's read, another replica takes the lease (as one does once a lease has lapsed).
    client.getLogs = (async (parameters: Parameters<typeof getLogs>[0]) => {
      const logs = await getLogs(parameters)
      await store.sql.query(
        `update leases set holder = 'another-replica', expires_at = clock_timestamp() + interval '1 hour' where name = 'tracker:chain:BAS'`,
      )
      return logs
    }) as typeof getLogs
    await trackerOn(world, store, { clients: { BAS: client }, maxBlockRange: 1 }).pollOnce()
    expect(client.fromBlocks).toEqual([behind + 1n])
    expect((await store.lifecycle.getCursor('BAS'))?.block).toBe(behind + 1n)
    await store.sql.query(`delete from leases where name = 'tracker:chain:BAS'`)
  })

  it('a restart resumes from the stored cursor', async () => {
    const { store } = opened
    await trackerOn(world, store).pollOnce()
    const cursor = await store.lifecycle.getCursor('BAS')
    expect(cursor?.block).toBe((await setupOf(world, 'BAS').instance.publicClient.getBlockNumber()) - BigInt(DEPTH))
    // While no tracker runs, a swap is mined.
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '120',
      pick: acrossOnly,
      sender: 2,
      recipient: freshRecipient(),
    })
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    const client = recordingClient(setupOf(world, 'BAS').instance.publicClient as never)
    await trackerOn(world, store, { clients: { BAS: client } }).pollOnce()
    expect(client.fromBlocks[0]).toBe(cursor!.block + 1n)
    expect(client.fromBlocks[0]! <= receipt.blockNumber).toBe(true)
    expect(await lifecycle(store, swap.result.swapEaziRef)).toMatchObject({
      state: 'pending',
      legs: { source: { txHash: receipt.transactionHash } },
    })
  })

  it('a reorganisation past the depth: the swap goes back to built and is found again in the new chain', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const { instance } = setupOf(world, 'BAS')
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '110',
      pick: acrossOnly,
      sender: 3,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const snapshot = await instance.testClient.snapshot()
    const first = await broadcast(world, swap)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).legs.source?.blockHash).toBe(first.blockHash)
    // The chain is replaced from before the swap: first shorter than the cursor (nothing there to compare)...
    await instance.testClient.revert({ id: snapshot })
    await tracker.pollOnce()
    expect(await lifecycle(store, ref)).toMatchObject({ state: 'built', legs: {} })
    // ...then other blocks, and the swap again, later.
    await mine(world, 'BAS', 3)
    const again = await broadcast(world, swap)
    expect(again.blockHash).not.toBe(first.blockHash)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const rewound = await lifecycle(store, ref)
    expect(rewound.transitions.map((t) => t.state)).toContain('built')
    await tracker.pollOnce()
    const record = await lifecycle(store, ref)
    expect(record).toMatchObject({ state: 'pending', legs: { source: { txHash: again.transactionHash, blockHash: again.blockHash } } })
    expect(record.transitions.map((t) => t.state)).toEqual(['built', 'pending', 'built', 'pending'])
    expect(record.transitions[2]!.reason).toMatch(/reorganised/)
  })

  it('a replica that cannot read the destination leaves the swap to one that can', async () => {
    const { store } = opened
    // A serve with only BAS's RPC (the replica that scans BAS in these tests) beside a track with both: the first must
    // not hold the swap's lease.
    const sourceOnly = trackerOn(world, store, { clients: { POL: undefined } })
    const both = trackerOn(world, store, { holder: 'both' })
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '105',
      pick: acrossOnly,
      sender: 2,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    await sourceOnly.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('pending')
    await relay(world, swap.plan, receipt)
    await mine(world, 'POL')
    await sourceOnly.pollOnce()
    await both.pollOnce()
    expect(await store.sql.query(`select holder from leases where name = $1`, [`tracker:swap:${ref}`])).toEqual([])
    expect((await lifecycle(store, ref)).state).toBe('done')
    await sourceOnly.stop()
    await both.stop()
  })

  it('a replica whose RPC serves another chain, or fails, leaves that chain’s work to one that can read it', async () => {
    const { store } = opened
    const leaseHolders = async (name: string) =>
      (await store.sql.query<{ holder: string }>(`select holder from leases where name = $1`, [name])).map((row) => row.holder)
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '106',
      pick: acrossOnly,
      sender: 2,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    const replicas: ReturnType<typeof trackerOn>[] = []
    // Each replica gives up what it holds at the end, or at a failure, so later tests scan BAS as before.
    const replica = (options: Parameters<typeof trackerOn>[2] = {}) => {
      const made = trackerOn(world, store, options)
      replicas.push(made)
      return made
    }
    try {
      const tracker = replica()
      await tracker.pollOnce()
      expect((await lifecycle(store, ref)).state).toBe('pending')
      await tracker.stop()
      expect(await leaseHolders('tracker:chain:BAS')).toEqual([])

      // POL's RPC serves another chain: the swap delivered there is not this replica's to follow.
      const wrongPol = replica({ holder: 'wrong-pol', isChainUsable: (chain) => chain !== 'POL' })
      await wrongPol.pollOnce()
      expect(await leaseHolders(`tracker:swap:${ref}`)).toEqual([])
      await wrongPol.stop()
      // BAS's RPC serves another chain: its scan is not taken either.
      const wrongBas = replica({ holder: 'wrong-bas', isChainUsable: (chain) => chain !== 'BAS' })
      await wrongBas.pollOnce()
      expect(await leaseHolders('tracker:chain:BAS')).toEqual([])
      expect(await leaseHolders(`tracker:swap:${ref}`)).toEqual([])
      // BAS's RPC fails: the scan's lease is given up at once, not held until it expires.
      const failing = {
        ...world.chains.get('BAS')!.instance.publicClient,
        getBlockNumber: async () => Promise.reject(new Error('RPC down')),
      }
      const down = replica({ holder: 'down', clients: { BAS: failing as unknown as TrackerClient, POL: undefined } })
      await down.pollOnce()
      expect(await leaseHolders('tracker:chain:BAS')).toEqual([])

      await relay(world, swap.plan, receipt)
      await mine(world, 'POL')
      const able = replica({ holder: 'able' })
      await able.pollOnce()
      expect((await lifecycle(store, ref)).state).toBe('done')
    } finally {
      for (const made of replicas) await made.stop()
    }
  })
})

describe('an Across deposit no relayer fills', () => {
  it('is done/refunded once Across pays the input back to the sender after the fill deadline', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const bas = setupOf(world, 'BAS')
    const usdc = tokenOf(world, 'BAS:USDC')
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '90',
      pick: acrossOnly,
      sender: 6,
      recipient: freshRecipient(),
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const [deposit] = standInEvents('SpokePoolStandIn', receipt.logs, { eventName: 'FundsDeposited' })
    const fillDeadline = BigInt(deposit!.args.fillDeadline as number)
    const inputAmount = deposit!.args.inputAmount as bigint
    // Past the fill deadline, unfilled and not yet refunded: still pending.
    await moveTimeTo(world, fillDeadline + 1n)
    await mine(world, 'BAS')
    await mine(world, 'POL')
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('pending')
    // The SpokePool pays the depositor back (impersonated: the stand-in has no refund bundles).
    const spokePool = deposit!.address
    await bas.instance.testClient.impersonateAccount({ address: spokePool })
    await bas.instance.testClient.setBalance({ address: spokePool, value: 10n ** 18n })
    const hash = await createWalletClient({ chain: bas.instance.chain, transport: http(bas.instance.rpcUrl) }).writeContract({
      account: spokePool,
      address: usdc.address,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [swap.sender.address, inputAmount],
    })
    await bas.instance.publicClient.waitForTransactionReceipt({ hash })
    await bas.instance.testClient.stopImpersonatingAccount({ address: spokePool })
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const record = await lifecycle(store, ref)
    expect(record).toMatchObject({
      state: 'done',
      substatus: 'refunded',
      received: { chain: 'BAS', token: usdc.address, amount: inputAmount },
      legs: { destination: { chain: 'BAS', txHash: hash } },
    })
    expect(record.reason).toMatch(
      /^no relayer filled the Across deposit before its fill deadline .*: Across refunded the input to the sender on BAS$/,
    )
  })
})

describe('a batch disbursement: each tracked leg under the shared dsb_ reference, by its index', () => {
  it('matches each leg to its own Swapped event and its own delivery', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const bas = setupOf(world, 'BAS')
    const sender = bas.instance.accounts[8]!
    const block = await bas.instance.publicClient.getBlock()
    const deps = testDeps({
      catalogue: world.catalogue,
      files: world.files,
      routerOn: routerOnWorld(world),
      clock: () => Number(block.timestamp) * 1000,
      store,
    })
    const r = [freshRecipient(), freshRecipient(), freshRecipient()]
    const recipients = [
      { address: r[0]!, toChain: 'BAS' as const, toToken: 'USDC', amount: '10' },
      { address: r[1]!, toChain: 'POL' as const, toToken: 'USDC', amount: '300' },
      { address: r[2]!, toChain: 'POL' as const, toToken: 'EURe', amount: '400' },
    ]
    const result = await disburse(deps, {
      keyId: 'key_tracker_test',
      params: { fromChain: 'BAS', fromToken: 'USDC', fromAddress: sender.address, slippage: 0.005, recipients },
    })
    const dsb = result.disbursementRef
    // The transfer leg is not a tracked swap; the two bridge legs are, by their index.
    expect((await store.lifecycle.getBatchLegs(dsb)).map((leg) => [leg.ref, leg.legIndex, leg.state])).toEqual([
      [`${dsb}.1`, 1, 'built'],
      [`${dsb}.2`, 2, 'built'],
    ])
    await mintTo(bas.instance, tokenOf(world, 'BAS:USDC').address, sender.address, BigInt(result.approval.amount))
    await sendRequest(bas.instance, sender, result.approval.transactionRequest as never)
    const receipt = await sendRequest(bas.instance, sender, result.transactionRequest as never)
    expect(receipt.status).toBe('success')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const swapped = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped).toHaveLength(3)
    for (const k of [1, 2]) {
      expect(await lifecycle(store, `${dsb}.${k}`)).toMatchObject({
        state: 'pending',
        disbursementRef: dsb,
        legIndex: k,
        legs: { source: { txHash: receipt.transactionHash, logIndex: swapped[k]!.logIndex } },
        sent: { amount: swapped[k]!.args.amountIn },
      })
    }
    // Each leg's deposit relayed on its own: the receipt's logs between the previous order's Swapped and its own.
    for (const k of [1, 2]) {
      const tracked = (await store.lifecycle.getTracked(`${dsb}.${k}`))!
      const routeId = (tracked.swap.quote as { route: { id: string } }).route.id
      const params = QuoteParams.parse({
        toChain: recipients[k]!.toChain,
        toToken: recipients[k]!.toToken,
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAmount: recipients[k]!.amount,
        fromAddress: sender.address,
        toAddress: r[k],
      })
      const routed = routeQuoteRequest(deps, params)
      if ('kind' in routed) throw new Error('no route')
      const priced = routed.found.viable.find((route) => route.route.id === routeId)!
      const logs = receipt.logs.filter((log) => log.logIndex > swapped[k - 1]!.logIndex && log.logIndex < swapped[k]!.logIndex)
      await relay(world, { priced, build: { order: { recipient: r[k]! } } } as never, { ...receipt, logs })
    }
    await mine(world, 'POL')
    await tracker.pollOnce()
    const usdc = tokenOf(world, 'POL:USDC')
    const eure = tokenOf(world, 'POL:EURe')
    expect(await lifecycle(store, `${dsb}.1`)).toMatchObject({
      state: 'done',
      substatus: 'completed',
      received: { token: usdc.address, amount: await balance(world, 'POL', usdc.address, r[1]!) },
    })
    expect(await lifecycle(store, `${dsb}.2`)).toMatchObject({
      state: 'done',
      substatus: 'completed',
      received: { token: eure.address, amount: await balance(world, 'POL', eure.address, r[2]!) },
    })
  })
})

describe.skipIf(postgres === undefined)('two trackers on one PostgreSQL', () => {
  let shared: OpenedStore
  beforeAll(async () => {
    shared = await postgres!.open()
  }, 60_000)
  afterAll(async () => shared?.cleanup())

  it('follow each swap once, and a dead replica’s work passes to the other when its leases expire', async () => {
    const { store } = shared
    const finals: string[] = []
    const finished: string[] = []
    const options = (holder: string) => ({
      holder,
      leaseTtlMs: 5000,
      onSourceFinal: (record: LifecycleRecord) => void finals.push(`${holder}:${record.ref}`),
      onFinished: (record: LifecycleRecord) => void finished.push(`${holder}:${record.ref}`),
    })
    const a = trackerOn(world, store, options('a'))
    const b = trackerOn(world, store, options('b'))
    const swaps = []
    for (const whole of ['101', '102', '103'])
      swaps.push(
        await buildRecorded(world, store, {
          from: 'BAS:USDC',
          to: 'POL:EURe',
          whole,
          pick: toEure('across-usdc'),
          sender: 2,
          recipient: freshRecipient(),
        }),
      )
    const receipts = []
    for (const swap of swaps) receipts.push(await broadcast(world, swap))
    await mine(world, 'BAS')
    await Promise.all([a.pollOnce(), b.pollOnce(), a.pollOnce(), b.pollOnce()])
    for (const [k, swap] of swaps.entries()) await relay(world, swap.plan, receipts[k]!)
    await mine(world, 'POL')
    await Promise.all([a.pollOnce(), b.pollOnce()])
    await Promise.all([a.pollOnce(), b.pollOnce()])
    const refs = swaps.map((swap) => swap.result.swapEaziRef)
    for (const ref of refs) {
      const record = await lifecycle(store, ref)
      expect(record.transitions.map((t) => [t.state, t.substatus])).toEqual([
        ['built', null],
        ['pending', null],
        ['done', 'completed'],
      ])
    }
    // Each source recorded once and each swap finished once, by one replica or the other.
    expect(finals.map((entry) => entry.slice(2)).sort()).toEqual([...refs].sort())
    expect(finished.map((entry) => entry.slice(2)).sort()).toEqual([...refs].sort())

    // The replica that holds the chain's scan dies without giving up its lease; the other takes over once it expires.
    const holder = (await store.sql.query<{ holder: string }>(`select holder from leases where name = 'tracker:chain:BAS'`))[0]?.holder
    const [dead, alive] = holder === 'a' ? [a, b] : [b, a]
    await dead.stop({ release: false })
    const late = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '104',
      pick: acrossOnly,
      sender: 2,
      recipient: freshRecipient(),
    })
    await broadcast(world, late)
    await mine(world, 'BAS')
    await alive.pollOnce()
    expect((await lifecycle(store, late.result.swapEaziRef)).state).toBe('built')
    await new Promise((resolve) => setTimeout(resolve, 5100))
    await alive.pollOnce()
    expect((await lifecycle(store, late.result.swapEaziRef)).state).toBe('pending')
    expect(finals.at(-1)).toBe(`${alive.holder}:${late.result.swapEaziRef}`)
  })
})
