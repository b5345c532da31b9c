import { type Address, decodeFunctionData, erc20Abi, hexToBigInt } from 'viem'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { findRoutes, isEvmToken, sizeRoute, type Token } from '../../src/engine/index.ts'
import { buildDisbursementTransaction, type DisbursementLeg } from '../../src/tx/buildDisbursementTransaction.ts'
import type { RouterOrder } from '../../src/tx/buildRouteTransaction.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { builtRoute } from '../support/builtRoute.ts'

const { catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const ROUTER = routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e')
const SENDER: Address = '0x1111111111111111111111111111111111111111'
const SLIPPAGE = 5n * 10n ** 15n
const REF = `0x${'ab'.repeat(32)}` as const
const recipient = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`
const token = (key: string): Token => {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`${key} is not in the catalogue`)
  return found
}

/** The BALANCED route's leg for `amountIn` of `fromKey` to `toKey`, built as the swap builder builds it. */
function routeLeg(fromKey: string, toKey: string, amountIn: bigint, to: Address, pick?: (id: string) => boolean) {
  const found = findRoutes(catalogue, { from: token(fromKey), to: token(toKey), amountIn, slippageE18: SLIPPAGE })
  if (found.kind !== 'routes') throw new Error(found.kind)
  const priced = pick ? found.viable.find((route) => pick(route.route.id)) : found.ranked.BALANCED
  if (!priced) throw new Error(`no viable route picked; viable: ${found.viable.map((route) => route.route.id).join(', ')}`)
  const build = builtRoute({
    catalogue,
    routerOn: () => ROUTER,
    sized: sizeRoute(catalogue, priced.route, amountIn, found.amounts.toAmount)!,
    amounts: found.amounts,
    slippageE18: SLIPPAGE,
    sender: SENDER,
    recipient: to,
    ref: REF,
    nowSec: NOW_SEC,
  })
  return { kind: 'route' as const, build }
}

const transfer = (amount: bigint, to: Address): DisbursementLeg => ({
  kind: 'transfer',
  amount,
  fee: (amount * 50n + 9_999n) / 10_000n,
  recipient: to,
})
const NOW_SEC = 1_800_000_000
const build = (fromKey: string, legs: DisbursementLeg[], nowSec = NOW_SEC) =>
  buildDisbursementTransaction({ catalogue, routerOn: () => ROUTER, token: token(fromKey), sender: SENDER, ref: REF, legs, nowSec })

describe('buildDisbursementTransaction', () => {
  it("encodes executeBatch with one order per leg, in order; value, gas and approval are the legs' sums", () => {
    const usdc = 10n ** 6n
    const stargate = routeLeg('BAS:USDC', 'POL:USDC', 500n * usdc, recipient(4), (id) => id === 'stargate-usdc-taxi:BAS>POL')
    const legs: DisbursementLeg[] = [
      transfer(100n * usdc, recipient(1)),
      routeLeg('BAS:USDC', 'BAS:EURC', 200n * usdc, recipient(2)),
      routeLeg('BAS:USDC', 'POL:USDC', 300n * usdc, recipient(3)),
      stargate,
      transfer(3n, recipient(5)),
    ]
    const batch = build('BAS:USDC', legs)
    const { functionName, args } = decodeFunctionData({ abi: swapEaziRouterAbi, data: batch.transactionRequest.data })
    expect(functionName).toBe('executeBatch')
    const orders = args[0] as readonly RouterOrder[]
    expect(orders.map((order) => [order.recipient, order.amountIn])).toEqual([
      [recipient(1), 100n * usdc],
      [recipient(2), 200n * usdc],
      [recipient(3), 300n * usdc],
      [recipient(4), 500n * usdc],
      [recipient(5), 3n],
    ])
    for (const order of orders) expect(order.ref).toBe(REF)
    // A route leg's order is the swap builder's order, unchanged.
    for (const k of [1, 2, 3]) expect(orders[k]).toEqual((legs[k] as Extract<DisbursementLeg, { kind: 'route' }>).build.order)
    // Transfers: no calls, the token itself out, fee rounded up, the floor exactly the rest.
    expect(orders[0]).toMatchObject({
      tokenIn: token('BAS:USDC').address,
      tokenOut: token('BAS:USDC').address,
      fee: 500_000n,
      minOut: 99_500_000n,
      calls: [],
    })
    expect(orders[4]).toMatchObject({ fee: 1n, minOut: 2n, calls: [] })
    // Every order carries a deadline: a transfer's is the one a route built at the same time gets (ten minutes on).
    for (const order of orders) expect(order.deadline).toBe(BigInt(NOW_SEC + 600))
    expect(batch.deadline).toBe(BigInt(NOW_SEC + 600))

    expect(batch.amountIn).toBe(1100n * usdc + 3n)
    expect(batch.approval).toEqual({ token: token('BAS:USDC').address, spender: ROUTER.router, amount: batch.amountIn, resetFirst: false })
    const approve = decodeFunctionData({ abi: erc20Abi, data: batch.approvalTransactionRequest.data })
    expect(approve).toEqual({ functionName: 'approve', args: [ROUTER.router, batch.amountIn] })
    const stargateFee = stargate.build.order.calls.at(-1)!.value
    expect(stargateFee > 0n).toBe(true)
    expect(hexToBigInt(batch.transactionRequest.value)).toBe(stargateFee)
    const routeGas = [1, 2, 3].reduce((sum, k) => sum + (legs[k] as Extract<DisbursementLeg, { kind: 'route' }>).build.sized.gasLimit, 0n)
    // Each transfer: the router overhead (100k) plus 30%; the batch: one intrinsic 21k plus 30%.
    expect(hexToBigInt(batch.transactionRequest.gas)).toBe(routeGas + 2n * 130_000n + 27_300n)
    expect(batch.transactionRequest).toMatchObject({ chainId: 8453, from: SENDER, to: ROUTER.router })
  })

  it("runs until the earliest of its orders' deadlines", () => {
    const early = routeLeg('BAS:USDC', 'POL:USDC', 10n ** 8n, recipient(2))
    const batch = build('BAS:USDC', [transfer(10n ** 6n, recipient(1)), early], NOW_SEC + 60)
    const orders = decodeFunctionData({ abi: swapEaziRouterAbi, data: batch.transactionRequest.data }).args[0] as readonly RouterOrder[]
    expect(orders.map((order) => order.deadline)).toEqual([BigInt(NOW_SEC + 660), BigInt(NOW_SEC + 600)])
    expect(batch.deadline).toBe(BigInt(NOW_SEC + 600))
  })

  it('asks for a reset first where the token needs it (USDT on Ethereum)', () => {
    const batch = build('ETH:USDT', [transfer(10n ** 6n, recipient(1))])
    expect(batch.approval.resetFirst).toBe(true)
    expect(decodeFunctionData({ abi: erc20Abi, data: batch.approvalResetTransactionRequest!.data }).args).toEqual([ROUTER.router, 0n])
  })

  it('refuses legs that cannot be one batch: none, another token, another ref, a fee that leaves nothing', () => {
    expect(() => build('BAS:USDC', [])).toThrow(/at least one leg/)
    expect(() => build('BAS:EURC', [routeLeg('BAS:USDC', 'BAS:EURC', 10n ** 8n, recipient(1))])).toThrow(/spends .* not BAS:EURC/)
    const foreign = routeLeg('BAS:USDC', 'POL:USDC', 10n ** 8n, recipient(1))
    const otherRef = {
      kind: 'route' as const,
      build: { ...foreign.build, order: { ...foreign.build.order, ref: `0x${'cd'.repeat(32)}` as const } },
    }
    expect(() => build('BAS:USDC', [otherRef])).toThrow(/carries ref/)
    expect(() => build('BAS:USDC', [{ kind: 'transfer', amount: 1n, fee: 1n, recipient: recipient(1) }])).toThrow(
      /leaves the recipient nothing/,
    )
  })
})
