import { type Address, decodeFunctionData, encodeFunctionData, erc20Abi, type Hex, parseEventLogs, stringToHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi } from '../../src/contracts/routerArtifact.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from './deployCatalogue.ts'
import { balanceOf, executeSwap, planSwap, relay, setupOf, tokenOf } from './routeExecution.ts'
import { standInAbi, standInEvents } from './standIns.ts'
import { v3SwapRouterAbi } from '../../src/tx/abis.ts'
import { writeContractAndWait } from './anvil.ts'
import { latestTimestamp, moveTimeTo } from './safetyHelpers.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
let world: CatalogueOnChains

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL'])
}, 120_000)
afterAll(async () => world?.stop())

/** Every token either router or executor could hold on a chain: none may be left there after a transaction. */
async function expectRouterEmpty(chain: 'BAS' | 'POL'): Promise<void> {
  const setup = setupOf(world, chain)
  for (const token of world.catalogue.tokens.values()) {
    if (token.chain !== chain) continue
    for (const holder of [setup.router.router, setup.router.executor])
      expect(await balanceOf(setup.instance, token, holder), `${token.key} held by ${holder}`).toBe(0n)
  }
}

type Case = { name: string; from: string; to: string; pick: (id: string) => boolean; destinationSwap: boolean }

const cases: Case[] = [
  { name: 'Across, bridge only', from: 'BAS:USDC', to: 'POL:USDC', pick: (id) => id === 'across-usdc:BAS>POL', destinationSwap: false },
  {
    name: 'CCTP v2 fast, bridge only',
    from: 'BAS:USDC',
    to: 'POL:USDC',
    pick: (id) => id === 'cctp-v2-fast:BAS>POL',
    destinationSwap: false,
  },
  {
    name: 'CCTP v2 standard, bridge only',
    from: 'BAS:USDC',
    to: 'POL:USDC',
    pick: (id) => id === 'cctp-v2-standard:BAS>POL',
    destinationSwap: false,
  },
  {
    name: 'Stargate taxi, bridge only',
    from: 'BAS:USDC',
    to: 'POL:USDC',
    pick: (id) => id === 'stargate-usdc-taxi:BAS>POL',
    destinationSwap: false,
  },
  {
    name: 'Stargate bus, bridge only',
    from: 'BAS:USDC',
    to: 'POL:USDC',
    pick: (id) => id === 'stargate-usdc-bus:BAS>POL',
    destinationSwap: false,
  },
  {
    name: 'Uniswap v3 swap, then CCTP',
    from: 'BAS:EURC',
    to: 'POL:USDC',
    pick: (id) => /^bas-univ3-eurc-usdc-500:EURC>USDC\|cctp-v2-fast:BAS>POL$/.test(id),
    destinationSwap: false,
  },
  {
    name: 'Across, then a Uniswap v3 swap on arrival (message)',
    from: 'BAS:USDC',
    to: 'POL:EURe',
    pick: (id) => /^across-usdc:BAS>POL\|pol-univ3-eure-usdc-500/.test(id),
    destinationSwap: true,
  },
  {
    name: 'CCTP v2 fast with a hook, then a swap on arrival',
    from: 'BAS:USDC',
    to: 'POL:EURe',
    pick: (id) => /^cctp-v2-fast:BAS>POL\|pol-univ3-eure-usdc-500/.test(id),
    destinationSwap: true,
  },
  {
    name: 'Stargate taxi with compose, then a swap on arrival',
    from: 'BAS:USDC',
    to: 'POL:EURe',
    pick: (id) => /^stargate-usdc-taxi:BAS>POL\|pol-univ3-eure-usdc-500/.test(id),
    destinationSwap: true,
  },
  {
    name: 'swap, bridge, swap',
    from: 'BAS:EURC',
    to: 'POL:EURe',
    pick: (id) => /^bas-univ3-eurc-usdc-500:EURC>USDC\|across-usdc:BAS>POL\|pol-univ3-eure-usdc-500/.test(id),
    destinationSwap: true,
  },
]

describe('cross-chain routes on two anvil chains (BAS → POL), relayed as each bridge would', () => {
  it.each(cases)('$name', async ({ from, to, pick, destinationSwap }) => {
    const plan = await planSwap(world, from, to, 1000n, pick)
    const source = setupOf(world, 'BAS')
    const destination = setupOf(world, 'POL')
    const toToken = tokenOf(world, to)
    const treasuryBefore = await balanceOf(source.instance, plan.priced.route.from, source.treasury)
    const recipientBefore = await balanceOf(destination.instance, toToken, plan.recipient)

    const receipt = await executeSwap(world, plan)
    expect(receipt.status).toBe('success')
    // The treasury got exactly the margin the builder computed, and it is positive.
    expect(plan.build.margin > 0n).toBe(true)
    expect((await balanceOf(source.instance, plan.priced.route.from, source.treasury)) - treasuryBefore).toBe(plan.build.margin)
    await expectRouterEmpty('BAS')

    const lane = plan.priced.route.bridge!
    const bridgeStep = plan.build.sized.steps[plan.priced.route.sourceSwaps.length]!
    const recipientOnArrival = destinationSwap ? destination.router.executor : plan.recipient
    const pad = (address: Address) => `0x${address.slice(2).toLowerCase().padStart(64, '0')}`
    if (lane.bridge.protocol === 'cctp-v2') {
      const [event] = standInEvents('TokenMessengerV2StandIn', receipt.logs, { eventName: 'DepositForBurn' })
      expect(event?.args).toMatchObject({
        destinationDomain: 7,
        mintRecipient: pad(recipientOnArrival),
      })
      // Our relayer's destination gas is collected with the fee (it is in the margin the treasury got, in the input
      // token: after a source swap, the input the swap turns into it), not left to Circle: the burn is that much
      // smaller, and maxFee, the burn less what the quote delivers, leaves it out (at most Circle's own fee).
      const relayGas = plan.build.sized.relayGasAmount
      expect(relayGas > 0n).toBe(true)
      expect(plan.build.relayFee > 0n).toBe(true)
      if (plan.priced.route.sourceSwaps.length === 0) expect(plan.build.relayFee).toBe(relayGas)
      const { amount, maxFee } = (event?.args ?? {}) as { amount: bigint; maxFee: bigint }
      // The burn less maxFee is what the quote delivers (more where the swap paid more than priced).
      if (plan.priced.route.sourceSwaps.length === 0) expect(amount - maxFee).toBe(bridgeStep.amountOut)
      else expect(amount - maxFee >= bridgeStep.amountOut).toBe(true)
      expect(maxFee >= 0n && maxFee <= bridgeStep.amountIn - relayGas - bridgeStep.amountOut).toBe(true)
      if (plan.priced.route.sourceSwaps.length === 0) expect(event?.args.amount).toBe(plan.build.routedAmount)
      expect(event?.args.destinationCaller).toBe(destinationSwap ? pad(destination.router.executor) : `0x${'0'.repeat(64)}`)
    } else if (lane.bridge.protocol === 'across') {
      const [event] = standInEvents('SpokePoolStandIn', receipt.logs, { eventName: 'FundsDeposited' })
      expect(event?.args).toMatchObject({
        destinationChainId: 137n,
        recipient: pad(recipientOnArrival),
        depositor: pad(plan.sender.address),
      })
      if (plan.priced.route.sourceSwaps.length === 0) {
        expect(event?.args.inputAmount).toBe(plan.build.routedAmount)
        expect(event?.args.outputAmount).toBe(bridgeStep.amountOut)
      }
    } else {
      const [event] = standInEvents('StargateOftStandIn', receipt.logs, { eventName: 'SendRecorded' })
      const param = event?.args.sendParam as { dstEid: number; to: string; amountLD: bigint; minAmountLD: bigint; oftCmd: string }
      expect(param.dstEid).toBe(30109)
      expect(param.to).toBe(pad(recipientOnArrival))
      expect(param.amountLD).toBe(plan.build.routedAmount)
      expect(param.minAmountLD).toBe(destinationSwap ? (bridgeStep.amountOut * 995n) / 1000n : plan.toAmountMin)
      expect(param.oftCmd).toBe(lane.bridge.mode === 'bus' ? '0x00' : '0x')
    }

    const delivery = await relay(world, plan, receipt)
    expect(delivery.status).toBe('success')
    const received = (await balanceOf(destination.instance, toToken, plan.recipient)) - recipientBefore
    expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)
    if (destinationSwap) {
      const executed = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
      expect(executed).toHaveLength(1)
      expect(executed[0]?.args.amountOut).toBe(received)
    }
    await expectRouterEmpty('POL')
  })

  it('falls back to the bridged token when the swap on arrival cannot meet toAmountMin', async () => {
    const plan = await planSwap(world, 'BAS:USDC', 'POL:EURe', 1000n, (id) => /^across-usdc:BAS>POL\|pol-univ3-eure-usdc-500/.test(id))
    const destination = setupOf(world, 'POL')
    const venue = world.catalogue.venues.find((entry) => entry.id === 'pol-univ3-eure-usdc-500')!
    const usdc = tokenOf(world, 'POL:USDC')
    const eure = tokenOf(world, 'POL:EURe')
    // The pool now pays half the oracle rate: far below the minimum.
    const [num, den] = (await destination.instance.publicClient.readContract({
      address: venue.contract,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'rateOf',
      args: [usdc.address, eure.address],
    })) as [bigint, bigint]
    await writeContractAndWait(destination.instance, destination.instance.accounts[0]!, {
      address: venue.contract,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'setRate',
      args: [usdc.address, eure.address, num, den * 2n],
    })
    try {
      const usdcBefore = await balanceOf(destination.instance, usdc, plan.recipient)
      const eureBefore = await balanceOf(destination.instance, eure, plan.recipient)
      const receipt = await executeSwap(world, plan)
      const delivery = await relay(world, plan, receipt)
      const fallback = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationFallback' })
      expect(fallback).toHaveLength(1)
      const bridged = plan.build.sized.steps[0]!.amountOut
      expect(fallback[0]?.args).toMatchObject({ recipient: plan.recipient, token: usdc.address, amount: bridged })
      expect((await balanceOf(destination.instance, usdc, plan.recipient)) - usdcBefore).toBe(bridged)
      expect(await balanceOf(destination.instance, eure, plan.recipient)).toBe(eureBefore)
      await expectRouterEmpty('POL')
    } finally {
      await writeContractAndWait(destination.instance, destination.instance.accounts[0]!, {
        address: venue.contract,
        abi: standInAbi('UniswapV3RouterStandIn'),
        functionName: 'setRate',
        args: [usdc.address, eure.address, num, den],
      })
    }
  })
})

describe('a destination order carries its own deadline (issue 14 item 3)', () => {
  const toEure = (bridge: string) => (id: string) => id.startsWith(`${bridge}:BAS>POL|pol-univ3-eure-usdc-500`)

  it('is the source deadline plus the p95 and the margin: a delivery at the p95 is well inside it', async () => {
    const plan = await planSwap(world, 'BAS:USDC', 'POL:EURe', 1000n, toEure('cctp-v2-standard'))
    const now = await latestTimestamp(setupOf(world, 'BAS').instance)
    const p95 = BigInt(plan.build.sized.durationP95Sec)
    expect(plan.build.order.deadline).toBe(now + 600n)
    expect(plan.build.destinationOrder!.deadline).toBe(now + 600n + p95 + (p95 > 1800n ? p95 : 1800n))
  })

  it.each([
    ['Across (message)', 'across-usdc'],
    ['CCTP v2 fast (hook)', 'cctp-v2-fast'],
    ['Stargate taxi (compose)', 'stargate-usdc-taxi'],
  ])('%s delivered one second after it: no swap runs, and the recipient gets the bridged USDC', async (_name, bridge) => {
    const plan = await planSwap(world, 'BAS:USDC', 'POL:EURe', 1000n, toEure(bridge))
    const order = plan.build.destinationOrder!
    const destination = setupOf(world, 'POL')
    const usdc = tokenOf(world, 'POL:USDC')
    const eure = tokenOf(world, 'POL:EURe')
    const usdcBefore = await balanceOf(destination.instance, usdc, plan.recipient)
    const eureBefore = await balanceOf(destination.instance, eure, plan.recipient)
    const receipt = await executeSwap(world, plan)
    expect(receipt.status).toBe('success')

    await moveTimeTo(world, order.deadline + 1n)
    const delivery = await relay(world, plan, receipt)
    expect(delivery.status).toBe('success')
    expect((await destination.instance.publicClient.getBlock({ blockNumber: delivery.blockNumber })).timestamp > order.deadline).toBe(true)
    expect(parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })).toEqual([])
    expect(standInEvents('UniswapV3RouterStandIn', delivery.logs, { eventName: 'ExactInputSingleCalled' })).toEqual([])
    const fallback = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationFallback' })
    expect(fallback).toHaveLength(1)
    expect(fallback[0]?.args).toMatchObject({
      ref: order.ref,
      recipient: plan.recipient,
      token: usdc.address,
      reason: stringToHex('SwapEazi: destination order expired'),
    })
    // Everything the bridge delivered (at least its estimate) went on to the recipient.
    const bridged = fallback[0]!.args.amount
    expect(bridged >= plan.build.sized.steps[0]!.amountOut).toBe(true)
    expect((await balanceOf(destination.instance, usdc, plan.recipient)) - usdcBefore).toBe(bridged)
    expect(await balanceOf(destination.instance, eure, plan.recipient)).toBe(eureBefore)
    await expectRouterEmpty('POL')
  })

  it('delivered in the block of its deadline, the swap on arrival still runs', async () => {
    const plan = await planSwap(world, 'BAS:USDC', 'POL:EURe', 1000n, toEure('cctp-v2-fast'))
    const order = plan.build.destinationOrder!
    const destination = setupOf(world, 'POL')
    const eure = tokenOf(world, 'POL:EURe')
    const eureBefore = await balanceOf(destination.instance, eure, plan.recipient)
    const receipt = await executeSwap(world, plan)
    // relayCctp is one transaction: the next block on Polygon, at exactly the deadline.
    await moveTimeTo(world, order.deadline, 'POL')
    const delivery = await relay(world, plan, receipt)
    expect((await destination.instance.publicClient.getBlock({ blockNumber: delivery.blockNumber })).timestamp).toBe(order.deadline)
    const [executed] = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
    const received = (await balanceOf(destination.instance, eure, plan.recipient)) - eureBefore
    expect(executed?.args).toMatchObject({ ref: order.ref, recipient: plan.recipient, amountOut: received })
    expect(received >= plan.toAmountMin).toBe(true)
    await expectRouterEmpty('POL')
  })
})

describe('router gas overhead (DESIGN 3; manifest/pricing.json routerOverheadGasUnits)', () => {
  /** The same exactInputSingle with the output sent to `recipient` instead of our executor. */
  function payDirectCaller(data: Hex, recipient: Address): Hex {
    const { args } = decodeFunctionData({ abi: v3SwapRouterAbi, data })
    return encodeFunctionData({ abi: v3SwapRouterAbi, functionName: 'exactInputSingle', args: [{ ...args[0], recipient }] })
  }

  /** Sends `data` to `to` from a fresh funded sender and returns the gas used; the sender first approves `to`. */
  async function gasOfDirectCall(token: Address, amount: bigint, to: Address, data: Hex): Promise<bigint> {
    const source = setupOf(world, 'BAS')
    const sender = source.instance.accounts[6]!
    await writeContractAndWait(source.instance, source.instance.accounts[0]!, {
      address: token,
      abi: standInAbi('TestToken'),
      functionName: 'mint',
      args: [sender.address, amount],
    })
    await writeContractAndWait(source.instance, sender, { address: token, abi: erc20Abi, functionName: 'approve', args: [to, amount] })
    const hash = await source.instance.walletClient(sender).sendTransaction({ to, data })
    const receipt = await source.instance.publicClient.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe('success')
    return receipt.gasUsed
  }

  it('the router adds less gas than the overhead the quote prices in, for a bridge deposit and for a swap', async () => {
    const overhead = world.catalogue.pricing.routerOverheadGasUnits
    const measured: Record<string, bigint> = {}
    for (const [name, from, to, pick] of [
      ['Across deposit', 'BAS:USDC', 'POL:USDC', (id: string) => id === 'across-usdc:BAS>POL'],
      ['Uniswap v3 swap', 'BAS:EURC', 'BAS:USDC', (id: string) => id === 'bas-univ3-eurc-usdc-500:EURC>USDC'],
    ] as const) {
      const plan = await planSwap(world, from, to, 1000n, pick)
      const call = plan.build.order.calls[0]!
      // The same inner call sent straight to the venue or bridge, by a wallet that approved it directly. A swap's
      // output then stays with the executor address named in the calldata, so the direct call pays the sender.
      const data = name === 'Uniswap v3 swap' ? payDirectCaller(call.data, setupOf(world, 'BAS').instance.accounts[6]!.address) : call.data
      const direct = await gasOfDirectCall(call.token, plan.build.routedAmount, call.target, data)
      const receipt = await executeSwap(world, plan)
      measured[name] = receipt.gasUsed - direct
      expect(receipt.gasUsed).toBeLessThanOrEqual(BigInt(plan.build.transactionRequest.gas))
      if (plan.priced.route.bridge) await relay(world, plan, receipt)
    }
    console.info(
      `router overhead on anvil: ${Object.entries(measured)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} gas (priced: ${overhead})`,
    )
    for (const value of Object.values(measured)) {
      expect(value > 0n).toBe(true)
      expect(value).toBeLessThanOrEqual(overhead)
    }
  })
})
