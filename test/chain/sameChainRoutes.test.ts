import {
  type Address,
  decodeAbiParameters,
  erc20Abi,
  getAbiItem,
  getAddress,
  type Hex,
  parseEventLogs,
  type TransactionReceipt,
  zeroAddress,
} from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi, swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { writeContractAndWait } from './anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from './deployCatalogue.ts'
import { balanceOf, executeSwap, type PlannedSwap, planSwap, relay, setupOf, tokenOf } from './routeExecution.ts'
import { expectHops, expectRouterEmpty, hopMinimum, mintTo, sendEstimated, sendRequest, venueHops } from './safetyHelpers.ts'
import { addressToBytes32, standInAbi, standInEvents } from './standIns.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const loaded = loadCatalogue(MANIFEST)
/** Every chain with a venue (BAS for Aerodrome, POL for the USDT0 OFT lane), plus Celo for the legacy mesh. */
const CHAINS: ChainCode[] = ['ETH', 'OPT', 'BNB', 'GNO', 'CEL', 'ARB', 'BAS', 'POL']
let world: CatalogueOnChains

beforeAll(async () => {
  world = await deployCatalogueOnChains(loaded.files, CHAINS)
}, 120_000)
afterAll(async () => world?.stop())

type Balances = { treasury: bigint; recipient: bigint; sender: bigint }

async function balancesBefore(plan: PlannedSwap): Promise<Balances> {
  const { from, to } = plan.priced.route
  const setup = setupOf(world, from.chain)
  return {
    treasury: await balanceOf(setup.instance, from, setup.treasury),
    recipient: await balanceOf(setupOf(world, to.chain).instance, to, plan.recipient),
    sender: await balanceOf(setup.instance, from, plan.sender.address),
  }
}

/** Everything a same-chain swap must show: margin to the treasury, output to the recipient, exact venue calls, nothing left behind. */
async function expectSameChainSwap(plan: PlannedSwap, receipt: TransactionReceipt, before: Balances): Promise<void> {
  expect(receipt.status).toBe('success')
  const { route } = plan.priced
  const setup = setupOf(world, route.from.chain)
  const { instance } = setup
  const { build } = plan

  // The order is what the builder promised: all of amountIn pulled, the margin to the treasury, the rest routed.
  expect(build.margin > 0n, `margin ${build.margin} > 0`).toBe(true)
  expect(build.routedAmount + build.margin).toBe(build.order.amountIn)
  expect(build.order.minOut).toBe(plan.toAmountMin)
  expect((await balanceOf(instance, route.from, setup.treasury)) - before.treasury).toBe(build.margin)
  // executeSwap minted exactly amountIn to the sender, and the router pulled all of it.
  expect(await balanceOf(instance, route.from, plan.sender.address)).toBe(before.sender)

  const swapped = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
  expect(swapped).toHaveLength(1)
  const event = swapped[0]!.args
  expect(event).toMatchObject({
    ref: build.order.ref,
    sender: plan.sender.address,
    recipient: plan.recipient,
    tokenIn: getAddress(route.from.address),
    amountIn: build.order.amountIn,
    fee: build.margin,
    tokenOut: getAddress(route.to.address),
  })
  expect(getAddress(swapped[0]!.address)).toBe(getAddress(setup.router.router))
  const received = (await balanceOf(instance, route.to, plan.recipient)) - before.recipient
  expect(received).toBe(event.amountOut)
  expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)

  const hops = venueHops(receipt.logs, route.sourceSwaps)
  expectHops(
    hops,
    route.sourceSwaps,
    build.sized.steps.map((step) => step.amountOut),
    setup.router.executor,
    build.routedAmount,
  )
  expect(hops.at(-1)!.amountOut).toBe(received)
  await expectRouterEmpty(world, route.from.chain)
}

type Case = { name: string; from: string; to: string; id: string }

const cases: Case[] = [
  { name: 'ETH Curve 3pool, one hop', from: 'ETH:USDC', to: 'ETH:DAI', id: 'eth-curve-3pool:USDC>DAI' },
  {
    name: 'ETH Uniswap v3, one hop (output is the USDT-like token)',
    from: 'ETH:USDC',
    to: 'ETH:USDT',
    id: 'eth-univ3-usdc-usdt-100:USDC>USDT',
  },
  { name: 'ETH Curve stableswap-ng PYUSD → USDC', from: 'ETH:PYUSD', to: 'ETH:USDC', id: 'eth-curve-pyusd-usdc:PYUSD>USDC' },
  { name: 'ETH Curve stableswap-ng USDe (18 decimals) → USDC', from: 'ETH:USDe', to: 'ETH:USDC', id: 'eth-curve-usde-usdc:USDe>USDC' },
  {
    name: 'ETH two hops: Uniswap v3 then Curve 3pool',
    from: 'ETH:EURe',
    to: 'ETH:USDT',
    id: 'eth-univ3-eure-usdc-500:EURe>USDC|eth-curve-3pool:USDC>USDT',
  },
  {
    name: 'ETH two hops: Uniswap v3 twice through one router',
    from: 'ETH:EURe',
    to: 'ETH:USDT',
    id: 'eth-univ3-eure-usdc-500:EURe>USDC|eth-univ3-usdc-usdt-100:USDC>USDT',
  },
  {
    name: 'ETH two hops from USDT: Uniswap v3 then Curve',
    from: 'ETH:USDT',
    to: 'ETH:DAI',
    id: 'eth-univ3-usdc-usdt-100:USDT>USDC|eth-curve-3pool:USDC>DAI',
  },
  { name: 'OPT Velodrome (Solidly), one hop', from: 'OPT:USDC', to: 'OPT:USDT', id: 'opt-velodrome-usdc-usdt:USDC>USDT' },
  { name: 'BAS Aerodrome (Solidly), one hop', from: 'BAS:USDC', to: 'BAS:DAI', id: 'bas-aerodrome-usdc-dai:USDC>DAI' },
  {
    name: 'BNB PancakeSwap StableSwap, one hop (18-decimal USDT)',
    from: 'BNB:USDT',
    to: 'BNB:USDC',
    id: 'bnb-pancake-stable-usdt-usdc:USDT>USDC',
  },
  { name: 'BNB PancakeSwap v3 USDT → FDUSD', from: 'BNB:USDT', to: 'BNB:FDUSD', id: 'bnb-pancake-v3-usdt-fdusd-100:USDT>FDUSD' },
  {
    name: 'GNO Balancer v2, one batchSwap through sDAI, paid through the Monerium v1 front',
    from: 'GNO:EURe',
    to: 'GNO:USDC.e',
    id: 'gno-balancer-eure-usdce:EURe>USDC.e',
  },
  { name: 'CEL Mento Broker, one hop', from: 'CEL:USDT', to: 'CEL:cUSD', id: 'cel-mento-usdt-cusd:USDT>cUSD' },
  { name: 'ARB Uniswap v3, one hop', from: 'ARB:USDT', to: 'ARB:USDC', id: 'arb-univ3-usdt-usdc-100:USDT>USDC' },
]

describe('same-chain routes on every venue protocol', () => {
  it('the cases cover every venue protocol of the catalogue', () => {
    const covered = new Set(
      cases.flatMap((entry) =>
        entry.id.split('|').map((hop) => loaded.catalogue.venues.find((venue) => venue.id === hop.split(':')[0])!.protocol),
      ),
    )
    expect([...covered].sort()).toEqual([...new Set(loaded.catalogue.venues.map((venue) => venue.protocol))].sort())
  })

  it.each(cases)('$name ($id)', async ({ from, to, id }) => {
    const plan = await planSwap(world, from, to, 1000n, (routeId) => routeId === id)
    expect(plan.priced.route.id).toBe(id)
    expect(plan.priced.route.bridge).toBeUndefined()
    const before = await balancesBefore(plan)
    const receipt = await executeSwap(world, plan)
    await expectSameChainSwap(plan, receipt, before)
  })

  // Beyond the cases above: every venue of the catalogue, one hop, in both directions, except Mento's cUSD/cKES: its
  // 1% fee is more than the 0.5% earns, so no route through it is offered (checked below).
  const NOT_OFFERED = 'cel-mento-cusd-ckes'
  const named = new Set(cases.map((entry) => entry.id))
  const everyVenue: Case[] = loaded.catalogue.venues
    .flatMap((venue) =>
      [
        [0, 1],
        [1, 0],
      ].map(([i, j]) => {
        const from = venue.tokens[i!]!
        const to = venue.tokens[j!]!
        return { name: `${venue.protocol} ${venue.chain}`, from: from.key, to: to.key, id: `${venue.id}:${from.symbol}>${to.symbol}` }
      }),
    )
    .filter((entry) => !named.has(entry.id) && !entry.id.startsWith(`${NOT_OFFERED}:`))

  it.each(everyVenue)('every venue, one hop: $name ($id)', async ({ from, to, id }) => {
    const plan = await planSwap(world, from, to, 250n, (routeId) => routeId === id)
    const before = await balancesBefore(plan)
    const receipt = await executeSwap(world, plan)
    await expectSameChainSwap(plan, receipt, before)
  })

  it.each([
    ['CEL:cUSD', 'CEL:cKES'],
    ['CEL:cKES', 'CEL:cUSD'],
  ])('%s → %s through Mento cUSD/cKES costs more than the fee, so it is not offered', async (from, to) => {
    await expect(planSwap(world, from, to, 250n, (routeId) => routeId.startsWith(NOT_OFFERED))).rejects.toThrow(/not_viable/)
  })

  it('USDT on Ethereum as the input: an existing allowance must be reset to 0 before the exact approval', async () => {
    const id = 'eth-curve-3pool:USDT>USDC'
    const plan = await planSwap(world, 'ETH:USDT', 'ETH:USDC', 1000n, (routeId) => routeId === id)
    const setup = setupOf(world, 'ETH')
    const { instance } = setup
    const usdt = tokenOf(world, 'ETH:USDT')
    const { approval, approvalTransactionRequest, approvalResetTransactionRequest } = plan.build
    expect(usdt.needsApprovalReset).toBe(true)
    expect(approval.resetFirst).toBe(true)
    expect(approvalResetTransactionRequest).toBeDefined()
    expect(approval).toMatchObject({ token: usdt.address, spender: setup.router.router, amount: plan.build.order.amountIn })

    const allowance = () =>
      instance.publicClient.readContract({
        address: usdt.address,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [plan.sender.address, setup.router.router],
      })
    const before = await balancesBefore(plan)
    await mintTo(instance, usdt.address, plan.sender.address, plan.build.order.amountIn)
    // A leftover allowance (an earlier approval the router never spent).
    await writeContractAndWait(instance, plan.sender, {
      address: usdt.address,
      abi: standInAbi('ResetApprovalToken'),
      functionName: 'approve',
      args: [setup.router.router, 1n],
    })
    expect(await allowance()).toBe(1n)

    // The plain approval now fails, both as a wallet sends it and with its reason when simulated.
    const refused = await sendRequest(instance, plan.sender, approvalTransactionRequest)
    expect(refused.status).toBe('reverted')
    await expect(sendEstimated(instance, plan.sender, approvalTransactionRequest)).rejects.toThrow(/reset to 0 first/)
    expect(await allowance()).toBe(1n)

    expect((await sendRequest(instance, plan.sender, approvalResetTransactionRequest!)).status).toBe('success')
    expect(await allowance()).toBe(0n)
    expect((await sendRequest(instance, plan.sender, approvalTransactionRequest)).status).toBe('success')
    expect(await allowance()).toBe(plan.build.order.amountIn)

    const receipt = await sendRequest(instance, plan.sender, plan.build.transactionRequest)
    await expectSameChainSwap(plan, receipt, before)
    expect(await allowance()).toBe(0n)
  })
})

const pad = (address: string) => addressToBytes32(getAddress(address))

/** Source-side checks of a USDT0 send: the margin, the OFT's recorded call, nothing left with the router. */
async function expectOftSend(plan: PlannedSwap, receipt: TransactionReceipt, treasuryBefore: bigint): Promise<{ amountLD: bigint }> {
  expect(receipt.status).toBe('success')
  const route = plan.priced.route
  const lane = route.bridge!
  const source = setupOf(world, route.from.chain)
  const destination = setupOf(world, route.to.chain)
  expect(plan.build.margin > 0n).toBe(true)
  expect((await balanceOf(source.instance, route.from, source.treasury)) - treasuryBefore).toBe(plan.build.margin)
  const swapped = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
  expect(swapped[0]?.args).toMatchObject({
    ref: plan.build.order.ref,
    sender: plan.sender.address,
    recipient: plan.recipient,
    fee: plan.build.margin,
    amountOut: 0n,
  })

  const [sent] = standInEvents('StargateOftStandIn', receipt.logs, { address: getAddress(lane.sourceContract), eventName: 'SendRecorded' })
  const [oft] = standInEvents('StargateOftStandIn', receipt.logs, { address: getAddress(lane.sourceContract), eventName: 'OFTSent' })
  const param = sent!.args.sendParam as {
    dstEid: number
    to: string
    amountLD: bigint
    minAmountLD: bigint
    extraOptions: string
    composeMsg: Hex
    oftCmd: string
  }
  const bridgeStep = plan.build.sized.steps[route.sourceSwaps.length]!
  const endsHere = route.destinationSwaps.length === 0
  expect(param.dstEid).toBe(lane.destinationDomain)
  expect(param.to).toBe(pad(endsHere ? plan.recipient : destination.router.executor))
  expect(param.amountLD).toBe(plan.build.routedAmount)
  expect(param.minAmountLD).toBe(endsHere ? plan.toAmountMin : hopMinimum(bridgeStep.amountOut))
  expect(param.oftCmd).toBe('0x')
  expect(sent!.args.msgValue).toBe(plan.build.order.calls.at(-1)!.value)
  expect((sent!.args.fee as { nativeFee: bigint }).nativeFee > 0n).toBe(true)
  if (endsHere) {
    expect(param.composeMsg).toBe('0x')
    expect(param.extraOptions).toBe('0x')
  } else {
    // The compose message is exactly the destination order the builder returned.
    const [order] = decodeAbiParameters(getAbiItem({ abi: swapEaziExecutorAbi, name: 'runDestination' }).inputs, param.composeMsg)
    expect(order).toEqual(plan.build.destinationOrder)
    expect(param.extraOptions).not.toBe('0x')
  }
  await expectRouterEmpty(world, route.from.chain)
  const received = oft!.args.amountReceivedLD as bigint
  return { amountLD: (received * 10n ** BigInt(lane.to.decimals)) / 10n ** BigInt(lane.from.decimals) }
}

/** Destination-side checks after a compose: the swaps on arrival, the executor's event, the recipient's output. */
async function expectComposedDelivery(
  plan: PlannedSwap,
  delivery: TransactionReceipt,
  amountLD: bigint,
  recipientBefore: bigint,
): Promise<void> {
  expect(delivery.status).toBe('success')
  const route = plan.priced.route
  const destination = setupOf(world, route.to.chain)
  const received = (await balanceOf(destination.instance, route.to, plan.recipient)) - recipientBefore
  expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)
  const executed = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
  expect(executed).toHaveLength(1)
  expect(executed[0]!.args).toMatchObject({
    ref: plan.build.order.ref,
    recipient: plan.recipient,
    token: getAddress(route.bridge!.to.address),
    amountIn: amountLD,
    tokenOut: getAddress(route.to.address),
    amountOut: received,
  })
  expect(parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationFallback' })).toHaveLength(0)
  const hops = venueHops(delivery.logs, route.destinationSwaps)
  const estimates = plan.build.sized.steps.slice(route.sourceSwaps.length + 1).map((step) => step.amountOut)
  expectHops(hops, route.destinationSwaps, estimates, destination.router.executor, amountLD)
  expect(hops.at(-1)!.amountOut).toBe(received)
  await expectRouterEmpty(world, route.to.chain)
}

/**
 * What relay() does for an OFT, with the delivering OApp given: the LayerZero endpoint stand-in credits the
 * recipient of the send (our executor when there is a compose) and calls its lzCompose with the compose message.
 */
function deliverOft(plan: PlannedSwap, receipt: TransactionReceipt, amountLD: bigint, oapp: Address): Promise<TransactionReceipt> {
  const lane = plan.priced.route.bridge!
  const destination = setupOf(world, lane.to.chain)
  const [sent] = standInEvents('StargateOftStandIn', receipt.logs, { address: getAddress(lane.sourceContract), eventName: 'SendRecorded' })
  const param = sent!.args.sendParam as { to: Hex; composeMsg: Hex }
  const srcEid = world.files.bridges.bridges
    .find((bridge) => bridge.id === lane.bridge.id)!
    .endpoints.find((endpoint) => endpoint.chain === lane.from.chain)!.domain!
  return writeContractAndWait(destination.instance, destination.instance.accounts[5]!, {
    address: getAddress(lane.deliveredBy!),
    abi: standInAbi('LayerZeroEndpointStandIn'),
    functionName: 'deliver',
    args: [oapp, lane.to.address, getAddress(`0x${param.to.slice(26)}`), amountLD, srcEid, pad(plan.sender.address), param.composeMsg],
  })
}

describe('USDT0 from Arbitrum: the OFT and the legacy mesh', () => {
  const bridgeOnly: Case[] = [
    { name: 'USDT0 OFT ARB → ETH, bridge only', from: 'ARB:USDT', to: 'ETH:USDT', id: 'usdt0-oft:ARB>ETH' },
    { name: 'USDT0 OFT ARB → POL, bridge only', from: 'ARB:USDT', to: 'POL:USDT', id: 'usdt0-oft:ARB>POL' },
    { name: 'USDT0 legacy mesh ARB → ETH, bridge only', from: 'ARB:USDT', to: 'ETH:USDT', id: 'usdt0-legacy-mesh:ARB>ETH' },
    { name: 'USDT0 legacy mesh ARB → CEL, bridge only', from: 'ARB:USDT', to: 'CEL:USDT', id: 'usdt0-legacy-mesh:ARB>CEL' },
  ]

  it.each(bridgeOnly)('$name ($id)', async ({ from, to, id }) => {
    const plan = await planSwap(world, from, to, 1000n, (routeId) => routeId === id)
    const source = setupOf(world, 'ARB')
    const destination = setupOf(world, plan.priced.route.to.chain)
    const treasuryBefore = await balanceOf(source.instance, plan.priced.route.from, source.treasury)
    const recipientBefore = await balanceOf(destination.instance, plan.priced.route.to, plan.recipient)
    const receipt = await executeSwap(world, plan)
    const { amountLD } = await expectOftSend(plan, receipt, treasuryBefore)

    // relay() names the destination OFT as the delivering OApp; the legacy mesh has none on Celo, where a
    // bridge-only delivery involves no contract of ours, so any address serves.
    const lane = plan.priced.route.bridge!
    const delivery = lane.destinationContract ? await relay(world, plan, receipt) : await deliverOft(plan, receipt, amountLD, zeroAddress)
    expect(delivery.status).toBe('success')
    const received = (await balanceOf(destination.instance, plan.priced.route.to, plan.recipient)) - recipientBefore
    expect(received).toBe(amountLD)
    expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)
    await expectRouterEmpty(world, plan.priced.route.to.chain)
  })

  it('USDT0 OFT ARB → ETH with a compose, then Curve 3pool USDT → USDC on arrival (USDT-like token on ETH)', async () => {
    const id = 'usdt0-oft:ARB>ETH|eth-curve-3pool:USDT>USDC'
    const plan = await planSwap(world, 'ARB:USDT', 'ETH:USDC', 1000n, (routeId) => routeId === id)
    const source = setupOf(world, 'ARB')
    const destination = setupOf(world, 'ETH')
    const treasuryBefore = await balanceOf(source.instance, plan.priced.route.from, source.treasury)
    const recipientBefore = await balanceOf(destination.instance, plan.priced.route.to, plan.recipient)
    const receipt = await executeSwap(world, plan)
    const { amountLD } = await expectOftSend(plan, receipt, treasuryBefore)
    const delivery = await relay(world, plan, receipt)
    await expectComposedDelivery(plan, delivery, amountLD, recipientBefore)
  })

  it('USDT0 legacy mesh ARB → CEL, then Mento USDT → cUSD → cKES on arrival: refused for its cost, and runs where a fee covers it', async () => {
    const id = 'usdt0-legacy-mesh:ARB>CEL|cel-mento-usdt-cusd:USDT>cUSD|cel-mento-cusd-ckes:cUSD>cKES'
    // Mento's own route costs 1.02% (manifest/venues.json): more than the 0.5% fee earns, so it is never offered.
    await expect(planSwap(world, 'ARB:USDT', 'CEL:cKES', 1000n, (routeId) => routeId === id)).rejects.toThrow(/not_viable/)
    // The Celo OFT is in the catalogue (allow-listed, a compose from it recognised): with the cKES hop priced at the
    // Broker-era 5 bp, the same route is offered, and the legacy mesh's compose and both Mento calls run end to end.
    const celo = setupOf(world, 'CEL')
    const files = JSON.parse(JSON.stringify(world.files)) as typeof world.files
    files.venues.venues.find((venue) => venue.id === 'cel-mento-cusd-ckes')!.feePpm = 500
    const endpoint = files.bridges.bridges
      .find((bridge) => bridge.id === 'usdt0-legacy-mesh')!
      .endpoints.find((entry) => entry.chain === 'CEL')!
    const known = { ...world, files, catalogue: compileCatalogue(files) }
    const plan = await planSwap(known, 'ARB:USDT', 'CEL:cKES', 1000n, (routeId) => routeId === id)
    const lane = plan.priced.route.bridge!
    expect(lane.destinationContract).toBe(endpoint.contract)
    const source = setupOf(known, 'ARB')
    const treasuryBefore = await balanceOf(source.instance, plan.priced.route.from, source.treasury)
    const recipientBefore = await balanceOf(celo.instance, plan.priced.route.to, plan.recipient)
    const receipt = await executeSwap(known, plan)
    const { amountLD } = await expectOftSend(plan, receipt, treasuryBefore)
    expect(plan.build.destinationOrder).toMatchObject({
      token: getAddress(lane.to.address),
      tokenOut: getAddress(plan.priced.route.to.address),
      minOut: plan.toAmountMin,
      recipient: plan.recipient,
    })
    const delivery = await relay(known, plan, receipt)
    await expectComposedDelivery(plan, delivery, amountLD, recipientBefore)
  })
})
