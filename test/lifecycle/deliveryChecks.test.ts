// What the tracker accepts as a swap's delivery and source (issue 18, the review's findings): on two anvil chains
// (BAS → POL) with stand-ins at the catalogue's addresses, a stranger's payment to the recipient is no bridge delivery
// (Across, CCTP and Stargate lanes), a relay of our reference that pays another token or too little is no destination
// order's outcome, one destination log is claimed by one swap only, a `Swapped` event re-encoded with another fee is
// not the recorded build, and a reverted batch's plain transfers are failed with it.
import {
  type Address,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  stringToHex,
  zeroAddress,
} from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { mismatchOf, type SwappedLog } from '../../src/lifecycle/recordSource.ts'
import { disburse } from '../../src/service/disburse.ts'
import { getSwapStatus } from '../../src/service/getSwapStatus.ts'
import type { LifecycleRecord, Store } from '../../src/store/createStore.ts'
import { runDestinationInputs } from '../../src/tx/abis.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { relay, routerOnWorld, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { mintTo, sendRequest } from '../chain/safetyHelpers.ts'
import { standInAbi } from '../chain/standIns.ts'
import { testDeps } from '../http/testApp.ts'
import { type OpenedStore, storeDrivers, TEST_DATABASE_URL } from '../store/storeDrivers.ts'
import { broadcast, buildRecorded, mine, trackerOn } from './trackerHelpers.ts'

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
const freshRecipient = (): Address => getAddress(`0x${'de11'.padEnd(36, '0')}${(++recipientCount).toString(16).padStart(4, '0')}`)

async function lifecycle(store: Store, ref: string): Promise<LifecycleRecord> {
  const record = await store.lifecycle.get(ref)
  if (record === undefined) throw new Error(`${ref} is not recorded`)
  return record
}

/** A stranger on POL pays the recipient `amount` of POL USDC twice: minted to it (from the zero address), and sent. */
async function strangerPays(recipient: Address, amount: bigint): Promise<void> {
  const pol = setupOf(world, 'POL')
  const usdc = tokenOf(world, 'POL:USDC').address
  const stranger = pol.instance.accounts[8]!
  await mintTo(pol.instance, usdc, recipient, amount)
  await mintTo(pol.instance, usdc, stranger.address, amount)
  await writeContractAndWait(pol.instance, stranger, { address: usdc, abi: erc20Abi, functionName: 'transfer', args: [recipient, amount] })
}

describe("a plain delivery is the lane's own, not any Transfer of enough to the recipient", () => {
  for (const routeId of ['across-usdc:BAS>POL', 'cctp-v2-standard:BAS>POL', 'stargate-usdc-taxi:BAS>POL'])
    it(`${routeId}: a stranger's payments leave the swap pending; the bridge's delivery completes it`, async () => {
      const { store } = opened
      const tracker = trackerOn(world, store)
      const recipient = freshRecipient()
      const swap = await buildRecorded(world, store, {
        from: 'BAS:USDC',
        to: 'POL:USDC',
        whole: '500',
        pick: (id) => id === routeId,
        sender: 2,
        recipient,
      })
      const ref = swap.result.swapEaziRef
      const receipt = await broadcast(world, swap)
      await mine(world, 'BAS')
      await tracker.pollOnce()
      expect((await lifecycle(store, ref)).state).toBe('pending')

      // Ten times the minimum, twice, by someone who is not the bridge: no delivery.
      await strangerPays(recipient, 5_000_000_000n)
      await mine(world, 'POL')
      await tracker.pollOnce()
      expect(await lifecycle(store, ref)).toMatchObject({ state: 'pending', received: null })

      const delivery = await relay(world, swap.plan, receipt)
      await mine(world, 'POL')
      await tracker.pollOnce()
      const done = await lifecycle(store, ref)
      expect(done).toMatchObject({
        state: 'done',
        substatus: 'completed',
        legs: { destination: { chain: 'POL', txHash: delivery.transactionHash } },
      })
      expect(done.received!.amount).toBeLessThan(5_000_000_000n)
      expect(done.received!.amount >= BigInt(swap.plan.toAmountMin)).toBe(true)
    })
})

describe('a destination order outcome must deliver what the order promised', () => {
  it('ignores a relay of our reference that pays another token, or a fallback of less than the bridged minimum', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const recipient = freshRecipient()
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:EURe',
      whole: '1000',
      pick: (id) => id.startsWith('across-usdc:BAS>POL|pol-univ3-eure-usdc-500'),
      sender: 2,
      recipient,
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect((await lifecycle(store, ref)).state).toBe('pending')

    // Anyone can fill an Across relay to our executor with a message carrying our reference and recipient.
    const pol = setupOf(world, 'POL')
    const spokePool = world.catalogue.lanes.get('BAS>POL')!.find((lane) => lane.bridge.id === 'across-usdc')!.deliveredBy!
    const usdc = tokenOf(world, 'POL:USDC').address
    const eure = tokenOf(world, 'POL:EURe').address
    const forger = pol.instance.accounts[8]!
    const forge = async (tokenOut: Address, minOut: bigint): Promise<void> => {
      const amount = 1_000_000n
      await mintTo(pol.instance, usdc, forger.address, amount)
      await writeContractAndWait(pol.instance, forger, { address: usdc, abi: erc20Abi, functionName: 'approve', args: [spokePool, amount] })
      const order = { ref: stringToHex(ref, { size: 32 }), token: usdc, tokenOut, minOut, recipient, deadline: 2n ** 40n, calls: [] }
      const receiptOfFill = await writeContractAndWait(pol.instance, forger, {
        address: spokePool,
        abi: standInAbi('SpokePoolStandIn'),
        functionName: 'fillRelay',
        args: [usdc, amount, pol.router.executor, encodeAbiParameters(runDestinationInputs, [order])],
      })
      expect(receiptOfFill.status).toBe('success')
    }
    // DestinationExecuted paying USDC (not EURe), and DestinationFallback of 1 USDC (the deposit asked far more).
    await forge(usdc, 0n)
    await forge(eure, 10n ** 30n)
    await mine(world, 'POL')
    await tracker.pollOnce()
    expect(await lifecycle(store, ref)).toMatchObject({ state: 'pending', received: null })

    const delivery = await relay(world, swap.plan, receipt)
    await mine(world, 'POL')
    await tracker.pollOnce()
    expect(await lifecycle(store, ref)).toMatchObject({
      state: 'done',
      substatus: 'completed',
      received: { token: eure },
      legs: { destination: { txHash: delivery.transactionHash } },
    })
  })
})

describe('one destination log is claimed by one swap', () => {
  const drivers = [
    ['PGlite', () => Promise.resolve(opened), false],
    ['PostgreSQL', () => postgres!.open(), true],
  ] as const
  for (const [name, open, own] of drivers)
    it.skipIf(name === 'PostgreSQL' && TEST_DATABASE_URL === undefined)(
      `${name}: a second claim of the same log is refused and not recorded`,
      async () => {
        const db = await open()
        try {
          const { store } = db
          const built = await Promise.all(
            ['201', '202'].map((whole) =>
              buildRecorded(world, store, {
                from: 'BAS:USDC',
                to: 'POL:USDC',
                whole,
                pick: (id) => id === 'across-usdc:BAS>POL',
                sender: 3,
                recipient: freshRecipient(),
              }),
            ),
          )
          const [a, b] = built.map((entry) => entry.result.swapEaziRef) as [string, string]
          const leg = { chain: 'POL', txHash: `0x${'ab'.repeat(32)}`, blockNumber: 7n, blockHash: `0x${'cd'.repeat(32)}`, logIndex: 3 }
          const at = new Date()
          const claim = (ref: string) =>
            store.lifecycle.update(ref, { state: 'done', substatus: 'completed', legs: { destination: leg }, at }, ['built'])
          // Both replicas make their claims at once: one wins.
          const [first, second] = await Promise.all([claim(a), claim(b)])
          expect([first?.updated, second?.updated].sort()).toEqual([false, true])
          const loser = first?.updated ? b : a
          expect(await lifecycle(store, loser)).toMatchObject({ state: 'built', legs: {} })
          expect(await store.lifecycle.destinationClaimedBy('POL', leg.txHash, leg.logIndex)).toBe(first?.updated ? a : b)
          // Another log is still free to claim.
          expect(
            (await store.lifecycle.update(loser, { state: 'done', legs: { destination: { ...leg, logIndex: 4 } }, at }, ['built']))
              ?.updated,
          ).toBe(true)
        } finally {
          if (own) await db.cleanup()
        }
      },
      60_000,
    )
})

describe("the Swapped check compares the event's fee and tokenOut with the build", () => {
  it('a build re-encoded with fee 0 runs on chain but is not this swap: it stays built', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:USDC',
      whole: '300',
      pick: (id) => id === 'across-usdc:BAS>POL',
      sender: 4,
      recipient: freshRecipient(),
    })
    const request = swap.result.transactionRequest as { to: Address; data: `0x${string}`; value: `0x${string}` }
    const decoded = decodeFunctionData({ abi: swapEaziRouterAbi, data: request.data })
    expect(decoded.functionName).toBe('execute')
    const [order, ...rest] = decoded.args as unknown as [{ fee: bigint }, ...unknown[]]
    expect(order.fee > 0n).toBe(true)
    const data = encodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'execute', args: [{ ...order, fee: 0n }, ...rest] as never })
    const bas = setupOf(world, 'BAS')
    await mintTo(bas.instance, tokenOf(world, 'BAS:USDC').address, swap.sender.address, BigInt(swap.result.approval.amount))
    await sendRequest(bas.instance, swap.sender, swap.result.approval.transactionRequest as never)
    const receipt = await sendRequest(bas.instance, swap.sender, { ...request, data })
    expect(receipt.status).toBe('success')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect(await lifecycle(store, swap.result.swapEaziRef)).toMatchObject({ state: 'built', legs: {} })
    expect(await tracker.hintSourceTransaction(swap.result.swapEaziRef, receipt.transactionHash)).toMatchObject({
      ok: false,
      reason: 'not_this_swap',
    })
  })

  it('mismatchOf names a different fee or tokenOut', () => {
    const router = getAddress(`0x${'11'.repeat(20)}`)
    const expected = {
      chain: 'BAS' as const,
      router,
      sender: getAddress(`0x${'22'.repeat(20)}`),
      orderRef: 'swp_x',
      orderRefBytes32: stringToHex('swp_x', { size: 32 }),
      orderIndex: 0,
      tokenIn: getAddress(`0x${'33'.repeat(20)}`),
      amountIn: 100n,
      fee: 3n,
      recipient: getAddress(`0x${'44'.repeat(20)}`),
      tokenOut: zeroAddress,
      deadline: 0n,
    }
    const log = (fee: bigint, tokenOut: Address): SwappedLog => ({
      address: router,
      blockNumber: 1n,
      blockHash: `0x${'00'.repeat(32)}`,
      transactionHash: `0x${'00'.repeat(32)}`,
      logIndex: 0,
      topics: [],
      args: {
        ref: expected.orderRefBytes32,
        sender: expected.sender,
        recipient: expected.recipient,
        tokenIn: expected.tokenIn,
        amountIn: 100n,
        fee,
        tokenOut,
        amountOut: 0n,
      },
    })
    expect(mismatchOf(log(3n, zeroAddress), expected, router)).toBeUndefined()
    expect(mismatchOf(log(0n, zeroAddress), expected, router)).toBe('fee 0, not 3')
    expect(mismatchOf(log(3n, expected.tokenIn), expected, router)).toBe(`tokenOut ${expected.tokenIn}, not ${zeroAddress}`)
  })
})

describe('a batch whose transaction reverted', () => {
  it('shows its plain transfer failed with the tracked legs, not done', async () => {
    const { store } = opened
    const tracker = trackerOn(world, store)
    const bas = setupOf(world, 'BAS')
    const sender = bas.instance.accounts[7]!
    const block = await bas.instance.publicClient.getBlock()
    const deps = testDeps({
      catalogue: world.catalogue,
      files: world.files,
      routerOn: routerOnWorld(world),
      clock: () => Number(block.timestamp) * 1000,
      store,
    })
    const result = await disburse(deps, {
      keyId: 'key_delivery_checks',
      params: {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: sender.address,
        slippage: 0.005,
        recipients: [
          { address: freshRecipient(), toChain: 'BAS' as const, toToken: 'USDC', amount: '10' },
          { address: freshRecipient(), toChain: 'POL' as const, toToken: 'USDC', amount: '300' },
        ],
      },
    })
    // Funded but never approved: executeBatch reverts.
    await mintTo(bas.instance, tokenOf(world, 'BAS:USDC').address, sender.address, BigInt(result.approval.amount))
    const receipt = await sendRequest(bas.instance, sender, result.transactionRequest as never)
    expect(receipt.status).toBe('reverted')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    const status = await getSwapStatus(
      { ...deps, tracking: { follows: () => true, hintSourceTransaction: async () => ({ ok: true, isFinal: true }) } },
      { ref: result.disbursementRef },
    )
    expect(status.orders[1]?.state).toBe('failed')
    expect(status.orders[0]).toMatchObject({ state: 'failed', substatus: null })
  })
})
