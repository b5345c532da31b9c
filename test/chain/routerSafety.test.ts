// DESIGN item 10: what the router refuses, on one anvil chain (Ethereum's catalogue), each with its revert reason and
// with the signer's funds shown untouched.
import { type Address, encodeFunctionData, erc20Abi, getAddress, maxUint256, parseEventLogs, parseSignature, zeroAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi, swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import type { RouterOrder } from '../../src/tx/buildRouteTransaction.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { type CatalogueOnChains, type ChainSetup, deployCatalogueOnChains } from './deployCatalogue.ts'
import { balanceOf, type PlannedSwap, planSwap, setupOf, tokenOf } from './routeExecution.ts'
import { expectRouterEmpty, latestTimestamp, mintTo, moveTimeTo, routerErrorOf, sendEstimated, sendRequest } from './safetyHelpers.ts'
import { deployStandIn, PERMIT_TYPES, standInAbi } from './standIns.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const ROUTE = 'eth-curve-3pool:USDC>DAI'
let world: CatalogueOnChains
let eth: ChainSetup
let instance: AnvilInstance

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['ETH'])
  eth = setupOf(world, 'ETH')
  instance = eth.instance
}, 120_000)
afterAll(async () => world?.stop())

type Account = AnvilInstance['accounts'][number]
const routerAbi = swapEaziRouterAbi as never
const usdc = () => tokenOf(world, 'ETH:USDC')
const dai = () => tokenOf(world, 'ETH:DAI')
const pool = () => getAddress(world.catalogue.venues.find((venue) => venue.id === 'eth-curve-3pool')!.contract)

const plan = (): Promise<PlannedSwap> => planSwap(world, 'ETH:USDC', 'ETH:DAI', 1000n, (id) => id === ROUTE)

const allowance = (owner: Address): Promise<bigint> =>
  instance.publicClient.readContract({
    address: usdc().address,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [owner, eth.router.router],
  })

/** USDC and DAI of everyone a failed swap could have touched. */
async function holdings(swap: PlannedSwap, ...others: Address[]): Promise<Record<string, bigint>> {
  const held: Record<string, bigint> = {}
  const holders = {
    sender: swap.sender.address,
    recipient: swap.recipient,
    treasury: eth.treasury,
    router: eth.router.router,
    executor: eth.router.executor,
    pool: pool(),
    ...Object.fromEntries(others.map((address, k) => [`other${k}`, address])),
  }
  for (const [who, address] of Object.entries(holders))
    for (const token of [usdc(), dai()]) held[`${who} ${token.symbol}`] = await balanceOf(instance, token, address)
  return held
}

/** Gives the sender the input and approves the router for it, as the builder's approval transaction does. */
async function fundAndApprove(swap: PlannedSwap): Promise<void> {
  await mintTo(instance, usdc().address, swap.sender.address, swap.build.order.amountIn)
  const approval = await sendRequest(instance, swap.sender, swap.build.approvalTransactionRequest)
  expect(approval.status).toBe('success')
  expect(await allowance(swap.sender.address)).toBe(swap.build.order.amountIn)
}

/** Clears what fundAndApprove left after a refused swap, so later tests start from zero. */
async function withdraw(account: Account): Promise<void> {
  await writeContractAndWait(instance, account, {
    address: usdc().address,
    abi: erc20Abi,
    functionName: 'approve',
    args: [eth.router.router, 0n],
  })
  const left = await balanceOf(instance, usdc(), account.address)
  if (left > 0n)
    await writeContractAndWait(instance, account, {
      address: usdc().address,
      abi: standInAbi('TestToken'),
      functionName: 'burn',
      args: [account.address, left],
    })
}

const executeData = (order: RouterOrder) => encodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'execute', args: [order] })
const executeRequest = (order: RouterOrder) => ({ to: eth.router.router, data: executeData(order), value: '0x0' as const })

describe('the router refuses, and the signer keeps the funds', () => {
  it('a venue paying below the quote: the swap reverts, as a wallet sends it and with its reason', async () => {
    const swap = await plan()
    await fundAndApprove(swap)
    const before = await holdings(swap)
    const curve = standInAbi('CurvePoolStandIn')
    const [num, den] = (await instance.publicClient.readContract({
      address: pool(),
      abi: curve,
      functionName: 'rateOf',
      args: [usdc().address, dai().address],
    })) as [bigint, bigint]
    // 2% below the oracle rate: far below the hop's minimum (estimate less 0.5%) and the quote's toAmountMin.
    await writeContractAndWait(instance, instance.accounts[0]!, {
      address: pool(),
      abi: curve,
      functionName: 'setRate',
      args: [usdc().address, dai().address, num * 98n, den * 100n],
    })
    try {
      // The pool's own minimum (the hop's) is the first to refuse; the router's is shown in the next test.
      await expect(sendEstimated(instance, swap.sender, swap.build.transactionRequest)).rejects.toThrow(
        /Exchange resulted in fewer coins than expected/,
      )
      const mined = await sendRequest(instance, swap.sender, swap.build.transactionRequest)
      expect(mined.status).toBe('reverted')
      expect(await holdings(swap)).toEqual(before)
      expect(await allowance(swap.sender.address)).toBe(swap.build.order.amountIn)
    } finally {
      await writeContractAndWait(instance, instance.accounts[0]!, {
        address: pool(),
        abi: curve,
        functionName: 'setRate',
        args: [usdc().address, dai().address, num, den],
      })
    }
    // The same transaction goes through once the pool pays the rate again: the approval and funds were intact.
    const receipt = await sendRequest(instance, swap.sender, swap.build.transactionRequest)
    expect(receipt.status).toBe('success')
    expect((await balanceOf(instance, usdc(), eth.treasury)) - before['treasury USDC']!).toBe(swap.build.margin)
  })

  it('the router checks the order minimum itself: one unit above the actual output reverts, the output itself passes', async () => {
    const swap = await plan()
    await fundAndApprove(swap)
    const before = await holdings(swap)
    const routed = swap.build.routedAmount
    // What the pool stand-in pays for the routed input at its rate (exchange(i, j) with the edge's indices).
    const edge = swap.priced.route.sourceSwaps[0]!
    const actual = (await instance.publicClient.readContract({
      address: pool(),
      abi: standInAbi('CurvePoolStandIn'),
      functionName: 'get_dy',
      args: [BigInt(edge.i), BigInt(edge.j), routed],
    })) as bigint
    expect(actual >= swap.toAmountMin).toBe(true)

    const tooHigh: RouterOrder = { ...swap.build.order, minOut: actual + 1n }
    await expect(sendEstimated(instance, swap.sender, executeRequest(tooHigh))).rejects.toThrow(/SwapEazi: output below minimum/)
    expect(await holdings(swap)).toEqual(before)
    expect(await allowance(swap.sender.address)).toBe(swap.build.order.amountIn)

    const exact: RouterOrder = { ...swap.build.order, minOut: actual }
    const receipt = await sendEstimated(instance, swap.sender, executeRequest(exact))
    expect(receipt.status).toBe('success')
    const [swapped] = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped?.args.amountOut).toBe(actual)
    expect((await balanceOf(instance, dai(), swap.recipient)) - before['recipient DAI']!).toBe(actual)
    await expectRouterEmpty(world, 'ETH')
  })

  it('a venue the owner removed from the allow-list: "call target is not allowed"', async () => {
    const swap = await plan()
    await fundAndApprove(swap)
    const before = await holdings(swap)
    expect(
      await instance.publicClient.readContract({
        address: eth.router.router,
        abi: routerAbi,
        functionName: 'isAllowedTarget',
        args: [pool()],
      }),
    ).toBe(true)
    await writeContractAndWait(instance, eth.owner, {
      address: eth.router.router,
      abi: routerAbi,
      functionName: 'setTarget',
      args: [pool(), false],
    })
    try {
      expect(
        await instance.publicClient.readContract({
          address: eth.router.router,
          abi: routerAbi,
          functionName: 'isAllowedTarget',
          args: [pool()],
        }),
      ).toBe(false)
      await expect(sendEstimated(instance, swap.sender, swap.build.transactionRequest)).rejects.toThrow(
        /SwapEazi: call target is not allowed/,
      )
      expect(await holdings(swap)).toEqual(before)
    } finally {
      await writeContractAndWait(instance, eth.owner, {
        address: eth.router.router,
        abi: routerAbi,
        functionName: 'setTarget',
        args: [pool(), true],
      })
    }
    await withdraw(swap.sender)
  })

  it('a call pointed at a working pool nobody allow-listed: "call target is not allowed"', async () => {
    const swap = await plan()
    await fundAndApprove(swap)
    const before = await holdings(swap)
    // A 3pool stand-in with the same coins and a generous rate, funded: it would pay, but it is not on the list.
    const coins = world.catalogue.venues.find((venue) => venue.id === 'eth-curve-3pool')!.tokens.map((token) => token.address)
    const rogue = await deployStandIn(instance, instance.accounts[0]!, 'CurvePoolStandIn', [coins])
    await writeContractAndWait(instance, instance.accounts[0]!, {
      address: rogue,
      abi: standInAbi('CurvePoolStandIn'),
      functionName: 'setRate',
      args: [usdc().address, dai().address, 10n ** 12n * 2n, 1n],
    })
    await mintTo(instance, dai().address, rogue, 10n ** 24n)
    const order: RouterOrder = { ...swap.build.order, calls: swap.build.order.calls.map((call) => ({ ...call, target: rogue })) }
    await expect(sendEstimated(instance, swap.sender, executeRequest(order))).rejects.toThrow(/SwapEazi: call target is not allowed/)
    expect(await holdings(swap, rogue)).toEqual({ ...before, 'other0 USDC': 0n, 'other0 DAI': 10n ** 24n })
    await withdraw(swap.sender)
  })

  it('no approval (or one unit short): "approve the router for the input amount first"', async () => {
    const swap = await plan()
    await mintTo(instance, usdc().address, swap.sender.address, swap.build.order.amountIn)
    expect(await allowance(swap.sender.address)).toBe(0n)
    const before = await holdings(swap)
    await expect(sendEstimated(instance, swap.sender, swap.build.transactionRequest)).rejects.toThrow(
      /SwapEazi: approve the router for the input amount first/,
    )
    await writeContractAndWait(instance, swap.sender, {
      address: usdc().address,
      abi: erc20Abi,
      functionName: 'approve',
      args: [eth.router.router, swap.build.order.amountIn - 1n],
    })
    await expect(sendEstimated(instance, swap.sender, swap.build.transactionRequest)).rejects.toThrow(
      /SwapEazi: approve the router for the input amount first/,
    )
    expect(await holdings(swap)).toEqual(before)
    expect(await allowance(swap.sender.address)).toBe(swap.build.order.amountIn - 1n)
    await withdraw(swap.sender)
  })

  it("a second signer cannot spend the first signer's approval", async () => {
    const swap = await plan()
    const signerA = swap.sender
    const signerB = instance.accounts[4]!
    await fundAndApprove(swap)
    // B holds the input too, so only the allowance check (the order pulls from msg.sender = B) stops the call.
    await mintTo(instance, usdc().address, signerB.address, swap.build.order.amountIn)
    const before = await holdings(swap, signerB.address)
    const sameCalldata = {
      to: swap.build.transactionRequest.to,
      data: swap.build.transactionRequest.data,
      value: swap.build.transactionRequest.value,
    }
    await expect(sendEstimated(instance, signerB, sameCalldata)).rejects.toThrow(/SwapEazi: approve the router for the input amount first/)
    expect(await holdings(swap, signerB.address)).toEqual(before)
    expect(await allowance(signerA.address)).toBe(swap.build.order.amountIn)
    expect(await allowance(signerB.address)).toBe(0n)

    // A's own transaction still spends exactly A's input.
    const receipt = await sendRequest(instance, signerA, swap.build.transactionRequest)
    expect(receipt.status).toBe('success')
    expect(before['sender USDC']! - (await balanceOf(instance, usdc(), signerA.address))).toBe(swap.build.order.amountIn)
    expect(await balanceOf(instance, usdc(), signerB.address)).toBe(before['other0 USDC'])
    await withdraw(signerB)
  })
})

describe("the owner controls the allow-list and the treasury, never users' tokens", () => {
  it("an allow-listed token cannot be made to move a victim's approved tokens", async () => {
    const owner = eth.owner
    const victim = instance.accounts[6]!
    const token = usdc().address
    const stake = 5_000n * 10n ** 6n
    await mintTo(instance, token, victim.address, stake)
    await writeContractAndWait(instance, victim, {
      address: token,
      abi: erc20Abi,
      functionName: 'approve',
      args: [eth.router.router, maxUint256],
    })
    // The owner funds a tiny order of its own and allow-lists the token contract itself as a call target.
    await mintTo(instance, token, owner.address, 10n ** 6n)
    await writeContractAndWait(instance, owner, {
      address: token,
      abi: erc20Abi,
      functionName: 'approve',
      args: [eth.router.router, 10n ** 6n],
    })
    await writeContractAndWait(instance, owner, {
      address: eth.router.router,
      abi: routerAbi,
      functionName: 'setTarget',
      args: [token, true],
    })
    try {
      const steal = encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [victim.address, owner.address, stake] })
      const base = {
        ref: `0x${'00'.repeat(32)}` as const,
        tokenIn: token,
        amountIn: 10n ** 6n,
        fee: 0n,
        tokenOut: zeroAddress,
        minOut: 0n,
        recipient: owner.address,
        deadline: (await latestTimestamp(instance)) + 600n,
      }
      for (const spent of [zeroAddress, token]) {
        const order: RouterOrder = { ...base, calls: [{ target: token, token: spent, amountOffset: maxUint256, value: 0n, data: steal }] }
        // The executor, which makes the call, holds no allowance of the victim's: only the router does.
        await expect(sendEstimated(instance, owner, executeRequest(order))).rejects.toThrow(/ERC20: insufficient allowance/)
      }
      expect(await balanceOf(instance, token, victim.address)).toBe(stake)
      expect(await allowance(victim.address)).toBe(maxUint256)
      expect(await balanceOf(instance, token, owner.address)).toBe(10n ** 6n)
      await expectRouterEmpty(world, 'ETH')
    } finally {
      await writeContractAndWait(instance, owner, {
        address: eth.router.router,
        abi: routerAbi,
        functionName: 'setTarget',
        args: [token, false],
      })
      await writeContractAndWait(instance, victim, {
        address: token,
        abi: erc20Abi,
        functionName: 'approve',
        args: [eth.router.router, 0n],
      })
      await withdraw(owner)
    }
  })

  it('the router and executor cannot be targets, and only the router drives the executor', async () => {
    for (const target of [eth.router.router, eth.router.executor])
      await expect(
        writeContractAndWait(instance, eth.owner, {
          address: eth.router.router,
          abi: routerAbi,
          functionName: 'setTarget',
          args: [target, true],
        }),
      ).rejects.toThrow(/SwapEazi: cannot target itself/)
    const stranger = instance.accounts[7]!
    await expect(
      writeContractAndWait(instance, stranger, {
        address: eth.router.router,
        abi: routerAbi,
        functionName: 'setTarget',
        args: [stranger.address, true],
      }),
    ).rejects.toThrow(/SwapEazi: only the owner/)
    await expect(
      writeContractAndWait(instance, stranger, {
        address: eth.router.executor,
        abi: swapEaziExecutorAbi as never,
        functionName: 'setTarget',
        args: [stranger.address, true],
      }),
    ).rejects.toThrow(/SwapEazi: only the router/)
    await expect(
      writeContractAndWait(instance, stranger, {
        address: eth.router.executor,
        abi: swapEaziExecutorAbi as never,
        functionName: 'run',
        args: [[], usdc().address, zeroAddress, 0n, stranger.address, stranger.address],
      }),
    ).rejects.toThrow(/SwapEazi: only the router/)
  })

  it('only the owner can set targets, the treasury or the owner', async () => {
    const stranger = instance.accounts[7]!
    const read = (functionName: 'owner' | 'treasury') =>
      instance.publicClient.readContract({ address: eth.router.router, abi: routerAbi, functionName, args: [] }) as Promise<Address>
    const calls: [string, readonly unknown[]][] = [
      ['setTarget', [stranger.address, true]],
      ['setTreasury', [stranger.address]],
      ['transferOwnership', [stranger.address]],
    ]
    for (const [functionName, args] of calls)
      await expect(
        writeContractAndWait(instance, stranger, { address: eth.router.router, abi: routerAbi, functionName, args }),
      ).rejects.toThrow(/SwapEazi: only the owner/)
    expect(await read('owner')).toBe(eth.owner.address)
    expect(await read('treasury')).toBe(eth.treasury)
    expect(
      await instance.publicClient.readContract({
        address: eth.router.router,
        abi: routerAbi,
        functionName: 'isAllowedTarget',
        args: [stranger.address],
      }),
    ).toBe(false)

    // The owner can move the treasury (and the margin follows it), which is all it controls.
    const newTreasury = instance.accounts[8]!.address
    await writeContractAndWait(instance, eth.owner, {
      address: eth.router.router,
      abi: routerAbi,
      functionName: 'setTreasury',
      args: [newTreasury],
    })
    try {
      expect(await read('treasury')).toBe(newTreasury)
      const swap = await plan()
      await fundAndApprove(swap)
      const oldBefore = await balanceOf(instance, usdc(), eth.treasury)
      const newBefore = await balanceOf(instance, usdc(), newTreasury)
      expect((await sendRequest(instance, swap.sender, swap.build.transactionRequest)).status).toBe('success')
      expect((await balanceOf(instance, usdc(), newTreasury)) - newBefore).toBe(swap.build.margin)
      expect(await balanceOf(instance, usdc(), eth.treasury)).toBe(oldBefore)
    } finally {
      await writeContractAndWait(instance, eth.owner, {
        address: eth.router.router,
        abi: routerAbi,
        functionName: 'setTreasury',
        args: [eth.treasury],
      })
    }
  })
})

describe('every order carries a deadline (issue 14 item 3)', () => {
  it('the transaction mined one second after its deadline reverts with OrderExpired, and nothing moves', async () => {
    const swap = await plan()
    const { deadline, ref } = swap.build.order
    // Ten minutes after the build: the window the user has to sign and send.
    expect(deadline).toBe((await latestTimestamp(instance)) + 600n)
    await fundAndApprove(swap)
    const before = await holdings(swap)
    await moveTimeTo(world, deadline + 1n, 'ETH')
    // Sent as the wallet sends it, with the gas limit it carries: mined, and reverted.
    const late = await sendRequest(instance, swap.sender, swap.build.transactionRequest)
    expect(late.status).toBe('reverted')
    expect((await instance.publicClient.getBlock({ blockNumber: late.blockNumber })).timestamp).toBe(deadline + 1n)
    expect(await routerErrorOf(instance, swap.sender, swap.build.transactionRequest, late.blockNumber)).toEqual({
      errorName: 'OrderExpired',
      args: [ref, deadline],
    })
    expect(await holdings(swap)).toEqual(before)
    expect(await allowance(swap.sender.address)).toBe(swap.build.order.amountIn)
    expect(parseEventLogs({ abi: swapEaziRouterAbi, logs: late.logs })).toEqual([])
    await withdraw(swap.sender)
  })

  it('the transaction mined in the block of its deadline runs, and pays the treasury the margin', async () => {
    const swap = await plan()
    await fundAndApprove(swap)
    const before = await holdings(swap)
    await moveTimeTo(world, swap.build.order.deadline, 'ETH')
    const receipt = await sendRequest(instance, swap.sender, swap.build.transactionRequest)
    expect(receipt.status).toBe('success')
    expect((await instance.publicClient.getBlock({ blockNumber: receipt.blockNumber })).timestamp).toBe(swap.build.order.deadline)
    const [swapped] = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped?.args.ref).toBe(swap.build.order.ref)
    expect((await balanceOf(instance, usdc(), eth.treasury)) - before['treasury USDC']!).toBe(swap.build.margin)
    expect((await balanceOf(instance, dai(), swap.recipient)) - before['recipient DAI']! >= swap.toAmountMin).toBe(true)
    await expectRouterEmpty(world, 'ETH')
  })

  it('an order whose deadline is already past, or that carries none (0), is refused before anything is pulled', async () => {
    const swap = await plan()
    await fundAndApprove(swap)
    const before = await holdings(swap)
    for (const deadline of [0n, (await latestTimestamp(instance)) - 1n]) {
      const stale: RouterOrder = { ...swap.build.order, deadline }
      await expect(sendEstimated(instance, swap.sender, executeRequest(stale))).rejects.toThrow(/reverted/)
      expect(await routerErrorOf(instance, swap.sender, executeRequest(stale))).toEqual({
        errorName: 'OrderExpired',
        args: [stale.ref, deadline],
      })
    }
    expect(await holdings(swap)).toEqual(before)
    await withdraw(swap.sender)
  })
})

describe('EIP-2612 permit instead of an approval transaction', () => {
  async function signPermit(signer: Account, owner: Address, value: bigint) {
    const token = usdc().address
    const nonce = (await instance.publicClient.readContract({
      address: token,
      abi: standInAbi('TestToken'),
      functionName: 'nonces',
      args: [owner],
    })) as bigint
    const deadline = (await instance.publicClient.getBlock()).timestamp + 600n
    const signature = await signer.signTypedData({
      // deployCatalogue passes the symbol as the token's name; version '2' as USDC.
      domain: { name: usdc().symbol, version: '2', chainId: instance.chainId, verifyingContract: token },
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message: { owner, spender: eth.router.router, value, nonce, deadline },
    })
    const { r, s, v, yParity } = parseSignature(signature)
    return { nonce, permit: { value, deadline, v: Number(v ?? 27n + BigInt(yParity)), r, s } }
  }

  const permitRequest = (order: RouterOrder, permit: Awaited<ReturnType<typeof signPermit>>['permit']) => ({
    to: eth.router.router,
    data: encodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'executeWithPermit', args: [order, permit] }),
    value: '0x0' as const,
  })

  it('executeWithPermit swaps without a prior approval and pays the treasury the margin', async () => {
    const swap = await plan()
    await mintTo(instance, usdc().address, swap.sender.address, swap.build.order.amountIn)
    expect(await allowance(swap.sender.address)).toBe(0n)
    const before = await holdings(swap)
    const { nonce, permit } = await signPermit(swap.sender, swap.sender.address, swap.build.order.amountIn)

    const receipt = await sendEstimated(instance, swap.sender, permitRequest(swap.build.order, permit))
    expect(receipt.status).toBe('success')
    expect((await balanceOf(instance, usdc(), eth.treasury)) - before['treasury USDC']!).toBe(swap.build.margin)
    expect(before['sender USDC']! - (await balanceOf(instance, usdc(), swap.sender.address))).toBe(swap.build.order.amountIn)
    const [swapped] = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped?.args).toMatchObject({
      ref: swap.build.order.ref,
      sender: swap.sender.address,
      recipient: swap.recipient,
      fee: swap.build.margin,
    })
    const received = (await balanceOf(instance, dai(), swap.recipient)) - before['recipient DAI']!
    expect(received).toBe(swapped?.args.amountOut)
    expect(received >= swap.toAmountMin).toBe(true)
    // The permit granted exactly amountIn, all of it spent; its nonce is used.
    expect(await allowance(swap.sender.address)).toBe(0n)
    expect(
      await instance.publicClient.readContract({
        address: usdc().address,
        abi: standInAbi('TestToken'),
        functionName: 'nonces',
        args: [swap.sender.address],
      }),
    ).toBe(nonce + 1n)
    await expectRouterEmpty(world, 'ETH')
  })

  it('executeWithPermit after the order deadline reverts with OrderExpired, and the permit stays unused', async () => {
    const swap = await plan()
    await mintTo(instance, usdc().address, swap.sender.address, swap.build.order.amountIn)
    const before = await holdings(swap)
    const { nonce, permit } = await signPermit(swap.sender, swap.sender.address, swap.build.order.amountIn)
    await moveTimeTo(world, swap.build.order.deadline + 1n, 'ETH')
    const receipt = await sendRequest(instance, swap.sender, {
      ...permitRequest(swap.build.order, permit),
      gas: swap.build.transactionRequest.gas,
    })
    expect(receipt.status).toBe('reverted')
    expect(await routerErrorOf(instance, swap.sender, permitRequest(swap.build.order, permit), receipt.blockNumber)).toEqual({
      errorName: 'OrderExpired',
      args: [swap.build.order.ref, swap.build.order.deadline],
    })
    expect(await holdings(swap)).toEqual(before)
    expect(await allowance(swap.sender.address)).toBe(0n)
    expect(
      await instance.publicClient.readContract({
        address: usdc().address,
        abi: standInAbi('TestToken'),
        functionName: 'nonces',
        args: [swap.sender.address],
      }),
    ).toBe(nonce)
    await withdraw(swap.sender)
  })

  it('a permit signed by someone else is ignored, and the allowance check refuses the swap', async () => {
    const swap = await plan()
    await mintTo(instance, usdc().address, swap.sender.address, swap.build.order.amountIn)
    const before = await holdings(swap)
    const { permit } = await signPermit(instance.accounts[7]!, swap.sender.address, swap.build.order.amountIn)
    await expect(sendEstimated(instance, swap.sender, permitRequest(swap.build.order, permit))).rejects.toThrow(
      /SwapEazi: approve the router for the input amount first/,
    )
    expect(await holdings(swap)).toEqual(before)
    expect(await allowance(swap.sender.address)).toBe(0n)
    await withdraw(swap.sender)
  })
})
