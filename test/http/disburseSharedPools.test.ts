import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { decodeFunctionData, type Hex } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { type ApiKeyClaims, signApiKey } from '../../src/auth/apiKey.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue, PoolInflows, type SwapEdge, swapOut } from '../../src/engine/index.ts'
import { MarketFile } from '../../src/schemas/catalogue.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import type { RouterOrder } from '../../src/tx/buildRouteTransaction.ts'
import { FROM_ADDRESS, KEY_SECRET, lazyMemoryStore, postJson, readJson, testApp } from './testApp.ts'

// The legs of one disbursement run in one transaction, in order, on the same pools: a leg is priced on the pools the
// legs before it leave, so what each recipient is promised holds together, not only alone.

const PATH = '/api/v1/batch/disburse'
const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })
const claims: ApiKeyClaims = { v: 1, id: 'key_5a5a5a5a5a5a5a5a5a5a5a5a', tier: 'pro', iat: 1_795_000_000 }
const KEY = signApiKey(KEY_SECRET, claims)

const recipient = (n: number): string => `0x${(n + 0x1000).toString(16).padStart(40, '0')}`
const toDai = (amounts: readonly string[]) => ({
  fromChain: 'ETH',
  fromToken: 'USDC',
  fromAddress: FROM_ADDRESS,
  recipients: amounts.map((amount, k) => ({ address: recipient(k), toChain: 'ETH', toToken: 'DAI', amount })),
})
const post = (payload: unknown) => postJson(app, PATH, payload, { 'x-swapeazi-key': KEY })

async function ordersOf(response: Response): Promise<{ result: DisbursementResult; orders: readonly RouterOrder[] }> {
  expect(response.status).toBe(200)
  const result = DisbursementResult.parse(await readJson(response))
  const { functionName, args } = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
  expect(functionName).toBe('executeBatch')
  return { result, orders: args[0] as readonly RouterOrder[] }
}

describe('POST /api/v1/batch/disburse: legs that share a pool', () => {
  it('refuses legs that together ask more of one pool than it carries, naming the leg and the legs before it (422, not 200)', async () => {
    // One leg of 40,000,000 USDC into DAI is within what the pool carries; the second through the same pool is not.
    const alone = await post(toDai(['40000000']))
    expect(alone.status).toBe(200)
    const response = await post(toDai(Array.from({ length: 50 }, () => '40000000')))
    expect(response.status).toBe(422)
    const problem = await readJson<{ code: string; field: string; limit: string; index: number; sharedWith: number[]; detail: string }>(
      response,
    )
    expect(problem).toMatchObject({
      code: 'amount_out_of_range',
      field: 'recipients.1.amount',
      limit: 'liquidity',
      index: 1,
      sharedWith: [0],
    })
    expect(problem.detail).toMatch(/^Recipient 1 \(40000000 to DAI on ETH\): its route swaps in .+ \(after recipients 0\)/)
    expect(problem.detail).toContain('Nothing was built or charged')
  })

  it('builds legs that fit together, each later one routing more of its amount (less margin) to deliver the same promise', async () => {
    const amounts = ['5000000', '5000000', '5000000']
    const { result, orders } = await ordersOf(await post(toDai(amounts)))
    const { orders: aloneOrders } = await ordersOf(await post(toDai(['5000000'])))
    // What each recipient is promised is the quote's: the fee-determined toAmount and its minimum.
    const promise = (item: (typeof result.items)[number]) => [item.kind, item.fee, item.toAmount, item.toAmountMin]
    expect(result.items.map(promise)).toEqual(result.items.map(() => promise(result.items[0] as (typeof result.items)[number])))
    expect(orders.map((order) => order.minOut)).toEqual(orders.map(() => orders[0]?.minOut))
    // The first leg meets the pool as a lone swap does; each later one keeps less margin to pay the price the pool
    // has after the legs before it.
    expect(orders[0]?.fee).toBe(aloneOrders[0]?.fee)
    const fees = orders.map((order) => order.fee)
    expect(fees[1]).toBeLessThan(fees[0] ?? 0n)
    expect(fees[2]).toBeLessThan(fees[1] ?? 0n)
    for (const fee of fees) expect(fee).toBeGreaterThan(0n)
  })

  it("the docs' example: three legs of 10,000 USDC into EURC on Base build, three of 15,000 do not, though one swap of 45,000 would", async () => {
    const toEurc = (amount: string) => ({
      fromChain: 'BAS',
      fromToken: 'USDC',
      fromAddress: FROM_ADDRESS,
      recipients: [0, 1, 2].map((k) => ({ address: recipient(k), toChain: 'BAS', toToken: 'EURC', amount })),
    })
    expect((await post(toEurc('10000'))).status).toBe(200)
    const refused = await post(toEurc('15000'))
    expect(refused.status).toBe(422)
    expect(await readJson(refused)).toMatchObject({ code: 'amount_out_of_range', field: 'recipients.2.amount', sharedWith: [0, 1] })
    const single = await post({ ...toEurc('45000'), recipients: toEurc('45000').recipients.slice(0, 1) })
    expect(single.status).toBe(200)
  })

  it('prices legs through different pools, and transfers, as if each were alone', async () => {
    const payload = {
      fromChain: 'ETH',
      fromToken: 'USDC',
      fromAddress: FROM_ADDRESS,
      recipients: [
        { address: recipient(1), toChain: 'ETH', toToken: 'DAI', amount: '5000000' },
        { address: recipient(2), toChain: 'ETH', toToken: 'USDC', amount: '5000000' },
      ],
    }
    const { orders } = await ordersOf(await post(payload))
    const { orders: aloneOrders } = await ordersOf(await post(toDai(['5000000'])))
    expect(orders[0]?.fee).toBe(aloneOrders[0]?.fee)
  })
})

describe('POST /api/v1/batch/disburse: legs that deposit on one Across lane', () => {
  // An Across lane read live takes at most what its relayers fill at once (maxDepositInstant): one balance every
  // deposit on the lane draws on, so the legs of one batch are summed against it. Here: ETH>BNB USDC.
  const { files } = loadCatalogue(fileURLToPath(new URL('../../manifest', import.meta.url)))
  const usdc = (whole: bigint) => String(whole * 10n ** 6n)
  const withLane = (fees: Record<string, string>) =>
    testApp({
      store,
      catalogue: compileCatalogue({
        ...files,
        market: MarketFile.parse({ ...files.market, bridgeFees: { 'across-usdc': { 'ETH>BNB': { ...fees, source: 'test' } } } }),
      }),
    })
  // Deposits up to 60,000 each (Across's maxDeposit, per deposit), 100,000 filled at once (maxDepositInstant).
  const capped = withLane({ maxAmount: usdc(60_000n), instantAmount: usdc(100_000n) })
  const toBnb = (amounts: readonly string[]) => ({
    fromChain: 'ETH',
    fromToken: 'USDC',
    fromAddress: FROM_ADDRESS,
    recipients: amounts.map((amount, k) => ({ address: recipient(k), toChain: 'BNB', toToken: 'USDC', amount })),
  })
  const postCapped = (payload: unknown) => postJson(capped, PATH, payload, { 'x-swapeazi-key': KEY })

  it('builds deposits that fit the lane together, and refuses the leg that takes them past it, naming the legs before it', async () => {
    const { result } = await ordersOf(await postCapped(toBnb(['40000', '40000'])))
    expect(result.items.map((item) => item.bridge)).toEqual(['across', 'across'])
    expect((await postCapped(toBnb(['55000']))).status).toBe(200)
    const refused = await postCapped(toBnb(['40000', '40000', '40000']))
    expect(refused.status).toBe(422)
    const problem = await readJson<{ code: string; field: string; limit: string; sharedWith: number[]; detail: string }>(refused)
    expect(problem).toMatchObject({
      code: 'amount_out_of_range',
      field: 'recipients.2.amount',
      limit: 'bridge_maximum',
      sharedWith: [0, 1],
    })
    expect(problem.detail).toMatch(
      /^Recipient 2 \(40000 to USDC on BNB\): its route deposits [\d.]+ USDC on Across \(USDC\) ETH>BNB, whose relayers fill at most 100000 USDC at once \(as last read\), and the recipients before it in this batch \(0, 1\) already deposit [\d.]+ USDC there/,
    )
    expect(problem.detail).toContain('Nothing was built or charged')
  })

  it('sums nothing against a per-deposit limit: a lane that takes 50,000 a deposit, with no instant balance read, builds three of 40,000', async () => {
    const perDeposit = withLane({ maxAmount: usdc(50_000n) })
    const { result } = await ordersOf(await postJson(perDeposit, PATH, toBnb(['40000', '40000', '40000']), { 'x-swapeazi-key': KEY }))
    expect(result.items.map((item) => item.bridge)).toEqual(['across', 'across', 'across'])
  })

  it("sums nothing on a lane with no limit of its own: the snapshot's Across lane holds each deposit to the bridge's range", async () => {
    const { result } = await ordersOf(await post(toBnb(['40000', '40000', '40000'])))
    expect(result.items).toHaveLength(3)
  })
})

describe('PoolInflows', () => {
  /** A depth venue of 10 M USD a side between two 6-decimal dollars, 5 bp fee. */
  const token = (symbol: string, address: `0x${string}`) => ({
    symbol,
    chain: 'ETH' as const,
    address,
    decimals: 6,
    priceUsdE18: 10n ** 18n,
  })
  const edge = {
    venue: { id: 'v', name: 'V', tool: 'v', feePpm: 500n, gasUnits: 0n, pricing: { model: 'depth', depthUsdE18: 10n ** 25n } },
    i: 0,
    j: 1,
    from: token('A', '0x00000000000000000000000000000000000000aa'),
    to: token('B', '0x00000000000000000000000000000000000000bb'),
  } as unknown as SwapEdge

  it('prices a first leg as the snapshot does, and later legs by what entered before them: together exactly one swap of the sum', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 10n ** 9n, max: 5n * 10n ** 12n }), { minLength: 1, maxLength: 8 }), (amounts) => {
        const inflows = new PoolInflows()
        const outs: bigint[] = []
        amounts.forEach((amount, index) => {
          const out = inflows.swapAt(edge, amount)
          if (index === 0) expect(out).toBe(swapOut(edge, amount))
          // Less than the pool gives a lone swap of the amount: from 1,000 a leg, the price the legs before it moved
          // is far more than the units rounding can move (a single unit's legs can gain one from the fee's rounding).
          else expect(out).toBeLessThan(swapOut(edge, amount))
          outs.push(out)
          inflows.add(index, {
            steps: [{ kind: 'swap', id: 'v', tool: 'v', from: edge.from, to: edge.to, amountIn: amount, amountOut: out }],
          } as unknown as Parameters<PoolInflows['add']>[1])
        })
        const total = amounts.reduce((sum, amount) => sum + amount, 0n)
        expect(outs.reduce((sum, out) => sum + out, 0n)).toBe(swapOut(edge, total))
      }),
    )
  })

  it('names the legs before that used the pool', () => {
    const inflows = new PoolInflows()
    expect(inflows.sharedWith([edge])).toEqual([])
    inflows.add(3, { steps: [{ kind: 'swap', id: 'v', from: edge.from, amountIn: 1n }] } as unknown as Parameters<PoolInflows['add']>[1])
    expect(inflows.sharedWith([edge])).toEqual([{ venue: 'V', by: [3] }])
  })
})
