import { type Address, type Hash, type Hex, createPublicClient, createWalletClient, http, parseEventLogs } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eip3009Abi } from '../../src/payments/x402/eip3009Abi.ts'
import { type OnchainSettlerPublicClient, type OnchainSettlerWalletClient, onchainSettler } from '../../src/payments/x402/onchainSettler.ts'
import type { ExternalSettlement, Settler, VerifiedPayment } from '../../src/payments/x402/settlement.ts'
import { type BaseUsdcChain, signedPayment, startBaseUsdc } from '../chain/baseUsdc.ts'
import { closedPort } from '../support/closedPort.ts'

let chain: BaseUsdcChain
let settler: Settler & ExternalSettlement

// anvil dev accounts by role; the last one mints (baseUsdc.ts).
const payer = (): (typeof chain.anvil.accounts)[number] => chain.anvil.accounts[1]!
const payTo = (): Address => chain.anvil.accounts[2]!.address
const gasWallet = (): (typeof chain.anvil.accounts)[number] => chain.anvil.accounts[3]!
const unfunded = (): (typeof chain.anvil.accounts)[number] => chain.anvil.accounts[4]!

beforeAll(async () => {
  chain = await startBaseUsdc()
  await chain.mint(payer().address, 1_000_000n)
  // The real viem clients fit the ports as they are.
  settler = onchainSettler({ publicClient: chain.anvil.publicClient, walletClient: chain.anvil.walletClient(gasWallet()) })
}, 60_000)

afterAll(async () => {
  await chain?.stop()
})

describe('onchainSettler', () => {
  it('checks a funded payer, then moves exactly 20000 from payer to payTo in one successful transaction', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const before = { payer: await chain.balanceOf(payer().address), payTo: await chain.balanceOf(payTo()) }

    expect(settler.mode).toBe('onchain')
    expect(await settler.check(payment)).toEqual({ ok: true })
    const outcome = await settler.settle(payment, 'swp_1')

    if (!outcome.ok) throw new Error(`settle failed: ${outcome.message}`)
    expect(outcome.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    const receipt = await chain.anvil.publicClient.getTransactionReceipt({ hash: outcome.transaction as Hash })
    expect(receipt.status).toBe('success')
    expect(receipt.from.toLowerCase()).toBe(gasWallet().address.toLowerCase())
    const used = parseEventLogs({ abi: eip3009Abi, logs: receipt.logs, eventName: 'AuthorizationUsed' })
    expect(used.map((log) => log.args)).toEqual([{ authorizer: payer().address, nonce: payment.nonce }])
    expect(await chain.balanceOf(payer().address)).toBe(before.payer - 20_000n)
    expect(await chain.balanceOf(payTo())).toBe(before.payTo + 20_000n)
  })

  it('refuses the same authorization again: check says already used, settle fails cleanly without broadcasting', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    expect((await settler.settle(payment, 'swp_2')).ok).toBe(true)
    const balance = await chain.balanceOf(payer().address)
    const gasNonce = await chain.anvil.publicClient.getTransactionCount({ address: gasWallet().address })

    const check = await settler.check(payment)
    expect(check).toEqual({
      ok: false,
      reason: 'payment_already_used',
      message: `The authorization with nonce ${payment.nonce} from ${payer().address} was already used or canceled on chain; sign a new payment from a fresh challenge.`,
    })
    const again = await settler.settle(payment, 'swp_2b')
    expect(again).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'USDC refused the transfer (FiatTokenV2: authorization is used or canceled); nothing was charged.',
    })
    expect(await chain.balanceOf(payer().address)).toBe(balance)
    expect(await chain.anvil.publicClient.getTransactionCount({ address: gasWallet().address })).toBe(gasNonce)
  })

  it('settles a signature whose last byte is the y parity (0/1) rather than v (27/28)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const v = Number.parseInt(payment.signature.slice(130), 16)
    const withParity: VerifiedPayment = { ...payment, signature: `${payment.signature.slice(0, 130)}0${v - 27}` as Hex }
    const balance = await chain.balanceOf(payTo())
    expect(await settler.settle(withParity, 'swp_parity')).toMatchObject({ ok: true })
    expect(await chain.balanceOf(payTo())).toBe(balance + 20_000n)
  })

  it('reports insufficient funds for a payer without USDC, and settle fails on the balance revert', async () => {
    const { payment } = await signedPayment({ payer: unfunded(), payTo: payTo() })
    expect(await settler.check(payment)).toEqual({
      ok: false,
      reason: 'insufficient_funds',
      message: `${unfunded().address} holds 0 atomic USDC on Base; the fee is 20000. Fund the wallet and pay again.`,
    })
    expect(await settler.settle(payment, 'swp_3')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'USDC refused the transfer (ERC20: transfer amount exceeds balance); nothing was charged.',
    })
  })

  it.each([
    ['expired on chain (signed long ago)', { nowSec: -1_000 }, 'FiatTokenV2: authorization is expired'],
    ['not yet valid on chain (signer clock ahead)', { nowSec: 1_000 }, 'FiatTokenV2: authorization is not yet valid'],
  ])('refuses an authorization %s through the simulation, broadcasting nothing', async (_name, { nowSec }, revert) => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo(), nowSec: Math.floor(Date.now() / 1000) + nowSec })
    const gasNonce = await chain.anvil.publicClient.getTransactionCount({ address: gasWallet().address })
    expect(await settler.settle(payment, 'swp_t')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: `USDC refused the transfer (${revert}); nothing was charged.`,
    })
    expect(await chain.anvil.publicClient.getTransactionCount({ address: gasWallet().address })).toBe(gasNonce)
  })

  it('refuses, on chain, a signature by someone other than the payer', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const { payment: impostor } = await signedPayment({ payer: unfunded(), payTo: payTo(), nonce: payment.nonce })
    const forged: VerifiedPayment = { ...payment, signature: impostor.signature }
    expect(await settler.settle(forged, 'swp_f')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'USDC refused the transfer (FiatTokenV2: invalid signature); nothing was charged.',
    })
  })

  it('treats a node answering nonsense to the reads as a failure, not a pass', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const confused: OnchainSettlerPublicClient = {
      readContract: async () => '0x',
      simulateContract: chain.anvil.publicClient.simulateContract,
      waitForTransactionReceipt: chain.anvil.publicClient.waitForTransactionReceipt,
      getTransactionReceipt: chain.anvil.publicClient.getTransactionReceipt,
      getBlock: chain.anvil.publicClient.getBlock,
      getLogs: chain.anvil.publicClient.getLogs,
    }
    expect(await onchainSettler({ publicClient: confused, walletClient: chain.anvil.walletClient(gasWallet()) }).check(payment)).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'Base gave an unexpected answer about the USDC authorization; nothing was charged.',
    })
  })

  it('turns an unreachable RPC into settlement_failed with a plain message, never a throw', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const transport = http(`http://127.0.0.1:${await closedPort()}`, { retryCount: 0 })
    const offline = onchainSettler({
      publicClient: createPublicClient({ chain: chain.anvil.chain, transport }),
      walletClient: createWalletClient({ chain: chain.anvil.chain, transport, account: gasWallet() }),
    })

    const check = await offline.check(payment)
    expect(check).toMatchInlineSnapshot(`
      {
        "message": "Base could not be reached to check the payment (RPC error); nothing was charged. Retry shortly with the same payment.",
        "ok": false,
        "reason": "settlement_failed",
      }
    `)
    const settle = await offline.settle(payment, 'swp_4')
    expect(settle).toMatchInlineSnapshot(`
      {
        "message": "Base could not be reached to settle the payment (RPC error); nothing was charged. Retry shortly with the same payment.",
        "ok": false,
        "reason": "settlement_failed",
      }
    `)
    // The authorization is still good on the real chain.
    expect(await settler.check(payment)).toEqual({ ok: true })
  })

  it('is ambiguous, with the hash, when the receipt cannot be read after the broadcast (and the money did move)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const balance = await chain.balanceOf(payer().address)
    const real = chain.anvil.publicClient
    const blindAfterBroadcast: OnchainSettlerPublicClient = {
      readContract: real.readContract,
      simulateContract: real.simulateContract,
      waitForTransactionReceipt: () => Promise.reject(new Error('socket hang up')),
      getTransactionReceipt: real.getTransactionReceipt,
      getBlock: real.getBlock,
      getLogs: real.getLogs,
    }
    const outcome = await onchainSettler({
      publicClient: blindAfterBroadcast,
      walletClient: chain.anvil.walletClient(gasWallet()),
    }).settle(payment, 'swp_5')

    if (outcome.ok) throw new Error('expected an ambiguous failure')
    expect(outcome).toMatchObject({ reason: 'settlement_failed', isAmbiguous: true })
    expect(outcome.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(outcome.message).toBe(
      `The settlement transaction ${outcome.transaction} was broadcast but not confirmed within 60 s; its outcome is being reconciled.`,
    )
    // Automine may still be mining it on a loaded machine: wait for it rather than read it once.
    const receipt = await real.waitForTransactionReceipt({ hash: outcome.transaction as Hash })
    expect(receipt.status).toBe('success')
    expect(await chain.balanceOf(payer().address)).toBe(balance - 20_000n)
  })

  it('is ambiguous, without a hash, when sending fails for a reason other than a revert', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    const droppedWallet: OnchainSettlerWalletClient = {
      account: gasWallet(),
      writeContract: () => Promise.reject(new Error('socket hang up')),
    }
    expect(await onchainSettler({ publicClient: chain.anvil.publicClient, walletClient: droppedWallet }).settle(payment, 'swp_d')).toEqual({
      ok: false,
      reason: 'settlement_failed',
      isAmbiguous: true,
      message: 'Sending the settlement transaction failed and it may have reached the network; its outcome is being reconciled.',
    })
  })

  it('is not ambiguous when the send itself reverts in gas estimation (a race lost after the simulation)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    expect((await settler.settle(payment, 'swp_r')).ok).toBe(true)
    const real = chain.anvil.publicClient
    const staleSimulation: OnchainSettlerPublicClient = {
      readContract: real.readContract,
      simulateContract: async () => ({}),
      waitForTransactionReceipt: real.waitForTransactionReceipt,
      getTransactionReceipt: real.getTransactionReceipt,
      getBlock: real.getBlock,
      getLogs: real.getLogs,
    }
    expect(
      await onchainSettler({ publicClient: staleSimulation, walletClient: chain.anvil.walletClient(gasWallet()) }).settle(
        payment,
        'swp_r2',
      ),
    ).toEqual({
      ok: false,
      reason: 'settlement_failed',
      message: 'USDC refused the transfer (FiatTokenV2: authorization is used or canceled); nothing was charged.',
    })
  })

  it('is ambiguous when the receipt does not arrive within receiptTimeoutMs (block not mined yet)', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    await chain.anvil.testClient.setAutomine(false)
    let outcome: Awaited<ReturnType<ExternalSettlement['settle']>>
    try {
      outcome = await onchainSettler({
        publicClient: chain.anvil.publicClient,
        walletClient: chain.anvil.walletClient(gasWallet()),
        receiptTimeoutMs: 500,
      }).settle(payment, 'swp_6')
    } finally {
      await chain.anvil.testClient.setAutomine(true)
    }
    if (outcome.ok) throw new Error('expected an ambiguous failure')
    expect(outcome).toMatchObject({ reason: 'settlement_failed', isAmbiguous: true })
    expect(outcome.message).toContain('not confirmed within 0.5 s')
    // The pending transaction is what to reconcile: once mined, it is the settlement.
    await chain.anvil.testClient.mine({ blocks: 1 })
    const receipt = await chain.anvil.publicClient.waitForTransactionReceipt({ hash: outcome.transaction as Hash })
    expect(receipt.status).toBe('success')
    expect(await settler.check(payment)).toMatchObject({ ok: false, reason: 'payment_already_used' })
  })

  // Review of issue 15: a reverted settlement published the signed authorization, which anyone may still submit
  // until it expires (a front-runner's submission is what makes ours revert): it is held and reconciled, not released.
  it('reports a mined but reverted transaction as ambiguous, with its hash: the payment is held, never released', async () => {
    const { payment } = await signedPayment({ payer: payer(), payTo: payTo() })
    expect((await settler.settle(payment, 'swp_7')).ok).toBe(true)
    const real = chain.anvil.publicClient
    const wallet = chain.anvil.walletClient(gasWallet())
    // Simulation and gas estimation skipped, so the replay reaches a block and reverts there.
    const blindPublic: OnchainSettlerPublicClient = {
      readContract: real.readContract,
      simulateContract: async () => ({}),
      waitForTransactionReceipt: real.waitForTransactionReceipt,
      getTransactionReceipt: real.getTransactionReceipt,
      getBlock: real.getBlock,
      getLogs: real.getLogs,
    }
    const fixedGasWallet: OnchainSettlerWalletClient = {
      account: wallet.account,
      writeContract: (call) => wallet.writeContract({ ...call, gas: 200_000n }),
    }
    const outcome = await onchainSettler({ publicClient: blindPublic, walletClient: fixedGasWallet }).settle(payment, 'swp_7b')

    if (outcome.ok) throw new Error('expected a failure')
    expect(outcome.isAmbiguous).toBe(true)
    expect(outcome.reason).toBe('settlement_failed')
    expect(outcome.message).toBe(
      `The settlement transaction ${outcome.transaction} reverted on chain, but the signed authorization it published stays valid until ${new Date(Number(payment.validBefore) * 1000).toISOString()} and may have paid, or still pay, through another transaction; the payment is held and reconciled.`,
    )
    const receipt = await real.getTransactionReceipt({ hash: outcome.transaction as Hash })
    expect(receipt.status).toBe('reverted')
  })
})
