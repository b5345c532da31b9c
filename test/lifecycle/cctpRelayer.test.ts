// Our CCTP relayer on two anvil chains (BAS → POL) with the catalogue's stand-ins, through the local stand-in of
// Circle's attestation service: a bridge followed by a swap on arrival is relayed and executed; an unattested or
// wrongly attested message is refused on chain; a duplicate cannot pay twice; two relayers sharing one PostgreSQL
// submit each message once.
import pino from 'pino'
import { type Address, getAddress, type Hash, type Hex, keccak256, parseEventLogs, stringToHex, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi } from '../../src/contracts/routerArtifact.ts'
import { type AttestationClient, type AttestedMessage, createAttestationClient } from '../../src/lifecycle/attestationClient.ts'
import { messageTransmitterAbi } from '../../src/lifecycle/cctpMessages.ts'
import { type CctpDestination, type CctpRelayer, createCctpRelayer, type MessageRelayOutcome } from '../../src/lifecycle/cctpRelayer.ts'
import { createRelayScheduler } from '../../src/lifecycle/relayPendingSwaps.ts'
import type { LeaseStore } from '../../src/store/createLifecycleStore.ts'
import { createStore } from '../../src/store/createStore.ts'
import { migrate } from '../../src/store/migrations.ts'
import { openPostgresSql } from '../../src/store/openPostgresSql.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { attestCctpMessage } from '../chain/cctpMessage.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { balanceOf, executeSwap, type PlannedSwap, planSwap, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { dropSchema, type OpenedStore, storeDrivers, TEST_DATABASE_URL, uniqueSchemaName } from '../store/storeDrivers.ts'
import { type AttestationStandIn, startAttestationStandIn } from './attestationStandIn.ts'
import { broadcast, buildRecorded, mine, trackerOn } from './trackerHelpers.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const log = pino({ level: 'silent' })
const CCTP_WITH_SWAP = (id: string): boolean => id.startsWith('cctp-v2-fast:BAS>POL|pol-univ3-eure-usdc-500')

let world: CatalogueOnChains
let standIn: AttestationStandIn
let opened: OpenedStore
let destination: CctpDestination
let attestations: AttestationClient
let counter = 0

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL'])
  standIn = await startAttestationStandIn({ chains: new Map([[6, setupOf(world, 'BAS').instance]]), pendingPolls: 1 })
  opened = await storeDrivers()[0]!.open()
  attestations = createAttestationClient({ url: standIn.url, pollMs: { firstMs: 20, maxMs: 100 } })
  destination = destinationOn(world, setupOf(world, 'POL').instance.accounts[7]!)
}, 120_000)
afterAll(async () => {
  await attestations?.close()
  await standIn?.close()
  await opened?.cleanup()
  await world?.stop()
})

/** POL as the relayer sees it: domain 7, our executor, the stand-in transmitter, and the relayer key's wallet. */
function destinationOn(on: CatalogueOnChains, relayerAccount: ReturnType<typeof setupOf>['instance']['accounts'][number]): CctpDestination {
  const pol = setupOf(on, 'POL')
  const endpoint = on.files.bridges.bridges
    .find((bridge) => bridge.id === 'cctp-v2-fast')!
    .endpoints.find((entry) => entry.chain === 'POL')!
  return {
    chain: 'POL',
    domain: 7,
    executor: pol.router.executor,
    transmitter: getAddress(endpoint.deliveredBy!),
    publicClient: pol.instance.publicClient,
    walletClient: pol.instance.walletClient(relayerAccount),
  }
}

function relayerWith(leases: LeaseStore, holder: string, options: { bumpAfterMs?: number; receiptTimeoutMs?: number } = {}): CctpRelayer {
  return createCctpRelayer({
    ...options,
    attestations,
    sourceDomains: { BAS: 6, POL: 7 },
    sourceExecutors: { BAS: setupOf(world, 'BAS').router.executor },
    destinations: [destination],
    leases,
    holder,
    log,
    attestationWaitMs: 30_000,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 50))),
  })
}

/** A CCTP-with-hook swap signed and mined on BAS under a fresh reference. */
async function burnOnBase(): Promise<{ ref: string; plan: PlannedSwap; receipt: Awaited<ReturnType<typeof executeSwap>> }> {
  counter += 1
  const ref = newSwapRef(Date.now() + counter)
  const plan = await planSwap(world, 'BAS:USDC', 'POL:EURe', 1000n, CCTP_WITH_SWAP, { ref: stringToHex(ref, { size: 32 }) })
  const receipt = await executeSwap(world, plan)
  expect(receipt.status).toBe('success')
  return { ref, plan, receipt }
}

/** Every DestinationExecuted and DestinationFallback our executor on POL emitted for `ref`, over the whole chain. */
async function deliveriesOf(ref: string): Promise<number> {
  const logs = await setupOf(world, 'POL').instance.publicClient.getLogs({ address: destination.executor, fromBlock: 0n })
  const events = parseEventLogs({ abi: swapEaziExecutorAbi, logs, eventName: ['DestinationExecuted', 'DestinationFallback'] })
  return events.filter((event) => event.args.ref === stringToHex(ref, { size: 32 })).length
}

async function attestedMessageOf(receipt: { transactionHash: Hash }): Promise<AttestedMessage> {
  const [attested] = await attestations.waitForAttestation(6, receipt.transactionHash, { deadlineMs: Date.now() + 10_000 })
  return attested!
}

const nonceOf = (message: Hex): Hex => `0x${message.slice(2 + 24, 2 + 24 + 64)}`

describe('the CCTP relayer (issue 18 item 4)', () => {
  it('relays a bridge followed by a swap on arrival through the attestation service: the executor runs the order', async () => {
    const { ref, plan, receipt } = await burnOnBase()
    const pol = setupOf(world, 'POL')
    const eure = tokenOf(world, 'POL:EURe')
    const before = await balanceOf(pol.instance, eure, plan.recipient)
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-a')
    const requestsBefore = standIn.requests.length

    const outcome = await relayer.relayForSwap({ ref, fromChain: 'BAS', transactionRequest: plan.build.transactionRequest }, receipt)
    await relayer.close()

    expect(outcome.ref).toBe(ref)
    expect(outcome.messages).toHaveLength(1)
    const [relayed] = outcome.messages
    if (relayed?.kind !== 'relayed')
      throw new Error(`not relayed: ${JSON.stringify(relayed, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`)
    // Polled until complete: the first answer was pending (and a pending message is never submitted).
    expect(standIn.requests.length - requestsBefore).toBeGreaterThanOrEqual(2)
    const delivery = await pol.instance.publicClient.getTransactionReceipt({ hash: relayed.transaction })
    expect(delivery.status).toBe('success')
    expect(getAddress(delivery.from)).toBe(destination.walletClient.account.address)
    expect(getAddress(delivery.to!)).toBe(destination.executor)
    const [executed] = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
    const received = (await balanceOf(pol.instance, eure, plan.recipient)) - before
    expect(executed?.args).toMatchObject({ ref: stringToHex(ref, { size: 32 }), recipient: plan.recipient, amountOut: received })
    expect(received >= plan.toAmountMin).toBe(true)
    expect(
      await pol.instance.publicClient.readContract({
        address: destination.transmitter,
        abi: messageTransmitterAbi,
        functionName: 'usedNonces',
        args: [relayed.nonce],
      }),
    ).toBe(1n)

    // Relaying costs the relayer destination gas: the quote prices the bridge's destination gas, the router's overhead
    // and the venue on arrival (src/engine/simulateRoute.ts), which must cover relayCctp's gas plus the base fee.
    const lane = plan.priced.route.bridge!
    const venue = plan.priced.route.destinationSwaps[0]!.venue
    const pricedUnits = lane.bridge.destinationGasUnits + world.catalogue.pricing.routerOverheadGasUnits + venue.gasUnits
    console.info(`relayCctp gasUsed on anvil: ${delivery.gasUsed} (quote prices ${pricedUnits} destination gas units)`)
    expect(delivery.gasUsed).toBeLessThanOrEqual(pricedUnits)
  })

  it('a route that ends at the bridge is minted to the recipient with receiveMessage (anyone may receive it)', async () => {
    const plan = await planSwap(world, 'BAS:USDC', 'POL:USDC', 100n, (id) => id === 'cctp-v2-fast:BAS>POL', {
      recipient: getAddress(`0x${'b1d9e'.padEnd(40, '0')}`),
    })
    const receipt = await executeSwap(world, plan)
    const pol = setupOf(world, 'POL')
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-a')
    const outcome = await relayer.relayForSwap(
      { ref: newSwapRef(Date.now()), fromChain: 'BAS', transactionRequest: plan.build.transactionRequest },
      receipt,
    )
    await relayer.close()
    const [relayed] = outcome.messages
    if (relayed?.kind !== 'relayed') throw new Error(`not relayed: ${relayed?.kind}`)
    const delivery = await pol.instance.publicClient.getTransactionReceipt({ hash: relayed.transaction })
    expect(getAddress(delivery.to!)).toBe(destination.transmitter)
    const priced = plan.priced.route.bridge!.bridge.destinationGasUnits
    console.info(`receiveMessage gasUsed on anvil: ${delivery.gasUsed} (quote prices ${priced} destination gas units)`)
    expect(delivery.gasUsed).toBeLessThanOrEqual(priced)
    const minted = await balanceOf(pol.instance, tokenOf(world, 'POL:USDC'), plan.recipient)
    expect(minted >= plan.toAmountMin).toBe(true)
    // The stand-in service keeps the most the burn allows, so exactly the bridge step's estimate arrives.
    expect(minted).toBe(plan.build.sized.steps[0]!.amountOut)
  })

  it('a swap by another bridge, or a burn not by our executor, has nothing to relay and asks the service nothing', async () => {
    const plan = await planSwap(world, 'BAS:USDC', 'POL:USDC', 100n, (id) => id === 'across-usdc:BAS>POL')
    const receipt = await executeSwap(world, plan)
    const requestsBefore = standIn.requests.length
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-a')
    const acrossRecord = { ref: newSwapRef(Date.now()), fromChain: 'BAS', transactionRequest: plan.build.transactionRequest }
    expect(await relayer.relayForSwap(acrossRecord, receipt)).toMatchObject({ messages: [] })
    // The same bridge-only CCTP burn, made by someone else's contract: not ours to pay for.
    const cctp = await planSwap(world, 'BAS:USDC', 'POL:USDC', 100n, (id) => id === 'cctp-v2-fast:BAS>POL')
    const cctpReceipt = await executeSwap(world, cctp)
    const stranger = createCctpRelayer({
      attestations,
      sourceDomains: { BAS: 6 },
      sourceExecutors: { BAS: setupOf(world, 'BAS').instance.accounts[8]!.address },
      destinations: [destination],
      leases: opened.store.lifecycle.leases,
      holder: 'replica-a',
      log,
    })
    const cctpRecord = { ref: newSwapRef(Date.now()), fromChain: 'BAS', transactionRequest: cctp.build.transactionRequest }
    expect(await stranger.relayForSwap(cctpRecord, cctpReceipt)).toMatchObject({ messages: [] })
    await relayer.close()
    await stranger.close()
    expect(standIn.requests.length).toBe(requestsBefore)
  })

  it('a burn whose hook carries our reference but not the order we built is not relayed (no gas for a re-encoded build)', async () => {
    counter += 1
    const ref = newSwapRef(Date.now() + counter)
    const options = { ref: stringToHex(ref, { size: 32 }) }
    const built = await planSwap(world, 'BAS:USDC', 'POL:EURe', 1000n, CCTP_WITH_SWAP, options)
    // The sender signs another DestinationOrder under our reference (here a smaller minimum) instead of our build.
    const sent = await planSwap(world, 'BAS:USDC', 'POL:EURe', 900n, CCTP_WITH_SWAP, options)
    const receipt = await executeSwap(world, sent)
    expect(receipt.status).toBe('success')
    const requestsBefore = standIn.requests.length
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-a')
    const record = { ref, fromChain: 'BAS', transactionRequest: built.build.transactionRequest }
    expect(relayer.hasBurnsToRelay(record, receipt)).toBe(false)
    expect(await relayer.relayForSwap(record, receipt)).toEqual({ ref, messages: [] })
    // The same burn is relayed for the record that built it.
    expect(relayer.hasBurnsToRelay({ ...record, transactionRequest: sent.build.transactionRequest }, receipt)).toBe(true)
    await relayer.close()
    expect(standIn.requests.length).toBe(requestsBefore)
    expect(await deliveriesOf(ref)).toBe(0)
  })

  it('an unattested or wrongly attested message is refused on chain: nothing minted, the nonce stays unused', async () => {
    const { ref, receipt } = await burnOnBase()
    const { message, attestation } = await attestedMessageOf(receipt)
    const pol = setupOf(world, 'POL')
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-a')
    const wrongKey = keccak256(toHex('not the attester'))
    try {
      expect(await relayer.relayMessage(destination, { message, attestation: '0x', eventNonce: null })).toMatchObject({
        kind: 'failed',
        reason: 'relayCctp reverts: Invalid attestation length',
      })
      expect(
        await relayer.relayMessage(destination, { message, attestation: await attestCctpMessage(message, wrongKey), eventNonce: null }),
      ).toMatchObject({ kind: 'failed', reason: 'relayCctp reverts: Invalid signer for signature' })
    } finally {
      await relayer.close()
    }
    // The same refusal on chain, for a transaction sent without simulation (a fixed gas limit skips estimation).
    const wallet = pol.instance.walletClient(pol.instance.accounts[6]!)
    const hash = await wallet.writeContract({
      address: destination.executor,
      abi: swapEaziExecutorAbi,
      functionName: 'relayCctp',
      args: [destination.transmitter, message, '0x'],
      gas: 1_000_000n,
    })
    expect((await pol.instance.publicClient.waitForTransactionReceipt({ hash })).status).toBe('reverted')
    const read = {
      address: destination.transmitter,
      abi: messageTransmitterAbi,
      functionName: 'usedNonces',
      args: [nonceOf(message)],
    } as const
    expect(await pol.instance.publicClient.readContract(read)).toBe(0n)
    expect(await deliveriesOf(ref)).toBe(0)
    // The right attestation still goes through afterwards.
    expect(attestation).not.toBe('0x')
  })

  it('a duplicate relay reverts harmlessly: no second payout, and the relayer does not even send it', async () => {
    const { ref, plan, receipt } = await burnOnBase()
    const pol = setupOf(world, 'POL')
    const eure = tokenOf(world, 'POL:EURe')
    const usdc = tokenOf(world, 'POL:USDC')
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-a')
    const first = await relayer.relayForSwap({ ref, fromChain: 'BAS', transactionRequest: plan.build.transactionRequest }, receipt)
    expect(first.messages[0]?.kind).toBe('relayed')
    const relayerAddress = destination.walletClient.account.address
    const sentBefore = await pol.instance.publicClient.getTransactionCount({ address: relayerAddress })
    const balances = async (): Promise<bigint[]> =>
      Promise.all([
        balanceOf(pol.instance, eure, plan.recipient),
        balanceOf(pol.instance, usdc, plan.recipient),
        balanceOf(pol.instance, eure, destination.executor),
        balanceOf(pol.instance, usdc, destination.executor),
      ])
    const held = await balances()

    // Asked again (a tracker's retry, a restart): the nonce is used, so nothing is sent.
    const again = await relayer.relayForSwap({ ref, fromChain: 'BAS', transactionRequest: plan.build.transactionRequest }, receipt)
    await relayer.close()
    expect(again.messages).toEqual([{ kind: 'already_received', nonce: first.messages[0]!.nonce }])
    expect(await pol.instance.publicClient.getTransactionCount({ address: relayerAddress })).toBe(sentBefore)

    // Forced through anyway (another relayer, without simulation): the transmitter refuses the used nonce, the whole
    // relayCctp reverts, and nobody is paid twice.
    const { message, attestation } = await attestedMessageOf(receipt)
    const hash = await pol.instance.walletClient(pol.instance.accounts[6]!).writeContract({
      address: destination.executor,
      abi: swapEaziExecutorAbi,
      functionName: 'relayCctp',
      args: [destination.transmitter, message, attestation],
      gas: 1_000_000n,
    })
    const duplicate = await pol.instance.publicClient.waitForTransactionReceipt({ hash })
    expect(duplicate.status).toBe('reverted')
    expect(duplicate.logs).toEqual([])
    expect(await balances()).toEqual(held)
    expect(await deliveriesOf(ref)).toBe(1)
    await expect(
      pol.instance.publicClient.simulateContract({
        address: destination.executor,
        abi: swapEaziExecutorAbi,
        functionName: 'relayCctp',
        args: [destination.transmitter, message, attestation],
        account: pol.instance.accounts[6]!,
      }),
    ).rejects.toThrow(/Nonce already used/)
  })
})

/**
 * POL with automine off while `run` goes on: the test mines each block itself, so a submission can be left out of one
 * (a base fee above its fees) and the replacement seen in the pool first.
 */
async function withManualMining<T>(run: (pol: ReturnType<typeof setupOf>['instance']) => Promise<T>): Promise<T> {
  const pol = setupOf(world, 'POL').instance
  await pol.testClient.setAutomine(false)
  try {
    return await run(pol)
  } finally {
    await pol.testClient.mine({ blocks: 1 })
    await pol.testClient.setAutomine(true)
  }
}

/** The relayer key's pending transaction at `nonce` in POL's pool, once there is one (another hash than `not`). */
async function pendingFromRelayer(
  pol: ReturnType<typeof setupOf>['instance'],
  nonce: number,
  not?: Hash,
): Promise<{ hash: Hash; maxFeePerGas: bigint; to: string | null }> {
  const relayer = destination.walletClient.account.address
  for (let attempt = 0; attempt < 200; attempt++) {
    const pool = await pol.testClient.getTxpoolContent()
    const entries = Object.entries(pool.pending).find(([sender]) => sender.toLowerCase() === relayer.toLowerCase())?.[1]
    const transaction = entries?.[String(nonce)]
    if (transaction !== undefined && transaction.hash !== not)
      return { hash: transaction.hash, maxFeePerGas: BigInt(transaction.maxFeePerGas ?? 0n), to: transaction.to }
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`no pending transaction from the relayer at nonce ${nonce}${not ? ` other than ${not}` : ''}`)
}

describe('a relay left unmined by a rising base fee (fees bumped, or the relay cancelled)', () => {
  it('is replaced at the same nonce with higher fees, and the replacement is mined; the first never is', async () => {
    const { ref, receipt } = await burnOnBase()
    const attested = await attestedMessageOf(receipt)
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-bump', { bumpAfterMs: 200 })
    const outcome = await withManualMining(async (pol) => {
      const nonce = await pol.publicClient.getTransactionCount({ address: destination.walletClient.account.address })
      const relaying = relayer.relayMessage(destination, attested)
      const first = await pendingFromRelayer(pol, nonce)
      // The next block's base fee is above what the first submission offers: it is left out.
      await pol.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: first.maxFeePerGas * 2n })
      await pol.testClient.mine({ blocks: 1 })
      const replacement = await pendingFromRelayer(pol, nonce, first.hash)
      expect(replacement.maxFeePerGas).toBeGreaterThan(first.maxFeePerGas * 2n)
      expect(replacement.to?.toLowerCase()).toBe(destination.executor.toLowerCase())
      await pol.testClient.mine({ blocks: 1 })
      const result = await relaying
      await expect(pol.publicClient.getTransactionReceipt({ hash: first.hash })).rejects.toThrow()
      return { result, replacement }
    })
    await relayer.close()
    expect(outcome.result).toMatchObject({ kind: 'relayed', transaction: outcome.replacement.hash })
    expect(await deliveriesOf(ref)).toBe(1)
  })

  it('is cancelled (0 to the key itself, same nonce, higher fees) when someone else relays the message meanwhile', async () => {
    const { ref, receipt } = await burnOnBase()
    const attested = await attestedMessageOf(receipt)
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-cancel', { bumpAfterMs: 200 })
    const relayerAddress = destination.walletClient.account.address
    const outcome = await withManualMining(async (pol) => {
      const nonce = await pol.publicClient.getTransactionCount({ address: relayerAddress })
      const relaying = relayer.relayMessage(destination, attested)
      const first = await pendingFromRelayer(pol, nonce)
      // A keeper relays the same message, paying more: its transaction makes the block, ours does not.
      const keeper = await pol.walletClient(pol.accounts[8]!).writeContract({
        address: destination.executor,
        abi: swapEaziExecutorAbi,
        functionName: 'relayCctp',
        args: [destination.transmitter, attested.message, attested.attestation],
        gas: 1_000_000n,
        maxFeePerGas: first.maxFeePerGas * 10n,
        maxPriorityFeePerGas: first.maxFeePerGas,
      })
      await pol.testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: first.maxFeePerGas * 2n })
      await pol.testClient.mine({ blocks: 1 })
      expect((await pol.publicClient.getTransactionReceipt({ hash: keeper })).status).toBe('success')
      const cancel = await pendingFromRelayer(pol, nonce, first.hash)
      expect(cancel.to?.toLowerCase()).toBe(relayerAddress.toLowerCase())
      await pol.testClient.mine({ blocks: 1 })
      const result = await relaying
      const mined = await pol.publicClient.getTransactionReceipt({ hash: cancel.hash })
      await expect(pol.publicClient.getTransactionReceipt({ hash: first.hash })).rejects.toThrow()
      return { result, mined, nonce }
    })
    await relayer.close()
    expect(outcome.result).toEqual({ kind: 'already_received', nonce: nonceOf(attested.message) })
    expect(outcome.mined.status).toBe('success')
    expect(outcome.mined.gasUsed).toBe(21_000n)
    // The key's nonce moved on by the cancel alone, so its next relay is not held behind a stuck one.
    expect(await setupOf(world, 'POL').instance.publicClient.getTransactionCount({ address: relayerAddress })).toBe(outcome.nonce + 1)
    expect(await deliveriesOf(ref)).toBe(1)
  })
})

describe('a relay given up on while still unmined', () => {
  it('is replaced by the next submission from the key, at its nonce and above its fees; its message is relayed again after', async () => {
    const first = await burnOnBase()
    const second = await burnOnBase()
    const [attestedFirst, attestedSecond] = [await attestedMessageOf(first.receipt), await attestedMessageOf(second.receipt)]
    // No replacement within the wait: the first relay is given up on, still in the pool.
    const relayer = relayerWith(opened.store.lifecycle.leases, 'replica-stuck', { bumpAfterMs: 60_000, receiptTimeoutMs: 2_000 })
    const outcome = await withManualMining(async (pol) => {
      const relayerAddress = destination.walletClient.account.address
      const nonce = await pol.publicClient.getTransactionCount({ address: relayerAddress })
      const relayingFirst = relayer.relayMessage(destination, attestedFirst)
      // No block is mined meanwhile: the relay waits in the pool past the relayer's wait.
      const stuckTx = await pendingFromRelayer(pol, nonce)
      expect(await relayingFirst).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/not mined within/) })
      // The next relay takes the stuck nonce, paying more, instead of queueing behind it at nonce + 1.
      const relayingSecond = relayer.relayMessage(destination, attestedSecond)
      const replacement = await pendingFromRelayer(pol, nonce, stuckTx.hash)
      expect(replacement.maxFeePerGas > stuckTx.maxFeePerGas).toBe(true)
      await pol.testClient.mine({ blocks: 1 })
      const relayedSecond = await relayingSecond
      // The first message was never received: relayed again, at the next nonce.
      const relayingAgain = relayer.relayMessage(destination, attestedFirst)
      await pendingFromRelayer(pol, nonce + 1)
      await pol.testClient.mine({ blocks: 1 })
      return { relayedSecond, relayedAgain: await relayingAgain, replacement, stuckTx, nonce }
    })
    await relayer.close()
    expect(outcome.relayedSecond).toMatchObject({ kind: 'relayed', transaction: outcome.replacement.hash })
    expect(outcome.relayedAgain).toMatchObject({ kind: 'relayed' })
    const pol = setupOf(world, 'POL').instance
    expect((await pol.publicClient.getTransaction({ hash: outcome.replacement.hash })).nonce).toBe(outcome.nonce)
    await expect(pol.publicClient.getTransactionReceipt({ hash: outcome.stuckTx.hash })).rejects.toThrow()
    expect(await deliveriesOf(first.ref)).toBe(1)
    expect(await deliveriesOf(second.ref)).toBe(1)
  })
})

describe('the tracker with our relayer as its onSourceFinal hook (issue 18 item 8)', () => {
  it('a CCTP bridge followed by a swap on arrival, built by the service and broadcast by a wallet, reaches done/completed', async () => {
    const { store } = opened
    const relayer = relayerWith(store.lifecycle.leases, 'replica-a')
    const scheduler = createRelayScheduler({
      relayer,
      lifecycle: store.lifecycle,
      leases: store.lifecycle.leases,
      holder: 'replica-a',
      clients: { BAS: setupOf(world, 'BAS').instance.publicClient },
      log,
    })
    const tracker = trackerOn(world, store, { onSourceFinal: (record, receipt) => scheduler.schedule(record, receipt) })
    const recipient = getAddress(`0x${'7e1a'.padEnd(36, '0')}0001`)
    const swap = await buildRecorded(world, store, {
      from: 'BAS:USDC',
      to: 'POL:EURe',
      whole: '1000',
      pick: CCTP_WITH_SWAP,
      sender: 4,
      recipient,
    })
    const ref = swap.result.swapEaziRef
    const receipt = await broadcast(world, swap)
    expect(receipt.status).toBe('success')
    await mine(world, 'BAS')
    await tracker.pollOnce()
    expect((await store.lifecycle.get(ref))?.state).toBe('pending')
    // The hook started the relay; nobody called relay() here.
    const [outcome, ...more] = await scheduler.idle()
    expect(more).toEqual([])
    expect(outcome?.messages.map((message) => message.kind)).toEqual(['relayed'])
    const relayed = outcome!.messages[0] as Extract<MessageRelayOutcome, { kind: 'relayed' }>
    await mine(world, 'POL')
    await tracker.pollOnce()
    const done = await store.lifecycle.get(ref)
    const arrived = await balanceOf(setupOf(world, 'POL').instance, tokenOf(world, 'POL:EURe'), recipient)
    expect(arrived >= BigInt(swap.plan.toAmountMin)).toBe(true)
    expect(done).toMatchObject({
      state: 'done',
      substatus: 'completed',
      received: { chain: 'POL', amount: arrived },
      legs: { destination: { chain: 'POL', txHash: relayed.transaction } },
    })
    await tracker.stop()
    await relayer.close()
  })
})

describe('the relay sweep', () => {
  it('relays a swap the tracker left pending when its hook never ran (a restart), once, and never a swap not ours', async () => {
    const { ref, plan, receipt } = await burnOnBase()
    const across = await planSwap(world, 'BAS:USDC', 'POL:EURe', 100n, (id) => id.startsWith('across-usdc:BAS>POL|'))
    const acrossReceipt = await executeSwap(world, across)
    const acrossRef = newSwapRef(Date.now() + 500)
    const { store } = opened
    const source = (hash: Hash, blockNumber: bigint, blockHash: Hex) => ({
      chain: 'BAS',
      txHash: hash,
      blockNumber,
      blockHash,
      logIndex: 0,
    })
    for (const [swapRef, mined, transactionRequest] of [
      [ref, receipt, plan.build.transactionRequest],
      [acrossRef, acrossReceipt, across.build.transactionRequest],
    ] as const) {
      await store.recordKeyedSwap({
        ref: swapRef,
        channel: 'api_key',
        status: 'built',
        fromChain: 'BAS',
        toChain: 'POL',
        fromToken: 'USDC',
        toToken: 'EURe',
        fromAmount: '1000',
        toAmount: String(plan.toAmount),
        toAmountMin: String(plan.toAmountMin),
        fromAddress: plan.sender.address,
        toAddress: plan.recipient,
        quote: {},
        transactionRequest,
        keyId: 'k_sweep',
        createdAt: new Date(),
      })
      const moved = await store.lifecycle.update(
        swapRef,
        { state: 'pending', legs: { source: source(mined.transactionHash, mined.blockNumber, mined.blockHash) }, at: new Date() },
        ['built'],
      )
      expect(moved?.updated).toBe(true)
    }
    const relayer = relayerWith(store.lifecycle.leases, 'replica-a')
    const bas = setupOf(world, 'BAS').instance.publicClient
    const scheduler = createRelayScheduler({
      relayer,
      lifecycle: store.lifecycle,
      leases: store.lifecycle.leases,
      holder: 'replica-a',
      clients: { BAS: bas },
      log,
    })
    const requestsBefore = standIn.requests.length
    expect(await scheduler.sweep()).toEqual({ isLeader: true, scheduled: 1 })
    const outcomes = await scheduler.idle()
    expect(outcomes.map((outcome) => [outcome.ref, outcome.messages.map((message) => message.kind)])).toEqual([[ref, ['relayed']]])
    expect(await deliveriesOf(ref)).toBe(1)
    // The Across swap was never sent to the attestation service.
    expect(standIn.requests.slice(requestsBefore).every((request) => request.transactionHash === receipt.transactionHash)).toBe(true)
    // Another replica does not sweep while this one holds the lease.
    const other = createRelayScheduler({
      relayer,
      lifecycle: store.lifecycle,
      leases: store.lifecycle.leases,
      holder: 'replica-b',
      clients: { BAS: bas },
      log,
    })
    expect(await other.sweep()).toEqual({ isLeader: false, scheduled: 0 })
    // Still pending (the tracker has not seen the delivery yet): swept again, found received, nothing sent.
    expect(await scheduler.sweep()).toEqual({ isLeader: true, scheduled: 1 })
    expect((await scheduler.idle()).map((outcome) => outcome.messages.map((message) => message.kind))).toEqual([['already_received']])
    expect(await deliveriesOf(ref)).toBe(1)
    await relayer.close()
  })
})

describe.skipIf(TEST_DATABASE_URL === undefined)('two relayers on one PostgreSQL', () => {
  it('submit each message once: one relays it, the other finds it received', async () => {
    const url = TEST_DATABASE_URL ?? ''
    const schema = uniqueSchemaName()
    const first = await openPostgresSql(url, { schema })
    await migrate(first)
    const second = await openPostgresSql(url, { schema })
    try {
      const replicas = [
        relayerWith(createStore(first).lifecycle.leases, 'replica-1'),
        relayerWith(createStore(second).lifecycle.leases, 'replica-2'),
      ]
      const relayerAddress: Address = destination.walletClient.account.address
      const pol = setupOf(world, 'POL')
      for (let round = 0; round < 3; round++) {
        const { ref, plan, receipt } = await burnOnBase()
        const sentBefore = await pol.instance.publicClient.getTransactionCount({ address: relayerAddress })
        // Blocks every second, not per transaction: a submission stays pending for a while, so without the lease
        // both replicas would read the nonce unused and both send.
        await pol.instance.testClient.setAutomine(false)
        await pol.instance.testClient.setIntervalMining({ interval: 1 })
        let outcomes: Awaited<ReturnType<CctpRelayer['relayForSwap']>>[]
        try {
          outcomes = await Promise.all(
            replicas.map((replica) =>
              replica.relayForSwap({ ref, fromChain: 'BAS', transactionRequest: plan.build.transactionRequest }, receipt),
            ),
          )
        } finally {
          await pol.instance.testClient.setIntervalMining({ interval: 0 })
          await pol.instance.testClient.setAutomine(true)
        }
        const kinds = outcomes.flatMap((outcome) => outcome.messages.map((message) => message.kind)).sort()
        expect(kinds).toEqual(['already_received', 'relayed'])
        expect(await pol.instance.publicClient.getTransactionCount({ address: relayerAddress })).toBe(sentBefore + 1)
        expect(await deliveriesOf(ref)).toBe(1)
      }
      await Promise.all(replicas.map((replica) => replica.close()))
    } finally {
      await first.close()
      await second.close()
      await dropSchema(url, schema)
    }
  })
})
