// The background reconciler of onchain x402 payments (issue 18 item 5) on anvil with Base's USDC: a settlement left
// unconfirmed is settled once its receipt is found; one that was dropped is released once its authorization expired
// unused, and the dropped transaction broadcast again then cannot move money; never both.
import pino from 'pino'
import { type Address, erc20Abi, type Hash, keccak256, parseAbi, parseSignature, serializeTransaction } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startPaymentReconciler } from '../../src/lifecycle/reconcilePayments.ts'
import { onchainSettler } from '../../src/payments/x402/onchainSettler.ts'
import { type ExternalSettlement, reservationOf, type Settler, type VerifiedPayment } from '../../src/payments/x402/settlement.ts'
import type { SwapRecord } from '../../src/store/createStore.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { type BaseUsdcChain, signedPayment, startBaseUsdc } from '../chain/baseUsdc.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'

const log = pino({ level: 'silent' })
const CANCEL_ABI = parseAbi(['function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)'])
let chain: BaseUsdcChain
let opened: OpenedStore
let settler: Settler & ExternalSettlement

const payer = (): (typeof chain.anvil.accounts)[number] => chain.anvil.accounts[1]!
const payTo = (): Address => chain.anvil.accounts[2]!.address
const gasWallet = (): (typeof chain.anvil.accounts)[number] => chain.anvil.accounts[3]!

beforeAll(async () => {
  chain = await startBaseUsdc()
  await chain.mint(payer().address, 1_000_000n)
  opened = await storeDrivers()[0]!.open()
  // The receipt is waited for only briefly: with automine off the settlement stays ambiguous (settlement_pending).
  settler = onchainSettler({
    publicClient: chain.anvil.publicClient,
    walletClient: chain.anvil.walletClient(gasWallet()),
    receiptTimeoutMs: 300,
  })
}, 60_000)
afterAll(async () => {
  await opened?.cleanup()
  await chain?.stop()
})

function swapFor(ref: string): SwapRecord {
  return {
    ref,
    channel: 'x402',
    status: 'built',
    fromChain: 'BAS',
    toChain: 'BAS',
    fromToken: 'USDC',
    toToken: 'EURC',
    fromAmount: '100',
    toAmount: '90',
    toAmountMin: '89',
    fromAddress: payer().address,
    toAddress: payer().address,
    quote: {},
    transactionRequest: {},
    createdAt: new Date(),
  }
}

function reconcilerAs(holder: string): ReturnType<typeof startPaymentReconciler> {
  return startPaymentReconciler({
    settler,
    store: opened.store,
    leases: opened.store.lifecycle.leases,
    holder,
    clock: Date.now,
    log,
    intervalMs: 3_600_000,
  })
}

/** Collects `payment` for a new swap with blocks mined only on demand: the settlement is broadcast, not confirmed. */
async function leaveUnsettled(payment: VerifiedPayment): Promise<{ ref: string; transaction: Hash }> {
  const ref = newSwapRef(Date.now())
  const outcome = await settler.collect({
    payment,
    swap: swapFor(ref),
    delivery: { requestKey: 'a|b|c', result: { swapEaziRef: ref } },
    store: opened.store,
    now: () => new Date(),
    log,
  })
  expect(outcome).toMatchObject({ ok: false, reason: 'settlement_pending', isAmbiguous: true })
  const row = await opened.store.getPayment(payment.payer, payment.nonce)
  expect(row).toMatchObject({ status: 'unsettled', swapRef: ref })
  return { ref, transaction: row!.transaction as Hash }
}

/** The chain's time: earlier tests move it past authorizations' expiry. */
async function chainNowSec(): Promise<number> {
  return Number((await chain.anvil.publicClient.getBlock()).timestamp)
}

/** A transaction taken out of the mempool, sent again exactly as it was signed. */
async function rebroadcast(dropped: Awaited<ReturnType<typeof chain.anvil.publicClient.getTransaction>>): Promise<Hash> {
  const raw = serializeTransaction(
    {
      chainId: chain.anvil.chainId,
      type: 'eip1559',
      nonce: dropped.nonce,
      gas: dropped.gas,
      maxFeePerGas: dropped.maxFeePerGas!,
      maxPriorityFeePerGas: dropped.maxPriorityFeePerGas!,
      to: dropped.to!,
      data: dropped.input,
      value: dropped.value,
    },
    { r: dropped.r, s: dropped.s, yParity: dropped.yParity! },
  )
  expect(keccak256(raw)).toBe(dropped.hash)
  return chain.anvil.publicClient.sendRawTransaction({ serializedTransaction: raw })
}

async function expireAuthorization(payment: VerifiedPayment): Promise<void> {
  const latest = await chain.anvil.publicClient.getBlock()
  await chain.anvil.testClient.setNextBlockTimestamp({
    timestamp: payment.validBefore + 1n > latest.timestamp ? payment.validBefore + 1n : latest.timestamp + 1n,
  })
  await chain.anvil.testClient.mine({ blocks: 1 })
}

describe('the payment reconciler (issue 18 item 5)', () => {
  it('settles a settlement left unconfirmed once its receipt is found, and keeps its swap for the retry', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const before = await chain.balanceOf(payer().address)
    const reconciler = reconcilerAs('replica-a')
    await chain.anvil.testClient.setAutomine(false)
    try {
      const { ref, transaction } = await leaveUnsettled(payment)
      expect(await reconciler.runOnce()).toMatchObject({ isLeader: true, pending: 1, settled: 0, released: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toMatchObject({ status: 'unsettled' })

      await chain.anvil.testClient.mine({ blocks: 1 })
      expect(await reconciler.runOnce()).toMatchObject({ settled: 1, released: 0, pending: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toMatchObject({
        status: 'settled',
        transaction,
        requestKey: 'a|b|c',
        result: { swapEaziRef: ref },
      })
      expect(await opened.store.getSwap(ref)).toMatchObject({ ref, payment: { payer: payment.payer.toLowerCase() } })
      expect(await chain.balanceOf(payer().address)).toBe(before - payment.value)
      // Nothing left to do, and nothing is ever released after the settlement.
      expect(await reconciler.runOnce()).toMatchObject({ settled: 0, released: 0, pending: 0, changed: 0 })
    } finally {
      await chain.anvil.testClient.setAutomine(true)
      await reconciler.stop()
    }
  })

  it('releases a dropped settlement once its authorization expired unused; broadcast again, it moves nothing', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const before = await chain.balanceOf(payer().address)
    const reconciler = reconcilerAs('replica-a')
    await chain.anvil.testClient.setAutomine(false)
    let dropped: Awaited<ReturnType<typeof chain.anvil.publicClient.getTransaction>>
    let ref: string
    try {
      const left = await leaveUnsettled(payment)
      ref = left.ref
      dropped = await chain.anvil.publicClient.getTransaction({ hash: left.transaction })
      await chain.anvil.testClient.dropTransaction({ hash: left.transaction })
      // Not mined, unused, not expired: it could still be mined (a node may hold it), so it stays.
      await chain.anvil.testClient.mine({ blocks: 1 })
      expect(await reconciler.runOnce()).toMatchObject({ pending: 1, released: 0, settled: 0 })

      await expireAuthorization(payment)
      expect(await reconciler.runOnce()).toMatchObject({ released: 1, settled: 0, pending: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toBeUndefined()
      expect(await opened.store.getSwap(ref)).toBeUndefined()
    } finally {
      await chain.anvil.testClient.setAutomine(true)
      await reconciler.stop()
    }

    // The dropped settlement, broadcast again exactly as signed: mined, reverted (the authorization expired).
    const again = await rebroadcast(dropped)
    expect((await chain.anvil.publicClient.waitForTransactionReceipt({ hash: again })).status).toBe('reverted')
    expect(await chain.balanceOf(payer().address)).toBe(before)
  })

  it('holds a settlement that reverted while its authorization is still valid (anyone could still submit it), and releases it once expired', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const reconciler = reconcilerAs('replica-a')
    await chain.anvil.testClient.setAutomine(false)
    const held = await chain.balanceOf(payer().address)
    try {
      const left = await leaveUnsettled(payment)
      const dropped = await chain.anvil.publicClient.getTransaction({ hash: left.transaction })
      await chain.anvil.testClient.dropTransaction({ hash: left.transaction })
      // The payer moves its USDC away first, so the settlement, mined afterwards, reverts on the balance.
      const drain = await chain.anvil.walletClient(payer()).writeContract({
        address: payment.asset as Address,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [gasWallet().address, held],
      })
      await chain.anvil.testClient.mine({ blocks: 1 })
      expect((await chain.anvil.publicClient.getTransactionReceipt({ hash: drain })).status).toBe('success')
      const reverted = await rebroadcast(dropped)
      await chain.anvil.testClient.mine({ blocks: 1 })
      expect((await chain.anvil.publicClient.getTransactionReceipt({ hash: reverted })).status).toBe('reverted')

      // Reverted, unused and unexpired: the signed authorization could still move the money once the payer is funded.
      expect(await reconciler.runOnce()).toMatchObject({ pending: 1, released: 0, settled: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toMatchObject({ status: 'unsettled' })
      expect(await opened.store.getSwap(left.ref)).toBeDefined()

      await expireAuthorization(payment)
      expect(await reconciler.runOnce()).toMatchObject({ released: 1, settled: 0, pending: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toBeUndefined()
    } finally {
      await chain.anvil.testClient.setAutomine(true)
      await reconciler.stop()
      await chain.mint(payer().address, held)
    }
  })

  // Audit of issue 15: a request that stopped while it waited for its receipt left no hash, and a used authorization
  // was held for an operator for ever: paid, and the swap never delivered nor recorded.
  it('settles a reservation whose request stopped after its broadcast from the AuthorizationUsed event, with its swap', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const ref = newSwapRef(Date.now())
    const before = await chain.balanceOf(payTo())
    expect(
      await opened.store.reservePayment(reservationOf(payment, 'onchain', ref, new Date(Date.now() - 10 * 60_000)), swapFor(ref)),
    ).toBe(true)
    // The broadcast the stopped request made, confirmed after it stopped: its hash was never kept.
    const broadcast = await settler.settle(payment, ref)
    if (!broadcast.ok) throw new Error(broadcast.message)
    const reconciler = reconcilerAs('replica-a')
    try {
      expect(await reconciler.runOnce()).toMatchObject({ settled: 1, released: 0, pending: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toMatchObject({
        status: 'settled',
        transaction: broadcast.transaction,
      })
      expect(await opened.store.getSwap(ref)).toMatchObject({ ref, payment: { payer: payment.payer.toLowerCase() } })
      expect(await chain.balanceOf(payTo())).toBe(before + payment.value)
    } finally {
      await reconciler.stop()
    }
  })

  // Review of issue 15: the event names only (payer, nonce), and the payer's nonces are shared by all it signs.
  it('releases, never settles, a reservation whose nonce another authorization of the payer spent (to itself)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const ref = newSwapRef(Date.now())
    expect(
      await opened.store.reservePayment(reservationOf(payment, 'onchain', ref, new Date(Date.now() - 10 * 60_000)), swapFor(ref)),
    ).toBe(true)
    const decoy = await signedPayment({
      payer: payer(),
      payTo: chain.anvil.accounts[4]!.address,
      nowSec: await chainNowSec(),
      nonce: payment.nonce,
    })
    const spent = await settler.settle(decoy.payment, 'swp_decoy')
    if (!spent.ok) throw new Error(spent.message)
    const before = await chain.balanceOf(payTo())
    const reconciler = reconcilerAs('replica-a')
    try {
      expect(await reconciler.runOnce()).toMatchObject({ released: 1, settled: 0, pending: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toBeUndefined()
      expect(await opened.store.getSwap(ref)).toBeUndefined()
      expect(await chain.balanceOf(payTo())).toBe(before)
    } finally {
      await reconciler.stop()
    }
  })

  it('releases a reservation whose authorization its signer canceled on chain: it moved nothing, and never will', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const ref = newSwapRef(Date.now())
    expect(
      await opened.store.reservePayment(reservationOf(payment, 'onchain', ref, new Date(Date.now() - 10 * 60_000)), swapFor(ref)),
    ).toBe(true)
    const signature = await payer().signTypedData({
      domain: { name: 'USD Coin', version: '2', chainId: chain.anvil.chainId, verifyingContract: chain.usdc },
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer().address, nonce: payment.nonce },
    })
    const { r, s, v } = parseSignature(signature)
    await writeContractAndWait(chain.anvil, payer(), {
      address: chain.usdc,
      abi: CANCEL_ABI,
      functionName: 'cancelAuthorization',
      args: [payer().address, payment.nonce, Number(v), r, s],
    })
    const reconciler = reconcilerAs('replica-a')
    try {
      expect(await reconciler.runOnce()).toMatchObject({ released: 1, settled: 0, pending: 0 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toBeUndefined()
      expect(await opened.store.getSwap(ref)).toBeUndefined()
    } finally {
      await reconciler.stop()
    }
  })

  it('hands a reservation whose request stopped to reconciliation: pending while it can move, released once expired', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: await chainNowSec() })
    const ref = newSwapRef(Date.now())
    const reservedAt = new Date(Date.now() - 10 * 60_000)
    expect(
      await opened.store.reservePayment({
        payer: payment.payer,
        nonce: payment.nonce,
        value: payment.value,
        asset: payment.asset,
        payTo: payment.payTo,
        validAfter: payment.validAfter,
        validBefore: payment.validBefore,
        signature: payment.signature,
        settlementMode: 'onchain',
        swapRef: ref,
        reservedAt,
      }),
    ).toBe(true)
    const leader = reconcilerAs('replica-a')
    const other = reconcilerAs('replica-b')
    try {
      expect(await leader.runOnce()).toMatchObject({ isLeader: true, pending: 1 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toMatchObject({ status: 'unsettled', transaction: null })
      // One replica reconciles at a time.
      expect(await other.runOnce()).toEqual({ isLeader: false, settled: 0, released: 0, pending: 0, changed: 0 })
      await expireAuthorization(payment)
      expect(await leader.runOnce()).toMatchObject({ released: 1 })
      expect(await opened.store.getPayment(payment.payer, payment.nonce)).toBeUndefined()
    } finally {
      await leader.stop()
      await other.stop()
    }
  })
})
