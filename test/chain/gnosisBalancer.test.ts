// The Gnosis cells (USDC ↔ EURe and USDC ↔ GBPe) on anvil: the Balancer v2 Vault's batchSwap through sDAI, as
// shared/reference/live-chain.md (a) specifies it, against a Vault stand-in at the catalogue's Vault address that
// registers the real pool ids with the assets the real pools hold, and Monerium stand-ins whose v1 front and v2 token
// are one ledger. Same-chain in both directions for both tokens, and across Stargate from Base with the swap on arrival.
import { type Address, decodeFunctionData, erc20Abi, getAddress, type Hex, maxInt256, parseEventLogs, type TransactionReceipt } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi, swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import type { SwapEdge } from '../../src/engine/index.ts'
import { balancerVaultAbi } from '../../src/tx/abis.ts'
import type { RouterCall } from '../../src/tx/call.ts'
import { encodeBalancerBatchSwap } from '../../src/tx/encodeBalancerBatchSwap.ts'
import { writeContractAndWait } from './anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from './deployCatalogue.ts'
import { balanceOf, executeSwap, type PlannedSwap, planSwap, relay, setupOf, tokenOf } from './routeExecution.ts'
import { expectRouterEmpty, hopMinimum } from './safetyHelpers.ts'
import { standInAbi, standInEvents } from './standIns.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const loaded = loadCatalogue(MANIFEST)
let world: CatalogueOnChains

beforeAll(async () => {
  world = await deployCatalogueOnChains(loaded.files, ['BAS', 'GNO'])
}, 120_000)
afterAll(async () => world?.stop())

// The reference's figures, written out so the test checks the manifest rather than echoing it.
const REAL = {
  vault: '0xBA12222222228d8Ba445958a75a0704d566BF2C8',
  sDai: '0xaf204776c7245bF4147c2612BF6e5972Ee483701',
  sBal3: '0xfc095c811fe836ed12f247bcf042504342b73fb700000000000000000000009f',
  EURe: {
    venue: 'gno-balancer-eure-usdce',
    pool: '0xdd439304a77f54b1f7854751ac1169b279591ef7000000000000000000000064',
    v1: '0xcB444e90D8198415266c6a2724b7900fb12FC56E',
  },
  GBPe: {
    venue: 'gno-balancer-gbpe-usdce',
    pool: '0x9d93f38b75b376acdfe607cd1ecf4495e047deff00000000000000000000009e',
    v1: '0x5Cb9073902F2035222B9749F8fB0c9BFe5527108',
  },
} as const
type Monerium = 'EURe' | 'GBPe'

/** The stand-in deployed on Gnosis for a real address of the catalogue. */
function standIn(real: string): Address {
  const address = setupOf(world, 'GNO').replaced.get(real.toLowerCase())
  if (!address) throw new Error(`no stand-in for ${real} on GNO`)
  return address
}

type BatchSwapArgs = ReturnType<typeof decodeFunctionData<typeof balancerVaultAbi>>['args']

/** The batchSwap calls the Vault stand-in received in a receipt, as it recorded them (after the executor's patch). */
function batchSwapsIn(receipt: TransactionReceipt): { args: BatchSwapArgs; caller: Address; deltas: readonly bigint[] }[] {
  return standInEvents('BalancerVaultStandIn', receipt.logs, { address: standIn(REAL.vault), eventName: 'BatchSwapCalled' }).map(
    (event) => ({
      args: decodeFunctionData({ abi: balancerVaultAbi, data: event.args.data as Hex }).args,
      caller: event.args.caller as Address,
      deltas: event.args.assetDeltas as readonly bigint[],
    }),
  )
}

/**
 * What the reference prescribes for one batchSwap: GIVEN_IN; the assets in the swap's order with the Monerium token
 * under its v1 front; the Monerium pool and sBAL3 in that order, the second step spending all of the first's output;
 * funds from and to the executor, external balances; any input, nothing of sDAI left, at least `minOut` out.
 */
function expectReferenceShape(
  args: BatchSwapArgs,
  expected: { symbol: Monerium; sells: boolean; executor: Address; amountIn: bigint; minOut: bigint },
): void {
  const [kind, swaps, assets, funds, limits] = args
  const { symbol, sells, executor, amountIn, minOut } = expected
  const front = standIn(REAL[symbol].v1)
  const usdce = tokenOf(world, 'GNO:USDC.e').address
  expect(kind).toBe(0)
  expect(assets.map((a) => getAddress(a))).toEqual(
    (sells ? [front, standIn(REAL.sDai), usdce] : [usdce, standIn(REAL.sDai), front]).map((a) => getAddress(a)),
  )
  // The pool ids are the real ones: the stand-in holds each registered with the assets the real pool holds.
  const [first, second] = sells ? [REAL[symbol].pool, REAL.sBal3] : [REAL.sBal3, REAL[symbol].pool]
  expect(swaps).toEqual([
    { poolId: first, assetInIndex: 0n, assetOutIndex: 1n, amount: amountIn, userData: '0x' },
    { poolId: second, assetInIndex: 1n, assetOutIndex: 2n, amount: 0n, userData: '0x' },
  ])
  expect(funds).toEqual({
    sender: getAddress(executor),
    fromInternalBalance: false,
    recipient: getAddress(executor),
    toInternalBalance: false,
  })
  expect(limits).toEqual([maxInt256, 0n, -minOut])
}

/** The built call's arguments, with the amount the executor writes on chain in place of the estimate. */
function asPatched(call: RouterCall, amount: bigint): BatchSwapArgs {
  const [kind, swaps, assets, funds, limits, deadline] = decodeFunctionData({ abi: balancerVaultAbi, data: call.data }).args
  return [kind, [{ ...swaps[0]!, amount }, ...swaps.slice(1)], assets, funds, limits, deadline]
}

async function allowanceToVault(token: Address, owner: Address): Promise<bigint> {
  const instance = setupOf(world, 'GNO').instance
  return instance.publicClient.readContract({
    address: token,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [owner, standIn(REAL.vault)],
  })
}

/** Nothing stays with our router or executor on Gnosis: no catalogue token, no sDAI (the hub of the path). */
async function expectNothingLeftOnGnosis(): Promise<void> {
  await expectRouterEmpty(world, 'GNO')
  const gno = setupOf(world, 'GNO')
  for (const holder of [gno.router.router, gno.router.executor]) expect(await balanceOf(gno.instance, standIn(REAL.sDai), holder)).toBe(0n)
}

describe('the Monerium stand-in: v1 front and v2 token are one ledger, as on chain', () => {
  it('shares balance and allowance whichever address moves them, and only the front may act for a caller', async () => {
    const gno = setupOf(world, 'GNO')
    const { instance } = gno
    const [deployer, , , , , , owner, spender] = instance.accounts
    const v2 = tokenOf(world, 'GNO:EURe').address
    const v1 = standIn(REAL.EURe.v1)
    const read = (token: Address, fn: 'balanceOf', who: Address) =>
      instance.publicClient.readContract({ address: token, abi: erc20Abi, functionName: fn, args: [who] })
    const allowance = (token: Address) =>
      instance.publicClient.readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [owner!.address, spender!.address],
      })
    await writeContractAndWait(instance, deployer!, {
      address: v2,
      abi: standInAbi('TestToken'),
      functionName: 'mint',
      args: [owner!.address, 5n],
    })
    expect(await read(v1, 'balanceOf', owner!.address)).toBe(5n)
    expect(await read(v2, 'balanceOf', owner!.address)).toBe(5n)

    // An allowance given through v1 is the v2 allowance, and is spent through either address.
    await writeContractAndWait(instance, owner!, { address: v1, abi: erc20Abi, functionName: 'approve', args: [spender!.address, 3n] })
    expect(await allowance(v2)).toBe(3n)
    await writeContractAndWait(instance, spender!, {
      address: v2,
      abi: erc20Abi,
      functionName: 'transferFrom',
      args: [owner!.address, spender!.address, 1n],
    })
    expect(await allowance(v1)).toBe(2n)
    await writeContractAndWait(instance, spender!, {
      address: v1,
      abi: erc20Abi,
      functionName: 'transferFrom',
      args: [owner!.address, spender!.address, 2n],
    })
    expect(await allowance(v2)).toBe(0n)
    expect(await read(v1, 'balanceOf', spender!.address)).toBe(3n)
    expect(await read(v2, 'balanceOf', owner!.address)).toBe(2n)

    await expect(
      instance.publicClient.simulateContract({
        account: owner!,
        address: v2,
        abi: standInAbi('MoneriumTokenStandIn'),
        functionName: 'transfer_withCaller',
        args: [owner!.address, spender!.address, 1n],
      }),
    ).rejects.toThrow(/caller is not the frontend/)
  })
})

describe('the Vault stand-in refuses what the real Vault would', () => {
  const edge = (): SwapEdge => world.catalogue.edgesFrom.get('GNO:EURe')!.find((e) => e.venue.id === REAL.EURe.venue)!
  const callVault = (data: Hex) => {
    const gno = setupOf(world, 'GNO')
    return gno.instance.publicClient.call({ account: gno.router.executor, to: standIn(REAL.vault), data })
  }

  it('an asset the pool does not hold: EURe under its v2 address, where the pool holds the v1 front (BAL#521)', async () => {
    const swapEdge = edge()
    const v2Named = { ...swapEdge, venue: { ...swapEdge.venue, params: { ...swapEdge.venue.params, vaultAsset: swapEdge.from.address } } }
    const now = (await setupOf(world, 'GNO').instance.publicClient.getBlock()).timestamp
    const call = encodeBalancerBatchSwap({
      edge: v2Named,
      amountIn: 10n ** 18n,
      minOut: 1n,
      recipient: setupOf(world, 'GNO').router.executor,
      deadlineSec: now + 600n,
    })
    await expect(callVault(call.data)).rejects.toThrow(/BAL#521/)
  })

  it('a deadline already past (BAL#508)', async () => {
    const call = encodeBalancerBatchSwap({
      edge: edge(),
      amountIn: 10n ** 18n,
      minOut: 1n,
      recipient: setupOf(world, 'GNO').router.executor,
      deadlineSec: 1n,
    })
    await expect(callVault(call.data)).rejects.toThrow(/BAL#508/)
  })
})

type SameChainCase = { symbol: Monerium; from: string; to: string }
const sameChain: SameChainCase[] = [
  { symbol: 'EURe', from: 'GNO:EURe', to: 'GNO:USDC.e' },
  { symbol: 'EURe', from: 'GNO:USDC.e', to: 'GNO:EURe' },
  { symbol: 'GBPe', from: 'GNO:GBPe', to: 'GNO:USDC.e' },
  { symbol: 'GBPe', from: 'GNO:USDC.e', to: 'GNO:GBPe' },
]

describe('Gnosis: one Balancer batchSwap through sDAI, the Monerium token paid through its v1 front', () => {
  it.each(sameChain)('$from → $to', async ({ symbol, from, to }) => {
    const id = `${REAL[symbol].venue}:${from.split(':')[1]}>${to.split(':')[1]}`
    const plan = await planSwap(world, from, to, 1000n, (routeId) => routeId === id)
    const gno = setupOf(world, 'GNO')
    const { instance } = gno
    const { route } = plan.priced
    const sells = route.from.symbol === symbol
    const treasuryBefore = await balanceOf(instance, route.from, gno.treasury)
    const recipientBefore = await balanceOf(instance, route.to, plan.recipient)

    // The executor approves the Vault and is read for its balance under the address the Vault pulls from.
    const [call] = plan.build.order.calls
    expect(call!.target).toBe(standIn(REAL.vault))
    expect(getAddress(call!.token)).toBe(getAddress(sells ? standIn(REAL[symbol].v1) : route.from.address))
    expect(call!.amountOffset).toBe(484n)

    const receipt = await executeSwap(world, plan)
    expect(receipt.status).toBe('success')
    // The treasury got exactly the margin, and the recipient at least toAmountMin under the catalogue's (v2) address.
    expect(plan.build.margin > 0n).toBe(true)
    expect((await balanceOf(instance, route.from, gno.treasury)) - treasuryBefore).toBe(plan.build.margin)
    const received = (await balanceOf(instance, route.to, plan.recipient)) - recipientBefore
    expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)
    const [swapped] = parseEventLogs({ abi: swapEaziRouterAbi, logs: receipt.logs, eventName: 'Swapped' })
    expect(swapped?.args.amountOut).toBe(received)

    const [vaultCall, ...more] = batchSwapsIn(receipt)
    expect(more).toEqual([])
    expect(getAddress(vaultCall!.caller)).toBe(getAddress(gno.router.executor))
    expectReferenceShape(vaultCall!.args, {
      symbol,
      sells,
      executor: gno.router.executor,
      amountIn: plan.build.routedAmount,
      minOut: hopMinimum(plan.build.sized.steps[0]!.amountOut),
    })
    // Exactly the call the builder wrote, the amount patched to what the executor held; its deadline still ahead.
    expect(vaultCall!.args).toEqual(asPatched(call!, plan.build.routedAmount))
    const block = await instance.publicClient.getBlock({ blockNumber: receipt.blockNumber })
    expect(vaultCall!.args[5] >= block.timestamp).toBe(true)
    // The Vault paid the output the recipient got, and spent the whole routed input.
    expect(vaultCall!.deltas).toEqual([plan.build.routedAmount, 0n, -received])
    if (sells) {
      expect(await allowanceToVault(standIn(REAL[symbol].v1), gno.router.executor)).toBe(0n)
      expect(await allowanceToVault(route.from.address, gno.router.executor)).toBe(0n)
    }
    await expectNothingLeftOnGnosis()
  })
})

async function expectSourceMargin(plan: PlannedSwap, receipt: TransactionReceipt): Promise<void> {
  const source = setupOf(world, plan.priced.route.from.chain)
  expect(receipt.status).toBe('success')
  expect(plan.build.margin > 0n).toBe(true)
  const after = await balanceOf(source.instance, plan.priced.route.from, source.treasury)
  const before = await source.instance.publicClient.readContract({
    address: plan.priced.route.from.address,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [source.treasury],
    blockNumber: receipt.blockNumber - 1n,
  })
  expect(after - before).toBe(plan.build.margin)
}

describe('Base → Gnosis: Stargate with a compose, then the batchSwap on arrival (and back)', () => {
  it.each([
    ['EURe', 'stargate-usdc-taxi:BAS>GNO|gno-balancer-eure-usdce:USDC.e>EURe'],
    ['GBPe', 'stargate-usdc-taxi:BAS>GNO|gno-balancer-gbpe-usdce:USDC.e>GBPe'],
  ] as const)('BAS USDC → GNO %s', async (symbol, id) => {
    const plan = await planSwap(world, 'BAS:USDC', `GNO:${symbol}`, 1000n, (routeId) => routeId === id)
    const gno = setupOf(world, 'GNO')
    const recipientBefore = await balanceOf(gno.instance, plan.priced.route.to, plan.recipient)
    const receipt = await executeSwap(world, plan)
    await expectSourceMargin(plan, receipt)
    const order = plan.build.destinationOrder!
    expect(order).toMatchObject({ tokenOut: getAddress(plan.priced.route.to.address), minOut: plan.toAmountMin, recipient: plan.recipient })
    const [oft] = standInEvents('StargateOftStandIn', receipt.logs, { eventName: 'OFTSent' })
    const arrived = oft!.args.amountReceivedLD as bigint // USDC and USDC.e both have 6 decimals
    const delivery = await relay(world, plan, receipt)
    expect(delivery.status).toBe('success')
    const received = (await balanceOf(gno.instance, plan.priced.route.to, plan.recipient)) - recipientBefore
    expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)
    const executed = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
    expect(executed).toHaveLength(1)
    expect(executed[0]!.args.amountOut).toBe(received)
    expect(parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationFallback' })).toHaveLength(0)

    const [vaultCall, ...more] = batchSwapsIn(delivery)
    expect(more).toEqual([])
    const swapStep = plan.build.sized.steps.at(-1)!
    expectReferenceShape(vaultCall!.args, {
      symbol,
      sells: false,
      executor: gno.router.executor,
      amountIn: arrived,
      minOut: hopMinimum(swapStep.amountOut),
    })
    expect(vaultCall!.args).toEqual(asPatched(order.calls[0]!, arrived))
    await expectNothingLeftOnGnosis()
  })

  it('GNO EURe → BAS USDC: the batchSwap on Gnosis, then Stargate', async () => {
    const id = 'gno-balancer-eure-usdce:EURe>USDC.e|stargate-usdc-taxi:GNO>BAS'
    const plan = await planSwap(world, 'GNO:EURe', 'BAS:USDC', 1000n, (routeId) => routeId === id)
    const gno = setupOf(world, 'GNO')
    const base = setupOf(world, 'BAS')
    const recipientBefore = await balanceOf(base.instance, plan.priced.route.to, plan.recipient)
    const receipt = await executeSwap(world, plan)
    await expectSourceMargin(plan, receipt)
    const [vaultCall] = batchSwapsIn(receipt)
    expectReferenceShape(vaultCall!.args, {
      symbol: 'EURe',
      sells: true,
      executor: gno.router.executor,
      amountIn: plan.build.routedAmount,
      minOut: hopMinimum(plan.build.sized.steps[0]!.amountOut),
    })
    expect(vaultCall!.args).toEqual(asPatched(plan.build.order.calls[0]!, plan.build.routedAmount))
    await expectNothingLeftOnGnosis()
    const delivery = await relay(world, plan, receipt)
    expect(delivery.status).toBe('success')
    const received = (await balanceOf(base.instance, plan.priced.route.to, plan.recipient)) - recipientBefore
    expect(received >= plan.toAmountMin, `received ${received} < toAmountMin ${plan.toAmountMin}`).toBe(true)
  })
})
