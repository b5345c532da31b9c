// Batch disbursements on two anvil chains (BAS → POL): one executeBatch transaction pays same-chain transfers, a
// same-chain swap and bridge deposits on three bridges, each carrying exactly its recipient's amount; then the
// bridges' messages are relayed and the recipients on Polygon are paid.
import {
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  hexToBigInt,
  parseEventLogs,
  type TransactionReceipt,
  zeroAddress,
} from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi, swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { quoteAmounts, type StepEstimate } from '../../src/engine/index.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import { disburse } from '../../src/service/disburse.ts'
import { newDisbursementRef } from '../../src/service/disbursementRef.ts'
import { swapRefToBytes32 } from '../../src/service/swapRef.ts'
import {
  buildDisbursementTransaction,
  type BuildDisbursementTransactionReturnType,
  type DisbursementLeg,
} from '../../src/tx/buildDisbursementTransaction.ts'
import type { RouterOrder } from '../../src/tx/buildRouteTransaction.ts'
import { decimalToUnits, KEY_SECRET, testDeps } from '../http/testApp.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { type CatalogueOnChains, type ChainSetup, deployCatalogueOnChains } from './deployCatalogue.ts'
import { balanceOf, type PlannedSwap, planSwap, relay, routerOnWorld, setupOf, tokenOf } from './routeExecution.ts'
import {
  expectHops,
  expectRouterEmpty,
  latestTimestamp,
  mintTo,
  moveTimeTo,
  routerErrorOf,
  sendEstimated,
  sendRequest,
  venueHops,
} from './safetyHelpers.ts'
import { standInEvents } from './standIns.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
/** A leg into EURC on Base large enough to move the pool for the legs after it. */
const SHARED_POOL_LEG = '10000'
let world: CatalogueOnChains
let bas: ChainSetup
let pol: ChainSetup

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL'])
  bas = setupOf(world, 'BAS')
  pol = setupOf(world, 'POL')
}, 120_000)
afterAll(async () => world?.stop())

type Account = AnvilInstance['accounts'][number]
const usdc = () => tokenOf(world, 'BAS:USDC')
const units = (whole: bigint, decimals = 6): bigint => whole * 10n ** BigInt(decimals)
/** Recipients nobody else on these chains uses: their balances start at zero. */
const recipientAddress = (n: number): Address => getAddress(`0x${'d15b'.padEnd(36, '0')}${n.toString(16).padStart(4, '0')}`)
const pad = (address: Address): Hex => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`

/** One route leg, built exactly as the swap builder does, for a route chosen by id; `whole` input tokens of USDC on Base. */
const routeLeg = (
  toKey: string,
  whole: bigint,
  pick: (id: string) => boolean,
  recipient: Address,
  ref: Hex,
  sender: Account,
): Promise<PlannedSwap> => planSwap(world, 'BAS:USDC', toKey, whole, pick, { sender, recipient, ref })

const transferLeg = (amount: bigint, recipient: Address): Extract<DisbursementLeg, { kind: 'transfer' }> => ({
  kind: 'transfer',
  amount,
  fee: quoteAmounts(world.catalogue, usdc(), usdc(), amount, 0n).feeAmount,
  recipient,
})

/** Mints the batch's input to the sender and sends the approval the builder returned. */
async function fundAndApprove(sender: Account, batch: BuildDisbursementTransactionReturnType): Promise<void> {
  await mintTo(bas.instance, usdc().address, sender.address, batch.amountIn)
  const approval = await sendRequest(bas.instance, sender, batch.approvalTransactionRequest)
  expect(approval.status).toBe('success')
}

const bridgeStepOf = (plan: PlannedSwap): StepEstimate => plan.build.sized.steps[plan.priced.route.sourceSwaps.length]!

describe('executeBatch: one transaction, one order per recipient (builder level, chosen bridges)', () => {
  it('pays two transfers, a swap and deposits on Across, CCTP (with a swap on arrival) and Stargate, each with exactly its amount', async () => {
    const sender = bas.instance.accounts[2]!
    const ref = swapRefToBytes32(newDisbursementRef(Date.now()))
    const r = [0, 1, 2, 3, 4, 5].map(recipientAddress)
    const swap = await routeLeg('BAS:EURC', 200n, (id) => id === 'bas-univ3-eurc-usdc-500:USDC>EURC', r[2]!, ref, sender)
    const across = await routeLeg('POL:USDC', 300n, (id) => id === 'across-usdc:BAS>POL', r[3]!, ref, sender)
    const cctp = await routeLeg('POL:EURe', 400n, (id) => /^cctp-v2-fast:BAS>POL\|pol-univ3-eure-usdc-500/.test(id), r[4]!, ref, sender)
    const stargate = await routeLeg('POL:USDC', 500n, (id) => id === 'stargate-usdc-taxi:BAS>POL', r[5]!, ref, sender)
    const transfers = [transferLeg(units(100n), r[0]!), transferLeg(250_500_001n, r[1]!)]
    const legs: DisbursementLeg[] = [
      ...transfers,
      { kind: 'route', build: swap.build },
      { kind: 'route', build: across.build },
      { kind: 'route', build: cctp.build },
      { kind: 'route', build: stargate.build },
    ]
    const batch = buildDisbursementTransaction({
      catalogue: world.catalogue,
      routerOn: routerOnWorld(world),
      token: usdc(),
      sender: sender.address,
      ref,
      legs,
      nowSec: Number(await latestTimestamp(bas.instance)),
    })

    // The calldata is executeBatch with one order per leg; the approval and value are their sums.
    const decoded = decodeFunctionData({ abi: swapEaziRouterAbi, data: batch.transactionRequest.data })
    expect(decoded.functionName).toBe('executeBatch')
    const orders = decoded.args[0] as readonly RouterOrder[]
    expect(orders).toHaveLength(6)
    const amountsIn = [units(100n), 250_500_001n, units(200n), units(300n), units(400n), units(500n)]
    expect(orders.map((order) => order.amountIn)).toEqual(amountsIn)
    expect(batch.amountIn).toBe(amountsIn.reduce((a, b) => a + b))
    expect(batch.approval.amount).toBe(batch.amountIn)
    expect(batch.transactionRequest.to).toBe(bas.router.router)
    const stargateFee = stargate.build.order.calls.at(-1)!.value
    expect(stargateFee > 0n).toBe(true)
    expect(hexToBigInt(batch.transactionRequest.value)).toBe(stargateFee)
    // Transfers: no calls, the token itself out, and the recipient's floor is exactly the amount less the fee.
    for (const [k, leg] of transfers.entries()) {
      expect(orders[k]).toMatchObject({
        tokenIn: usdc().address,
        tokenOut: usdc().address,
        amountIn: leg.amount,
        fee: leg.fee,
        minOut: leg.amount - leg.fee,
        recipient: r[k],
        calls: [],
      })
      expect(leg.fee).toBe((leg.amount * 50n + 9_999n) / 10_000n)
    }

    const treasuryBefore = await balanceOf(bas.instance, usdc(), bas.treasury)
    await fundAndApprove(sender, batch)
    const nativeBefore = await bas.instance.publicClient.getBalance({ address: sender.address })
    const receipt = await sendRequest(bas.instance, sender, batch.transactionRequest)
    expect(receipt.status).toBe('success')
    expect(receipt.gasUsed < hexToBigInt(batch.transactionRequest.gas)).toBe(true)

    // One Swapped per order, in order, each with the disbursement's ref, its recipient, its input and its fee.
    const swapped = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped.map((event) => event.args)).toEqual(
      orders.map((order, k) => ({
        ref,
        sender: sender.address,
        recipient: r[k],
        tokenIn: usdc().address,
        amountIn: order.amountIn,
        fee: order.fee,
        tokenOut: order.tokenOut,
        amountOut: swapped[k]!.args.amountOut,
      })),
    )
    // Sender paid exactly the sum; the treasury got exactly the sum of the orders' fees; the allowance is spent.
    expect(await balanceOf(bas.instance, usdc(), sender.address)).toBe(0n)
    expect((await balanceOf(bas.instance, usdc(), bas.treasury)) - treasuryBefore).toBe(orders.reduce((sum, order) => sum + order.fee, 0n))
    expect(
      await bas.instance.publicClient.readContract({
        address: usdc().address,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [sender.address, bas.router.router],
      }),
    ).toBe(0n)
    // Only the Stargate leg's messaging fee (and gas) left the sender's native balance.
    const gasPaid = receipt.gasUsed * receipt.effectiveGasPrice
    expect(nativeBefore - (await bas.instance.publicClient.getBalance({ address: sender.address })) - gasPaid).toBe(stargateFee)

    // Transfers: exactly amount less fee arrived.
    for (const [k, leg] of transfers.entries()) {
      expect(await balanceOf(bas.instance, usdc(), r[k]!)).toBe(leg.amount - leg.fee)
      expect(swapped[k]!.args.amountOut).toBe(leg.amount - leg.fee)
    }
    // The swap: the venue was paid exactly the leg's routed input; the recipient got its output, at least the floor.
    expectHops(
      venueHops(receipt.logs, swap.priced.route.sourceSwaps),
      swap.priced.route.sourceSwaps,
      swap.build.sized.steps.map((step) => step.amountOut),
      bas.router.executor,
      swap.build.routedAmount,
    )
    const eurcReceived = await balanceOf(bas.instance, tokenOf(world, 'BAS:EURC'), r[2]!)
    expect(eurcReceived).toBe(swapped[2]!.args.amountOut)
    expect(eurcReceived >= swap.toAmountMin).toBe(true)

    // Across: the deposit is exactly the leg's routed input, for exactly the promised output, to its recipient.
    const [acrossDeposit] = standInEvents('SpokePoolStandIn', receipt.logs, { eventName: 'FundsDeposited' })
    expect(acrossDeposit?.args).toMatchObject({
      inputAmount: across.build.routedAmount,
      outputAmount: bridgeStepOf(across).amountOut,
      recipient: pad(r[3]!),
      depositor: pad(sender.address),
    })
    // CCTP with a hook: exactly the leg's routed input burnt, minted to our executor on Polygon, which alone may relay it.
    const [burn] = standInEvents('TokenMessengerV2StandIn', receipt.logs, { eventName: 'DepositForBurn' })
    expect(burn?.args).toMatchObject({
      amount: cctp.build.routedAmount,
      mintRecipient: pad(pol.router.executor),
      destinationCaller: pad(pol.router.executor),
    })
    expect(burn?.args.hookData).not.toBe('0x')
    // Stargate taxi: exactly the leg's routed input sent to its recipient, with its floor.
    const [sent] = standInEvents('StargateOftStandIn', receipt.logs, { eventName: 'SendRecorded' })
    const sendParam = sent?.args.sendParam as { to: Hex; amountLD: bigint; minAmountLD: bigint }
    expect(sendParam).toMatchObject({ to: pad(r[5]!), amountLD: stargate.build.routedAmount, minAmountLD: stargate.toAmountMin })
    expect(sent?.args.msgValue).toBe(stargateFee)
    // Each bridge leg's deposit plus its margin is exactly its order's input: nothing of another leg leaked in.
    for (const plan of [across, cctp, stargate]) expect(plan.build.routedAmount + plan.build.margin).toBe(plan.build.order.amountIn)
    await expectRouterEmpty(world, 'BAS')

    // Relay each deposit on Polygon as its bridge would: every recipient there is paid at least its floor.
    const polUsdc = tokenOf(world, 'POL:USDC')
    const [acrossFill, cctpDelivery, stargateDelivery] = [
      await relay(world, across, receipt),
      await relay(world, cctp, receipt),
      await relay(world, stargate, receipt),
    ]
    for (const delivery of [acrossFill, cctpDelivery, stargateDelivery]) expect(delivery?.status).toBe('success')
    expect(await balanceOf(pol.instance, polUsdc, r[3]!)).toBe(bridgeStepOf(across).amountOut)
    const eureReceived = await balanceOf(pol.instance, tokenOf(world, 'POL:EURe'), r[4]!)
    expect(eureReceived >= cctp.toAmountMin, `EURe ${eureReceived} < ${cctp.toAmountMin}`).toBe(true)
    const [executed] = parseEventLogs({ abi: swapEaziExecutorAbi, logs: cctpDelivery!.logs, eventName: 'DestinationExecuted' })
    expect(executed?.args).toMatchObject({ ref, recipient: r[4], amountOut: eureReceived })
    const stargateReceived = await balanceOf(pol.instance, polUsdc, r[5]!)
    expect(stargateReceived >= stargate.toAmountMin, `USDC ${stargateReceived} < ${stargate.toAmountMin}`).toBe(true)
    await expectRouterEmpty(world, 'POL')
  })
})

describe('executeBatch refuses, and the signer keeps the funds', () => {
  const sender = () => bas.instance.accounts[6]!
  const request = (orders: readonly RouterOrder[], value = 0n) => ({
    to: bas.router.router,
    data: encodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'executeBatch', args: [orders] }),
    value: `0x${value.toString(16)}` as Hex,
  })

  async function funded(amount: bigint): Promise<void> {
    await mintTo(bas.instance, usdc().address, sender().address, amount)
    await writeContractAndWait(bas.instance, sender(), {
      address: usdc().address,
      abi: erc20Abi,
      functionName: 'approve',
      args: [bas.router.router, amount],
    })
  }
  const held = () => balanceOf(bas.instance, usdc(), sender().address)
  const ref = swapRefToBytes32(newDisbursementRef(Date.now()))
  /** Ten minutes after the chain's latest block, as the builder sets it. */
  let deadline: bigint
  beforeEach(async () => {
    deadline = (await latestTimestamp(bas.instance)) + 600n
  })
  const transfer = (amount: bigint, recipient: Address): RouterOrder => {
    const fee = (amount * 50n + 9_999n) / 10_000n
    return {
      ref,
      tokenIn: usdc().address,
      amountIn: amount,
      fee,
      tokenOut: usdc().address,
      minOut: amount - fee,
      recipient,
      deadline,
      calls: [],
    }
  }

  it('a transfer whose floor is one unit above amount less fee reverts the whole batch', async () => {
    await funded(units(30n))
    const before = await held()
    const good = transfer(units(10n), recipientAddress(20))
    const bad = { ...transfer(units(20n), recipientAddress(21)), minOut: transfer(units(20n), recipientAddress(21)).minOut + 1n }
    await expect(sendEstimated(bas.instance, sender(), request([good, bad]))).rejects.toThrow(/SwapEazi: output below minimum/)
    expect(await held()).toBe(before)
    expect(await balanceOf(bas.instance, usdc(), recipientAddress(20))).toBe(0n)
    // The same orders with the right floors go through.
    const receipt = await sendEstimated(bas.instance, sender(), request([good, transfer(units(20n), recipientAddress(21))]))
    expect(receipt.status).toBe('success')
    expect(await balanceOf(bas.instance, usdc(), recipientAddress(20))).toBe(good.minOut)
    expect(await balanceOf(bas.instance, usdc(), recipientAddress(21))).toBe(transfer(units(20n), recipientAddress(21)).minOut)
    await expectRouterEmpty(world, 'BAS')
  })

  it('an approval one unit short of the sum: the last order is refused and nothing moves', async () => {
    const orders = [transfer(units(5n), recipientAddress(22)), transfer(units(7n), recipientAddress(23))]
    await funded(units(12n) - 1n)
    await mintTo(bas.instance, usdc().address, sender().address, 1n)
    const before = await held()
    await expect(sendEstimated(bas.instance, sender(), request(orders))).rejects.toThrow(
      /SwapEazi: approve the router for the input amount first/,
    )
    expect(await held()).toBe(before)
    expect(await balanceOf(bas.instance, usdc(), recipientAddress(22))).toBe(0n)
  })

  it('one order past its deadline reverts the whole batch with OrderExpired; in the block of its deadline the batch runs', async () => {
    await funded(units(30n))
    const before = await held()
    const now = await latestTimestamp(bas.instance)
    const good = transfer(units(10n), recipientAddress(40))
    const late = { ...transfer(units(20n), recipientAddress(41)), deadline: now + 5n }
    await moveTimeTo(world, late.deadline + 1n, 'BAS')
    // Mined as a wallet sends it (with a gas limit, no estimate): reverted, nothing moved.
    const reverted = await sendRequest(bas.instance, sender(), { ...request([good, late]), gas: '0x100000' })
    expect(reverted.status).toBe('reverted')
    expect(await routerErrorOf(bas.instance, sender(), request([good, late]), reverted.blockNumber)).toEqual({
      errorName: 'OrderExpired',
      args: [ref, late.deadline],
    })
    expect(await held()).toBe(before)
    for (const n of [40, 41]) expect(await balanceOf(bas.instance, usdc(), recipientAddress(n))).toBe(0n)

    // The same orders, the second now due in the very block that runs them: both recipients are paid.
    const due = { ...late, deadline: (await latestTimestamp(bas.instance)) + 5n }
    await moveTimeTo(world, due.deadline, 'BAS')
    const receipt = await sendRequest(bas.instance, sender(), { ...request([good, due]), gas: '0x100000' })
    expect(receipt.status).toBe('success')
    expect((await bas.instance.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp).toBe(due.deadline)
    expect(await balanceOf(bas.instance, usdc(), recipientAddress(40))).toBe(good.minOut)
    expect(await balanceOf(bas.instance, usdc(), recipientAddress(41))).toBe(due.minOut)
    expect(await held()).toBe(before - units(30n))
    await expectRouterEmpty(world, 'BAS')
  })

  it("value that does not match the orders' native fees, an order without calls paying another token, an empty batch", async () => {
    await funded(units(3n))
    const before = await held()
    const one = transfer(units(3n), recipientAddress(24))
    await expect(sendEstimated(bas.instance, sender(), request([one], 1n))).rejects.toThrow(
      /SwapEazi: value is above the orders' native fees/,
    )
    const stargate = await routeLeg('POL:USDC', 3n, (id) => id === 'stargate-usdc-taxi:BAS>POL', recipientAddress(25), ref, sender())
    const fee = stargate.build.order.calls.at(-1)!.value
    await expect(sendEstimated(bas.instance, sender(), request([stargate.build.order], fee - 1n))).rejects.toThrow(
      /SwapEazi: value is below the orders' native fees/,
    )
    const otherToken = { ...one, tokenOut: tokenOf(world, 'BAS:EURC').address }
    await expect(sendEstimated(bas.instance, sender(), request([otherToken]))).rejects.toThrow(/SwapEazi: order has no calls/)
    const bridgeOut = { ...one, tokenOut: zeroAddress }
    await expect(sendEstimated(bas.instance, sender(), request([bridgeOut]))).rejects.toThrow(/SwapEazi: order has no calls/)
    await expect(sendEstimated(bas.instance, sender(), request([]))).rejects.toThrow(/SwapEazi: batch has no orders/)
    expect(await held()).toBe(before)
    await expectRouterEmpty(world, 'BAS')
  })
})

describe('the disbursement the service builds executes as answered (service level)', () => {
  it("POST /api/v1/batch/disburse's transaction pays every recipient exactly its amount of input, on chain", async () => {
    const sender = bas.instance.accounts[7]!
    const block = await bas.instance.publicClient.getBlock()
    const deps = testDeps({
      catalogue: world.catalogue,
      files: world.files,
      routerOn: routerOnWorld(world),
      clock: () => Number(block.timestamp) * 1000,
      keySecret: KEY_SECRET,
    })
    const r = [30, 31, 32, 33, 34].map(recipientAddress)
    const result = DisbursementResult.parse(
      await disburse(deps, {
        keyId: 'key_00112233445566778899aabb',
        params: {
          fromChain: 'BAS',
          fromToken: 'usdc',
          fromAddress: sender.address,
          slippage: 0.005,
          recipients: [
            { address: r[0]!, toChain: 'BAS', toToken: 'USDC', amount: '12.345678' },
            { address: r[1]!, toChain: 'BAS', toToken: 'USDC', amount: '0.01' },
            { address: r[2]!, toChain: 'BAS', toToken: 'EURC', amount: '150' },
            { address: r[3]!, toChain: 'POL', toToken: 'USDC', amount: '250' },
            { address: r[4]!, toChain: 'POL', toToken: 'USDC', amount: '1000' },
          ],
        },
      }),
    )
    expect(result.items.map((item) => item.kind)).toEqual(['transfer', 'transfer', 'swap', 'bridge', 'bridge'])
    const amounts = result.items.map((item) => decimalToUnits(item.amount, 6))
    expect(decimalToUnits(result.totals.amount, 6)).toBe(amounts.reduce((a, b) => a + b))
    expect(BigInt(result.approval.amount)).toBe(decimalToUnits(result.totals.amount, 6))
    const orders = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
      .args[0] as readonly RouterOrder[]

    await mintTo(bas.instance, usdc().address, sender.address, BigInt(result.approval.amount))
    expect((await sendRequest(bas.instance, sender, result.approval.transactionRequest as never)).status).toBe('success')
    const receipt = await sendRequest(bas.instance, sender, result.transactionRequest as never)
    expect(receipt.status).toBe('success')
    expect(await balanceOf(bas.instance, usdc(), sender.address)).toBe(0n)

    const swapped = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped.map((event) => [getAddress(event.args.recipient), event.args.amountIn])).toEqual(
      r.map((address, k) => [address, amounts[k]]),
    )
    expect(new Set(swapped.map((event) => event.args.ref))).toEqual(new Set([swapRefToBytes32(result.disbursementRef)]))
    // Transfers: exactly the answered toAmount (amount less the fee, rounded up) arrived.
    for (const k of [0, 1]) {
      const item = result.items[k]!
      expect(decimalToUnits(item.fee, 6)).toBe((amounts[k]! * 50n + 9_999n) / 10_000n)
      expect(await balanceOf(bas.instance, usdc(), r[k]!)).toBe(decimalToUnits(item.toAmount, 6))
      expect(decimalToUnits(item.toAmount, 6)).toBe(amounts[k]! - decimalToUnits(item.fee, 6))
    }
    // The swap: at least its toAmountMin, and what the event says.
    const eurc = await balanceOf(bas.instance, tokenOf(world, 'BAS:EURC'), r[2]!)
    expect(eurc).toBe(swapped[2]!.args.amountOut)
    expect(eurc >= decimalToUnits(result.items[2]!.toAmountMin, 6)).toBe(true)
    // Bridges: each deposit is its order's input less its order's margin, to its own recipient.
    const deposits = bridgeDeposits(receipt)
    for (const k of [3, 4]) {
      const order = orders[k]!
      expect(deposits.get(getAddress(r[k]!)), `deposit for recipient ${k}`).toBe(order.amountIn - order.fee)
    }
    expect(await deps.store.disbursements.getDisbursement(result.disbursementRef)).toMatchObject({
      keyId: 'key_00112233445566778899aabb',
      totals: result.totals,
    })
    await expectRouterEmpty(world, 'BAS')
  })
})

describe('a batch whose swaps share a pool, on chain', () => {
  // The venue stand-ins pay a fixed rate (RateBook), so the chain cannot show the pool moving: what this shows is that
  // the later legs, priced on the pool the legs before them leave (test/http/disburseSharedPools.test.ts), are built
  // to route more of their amount, and that the batch so built runs and pays every recipient at least its toAmount.
  it('each later leg routes more of its amount to pay for the pool the legs before it leave, and the batch pays every recipient its toAmount', async () => {
    const sender = bas.instance.accounts[8]!
    const block = await bas.instance.publicClient.getBlock()
    const deps = testDeps({
      catalogue: world.catalogue,
      files: world.files,
      routerOn: routerOnWorld(world),
      clock: () => Number(block.timestamp) * 1000,
      keySecret: KEY_SECRET,
    })
    const r = [40, 41, 42].map(recipientAddress)
    const result = DisbursementResult.parse(
      await disburse(deps, {
        keyId: 'key_00112233445566778899aabb',
        params: {
          fromChain: 'BAS',
          fromToken: 'USDC',
          fromAddress: sender.address,
          slippage: 0.005,
          recipients: r.map((address) => ({ address, toChain: 'BAS', toToken: 'EURC', amount: SHARED_POOL_LEG })),
        },
      }),
    )
    const orders = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
      .args[0] as readonly RouterOrder[]
    // The pool moves enough between the legs that each later one keeps less margin to pay for it.
    expect(orders[1]!.fee).toBeLessThan(orders[0]!.fee)
    expect(orders[2]!.fee).toBeLessThan(orders[1]!.fee)

    await mintTo(bas.instance, usdc().address, sender.address, BigInt(result.approval.amount))
    expect((await sendRequest(bas.instance, sender, result.approval.transactionRequest as never)).status).toBe('success')
    const receipt = await sendRequest(bas.instance, sender, result.transactionRequest as never)
    expect(receipt.status).toBe('success')
    const swapped = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    for (const [k, address] of r.entries()) {
      const received = await balanceOf(bas.instance, tokenOf(world, 'BAS:EURC'), address)
      expect(received).toBe(swapped[k]!.args.amountOut)
      expect(received, `recipient ${k}`).toBeGreaterThanOrEqual(decimalToUnits(result.items[k]!.toAmount, 6))
    }
    await expectRouterEmpty(world, 'BAS')
  })
})

/** The amount of every bridge deposit in a receipt, by the recipient it names (whichever bridge BALANCED chose). */
function bridgeDeposits(receipt: TransactionReceipt): Map<Address, bigint> {
  const found = new Map<Address, bigint>()
  const add = (recipient: Hex, amount: bigint): void => {
    const address = getAddress(`0x${recipient.slice(26)}`)
    expect(found.has(address), `one deposit for ${address}`).toBe(false)
    found.set(address, amount)
  }
  for (const event of standInEvents('SpokePoolStandIn', receipt.logs, { eventName: 'FundsDeposited' }))
    add(event.args.recipient as Hex, event.args.inputAmount as bigint)
  for (const event of standInEvents('TokenMessengerV2StandIn', receipt.logs, { eventName: 'DepositForBurn' }))
    add(event.args.mintRecipient as Hex, event.args.amount as bigint)
  for (const event of standInEvents('StargateOftStandIn', receipt.logs, { eventName: 'SendRecorded' })) {
    const param = event.args.sendParam as { to: Hex; amountLD: bigint }
    add(param.to, param.amountLD)
  }
  return found
}
