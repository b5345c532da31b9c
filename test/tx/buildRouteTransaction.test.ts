import { type Address, decodeFunctionData, erc20Abi, type Hex, hexToBigInt } from 'viem'
import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import {
  type CandidateRoute,
  findRoutes,
  isEvmToken,
  leastBridgeInput,
  simulateRoute,
  sizeRoute,
  type Token,
} from '../../src/engine/index.ts'
import { buildRouteTransaction, DESTINATION_MARGIN_SEC, ORDER_SIGNING_WINDOW_SEC } from '../../src/tx/buildRouteTransaction.ts'
import { acrossSpokePoolAbi, solidlyRouterAbi } from '../../src/tx/abis.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { builtRoute } from '../support/builtRoute.ts'

const { catalogue } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const ROUTER = routerDeployment('0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e')
const SENDER: Address = '0x1111111111111111111111111111111111111111'
const RECIPIENT: Address = '0x2222222222222222222222222222222222222222'
const SLIPPAGE = 5n * 10n ** 15n
const REF = `0x${'ab'.repeat(32)}` as const

function token(key: string): Token {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`no EVM token ${key}`)
  return found
}

function buildAll(fromKey: string, toKey: string) {
  const from = token(fromKey)
  const to = token(toKey)
  const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18: SLIPPAGE })
  if (found.kind !== 'routes') throw new Error(found.kind)
  return found.viable.map((priced) => ({
    priced,
    found,
    build: builtRoute({
      catalogue,
      routerOn: () => ROUTER,
      sized: sizeRoute(catalogue, priced.route, priced.amountIn, found.amounts.toAmount)!,
      amounts: found.amounts,
      slippageE18: SLIPPAGE,
      sender: SENDER,
      recipient: RECIPIENT,
      ref: REF,
      nowSec: 1_800_000_000,
    }),
  }))
}

describe('buildRouteTransaction', () => {
  it('builds every viable route of every user token pair, the Gnosis Balancer venues included (Celo cKES is not viable, so never built)', () => {
    const tokens = [...catalogue.tokensByLowerKey.values()].filter(isEvmToken)
    let built = 0
    let throughBalancer = 0
    const refused = new Set<string>()
    for (const from of tokens)
      for (const to of tokens) {
        if (from.key === to.key) continue
        const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18: SLIPPAGE })
        if (found.kind !== 'routes') continue
        for (const priced of found.viable) {
          try {
            builtRoute({
              catalogue,
              routerOn: () => ROUTER,
              sized: sizeRoute(catalogue, priced.route, priced.amountIn, found.amounts.toAmount)!,
              amounts: found.amounts,
              slippageE18: SLIPPAGE,
              sender: SENDER,
              recipient: RECIPIENT,
              ref: REF,
              nowSec: 1_800_000_000,
            })
            built++
            if (/gno-balancer-(eure|gbpe)-usdce/.test(priced.route.id)) throughBalancer++
          } catch (error) {
            refused.add((error as Error).message)
          }
        }
      }
    expect(built).toBeGreaterThan(4000)
    expect(throughBalancer).toBeGreaterThan(100)
    expect([...refused].sort()).toEqual([])
  })

  it('encodes one router call whose order splits the input into margin and routed amount and carries the quote minimum', () => {
    for (const { priced, found, build } of buildAll('ETH:USDC', 'ETH:USDT')) {
      const { functionName, args } = decodeFunctionData({ abi: swapEaziRouterAbi, data: build.transactionRequest.data })
      expect(functionName).toBe('execute')
      const [order] = args as [typeof build.order]
      expect(order.amountIn).toBe(priced.amountIn)
      expect(order.fee + build.routedAmount).toBe(priced.amountIn)
      expect(order.fee).toBe(build.margin)
      expect(order.minOut).toBe(found.amounts.toAmountMin)
      expect(order.recipient).toBe(RECIPIENT)
      expect(order.ref).toBe(REF)
      // The user has ten minutes to get it mined.
      expect(ORDER_SIGNING_WINDOW_SEC).toBe(600)
      expect(order.deadline).toBe(1_800_000_600n)
      expect(build.transactionRequest).toMatchObject({ chainId: 1, from: SENDER, to: ROUTER.router, value: '0x0' })
      expect(hexToBigInt(build.transactionRequest.gas)).toBe(build.sized.gasLimit)
      // The margin is the part of the 0.5% the route does not need, never more than the fee itself.
      expect(build.margin > 0n && build.margin <= found.amounts.feeAmount).toBe(true)
    }
  })

  // The encoder prices nothing: a route sized once by the engine is encoded with exactly its figures, so a request
  // routes and sizes its swap once. Altered figures show up verbatim in the calldata.
  it('encodes the sized route it is given, without pricing it again', () => {
    const from = token('ETH:USDC')
    const to = token('ETH:USDT')
    const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** 6n, slippageE18: SLIPPAGE })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const sized = sizeRoute(catalogue, found.ranked.BALANCED.route, found.ranked.BALANCED.amountIn, found.amounts.toAmount)!
    const [firstStep] = sized.sized.steps
    const altered = {
      ...sized,
      routedAmount: sized.routedAmount - 7n,
      margin: sized.margin + 7n,
      sized: { ...sized.sized, sourceGasUnits: 100_000n, steps: [{ ...firstStep!, amountIn: 777n }, ...sized.sized.steps.slice(1)] },
    }
    const build = builtRoute({
      catalogue,
      routerOn: () => ROUTER,
      sized: altered,
      amounts: found.amounts,
      slippageE18: SLIPPAGE,
      sender: SENDER,
      recipient: RECIPIENT,
      ref: REF,
      nowSec: 1_800_000_000,
    })
    const [order] = decodeFunctionData({ abi: swapEaziRouterAbi, data: build.transactionRequest.data }).args as [typeof build.order]
    expect(order.fee).toBe(sized.margin + 7n)
    expect(order.amountIn).toBe(found.ranked.BALANCED.amountIn)
    // Its execution gas with the 30% margin (Ethereum has no L1 units).
    expect(hexToBigInt(build.transactionRequest.gas)).toBe(130_000n)
    expect(order.calls[0]!.data).toContain(777n.toString(16).padStart(64, '0'))
  })

  it("gives a venue that takes a deadline its order's: the source order's on the source chain, the destination order's there", () => {
    const solidlyDeadline = (data: Hex): bigint => {
      const { functionName, args } = decodeFunctionData({ abi: solidlyRouterAbi, data })
      expect(functionName).toBe('swapExactTokensForTokens')
      return args[4]
    }
    const [before] = buildAll('BAS:DAI', 'ETH:USDC').filter(({ priced }) => priced.route.id.startsWith('bas-aerodrome-usdc-dai:DAI>USDC|'))
    expect(solidlyDeadline(before!.build.order.calls[0]!.data)).toBe(before!.build.order.deadline)
    const [after] = buildAll('ETH:USDC', 'BAS:DAI').filter(({ priced }) => priced.route.id.endsWith('|bas-aerodrome-usdc-dai:USDC>DAI'))
    const destination = after!.build.destinationOrder!
    // After the bridge's p95 and the margin, the venue on Base must still take the swap the order runs.
    expect(destination.deadline > after!.build.order.deadline).toBe(true)
    expect(solidlyDeadline(destination.calls[0]!.data)).toBe(destination.deadline)
  })

  it('approves exactly amountIn, and asks USDT on Ethereum to reset its allowance first', () => {
    const [usdc] = buildAll('ETH:USDC', 'ETH:USDT')
    expect(usdc!.build.approval).toMatchObject({ spender: ROUTER.router, amount: usdc!.priced.amountIn, resetFirst: false })
    expect(usdc!.build.approvalResetTransactionRequest).toBeUndefined()
    const approve = decodeFunctionData({ abi: erc20Abi, data: usdc!.build.approvalTransactionRequest.data })
    expect(approve.args).toEqual([ROUTER.router, usdc!.priced.amountIn])
    expect(usdc!.build.approvalTransactionRequest).toMatchObject({
      chainId: 1,
      from: SENDER,
      to: usdc!.priced.route.from.address,
      value: '0x0',
    })
    const [usdt] = buildAll('ETH:USDT', 'ETH:USDC')
    expect(usdt!.build.approval.resetFirst).toBe(true)
    const reset = decodeFunctionData({ abi: erc20Abi, data: usdt!.build.approvalResetTransactionRequest!.data })
    expect(reset.args).toEqual([ROUTER.router, 0n])
  })

  it('sends a cross-chain route to the user on arrival, or to our executor there when a swap follows', () => {
    const routes = buildAll('BAS:USDC', 'POL:EURe')
    expect(routes.length).toBeGreaterThan(0)
    for (const { priced, found, build } of routes) {
      expect(priced.route.destinationSwaps.length).toBeGreaterThan(0)
      expect(build.order.tokenOut).toBe('0x0000000000000000000000000000000000000000')
      expect(build.order.minOut).toBe(0n)
      expect(build.destinationOrder).toMatchObject({
        recipient: RECIPIENT,
        minOut: found.amounts.toAmountMin,
        tokenOut: priced.route.to.address,
      })
      // The bridge delivers to our executor on Polygon, which runs the order; the user is its recipient.
      expect(build.destinationOrder!.calls).toHaveLength(priced.route.destinationSwaps.length)
      // The source order may be mined until its deadline; the bridge then takes up to the route's p95, and the
      // destination order runs its swap for that long again (at least 30 minutes) before it falls back.
      const p95 = BigInt(build.sized.durationP95Sec)
      const margin = p95 > BigInt(DESTINATION_MARGIN_SEC) ? p95 : BigInt(DESTINATION_MARGIN_SEC)
      expect(build.order.deadline).toBe(1_800_000_600n)
      expect(build.destinationOrder!.deadline).toBe(1_800_000_600n + p95 + margin)
    }
    for (const { build } of buildAll('BAS:USDC', 'POL:USDC')) {
      expect(build.destinationOrder).toBeUndefined()
      expect(build.order.recipient).toBe(RECIPIENT)
    }
  })
})

describe('what a bridge ending the route is sure to deliver (leastBridged)', () => {
  it('is at least toAmountMin on every bridged route without a destination swap, a CCTP burn after a source swap included, at 0.5% and 10% slippage', () => {
    const tokens = [...catalogue.tokensByLowerKey.values()].filter(isEvmToken)
    const protocols = new Map<string, number>()
    let afterSwapCctp = 0
    for (const slippageE18 of [5n * 10n ** 15n, 10n ** 17n])
      for (const from of tokens)
        for (const to of tokens) {
          if (from.key === to.key || from.chain === to.chain) continue
          const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18 })
          if (found.kind !== 'routes') continue
          for (const priced of found.viable) {
            const lane = priced.route.bridge
            if (lane === undefined || priced.route.destinationSwaps.length > 0) continue
            const built = builtRoute({
              catalogue,
              routerOn: () => ROUTER,
              sized: sizeRoute(catalogue, priced.route, priced.amountIn, found.amounts.toAmount)!,
              amounts: found.amounts,
              slippageE18,
              sender: SENDER,
              recipient: RECIPIENT,
              ref: REF,
              nowSec: 1_800_000_000,
            })
            const protocol = lane.bridge.protocol
            protocols.set(protocol, (protocols.get(protocol) ?? 0) + 1)
            if (protocol === 'cctp-v2' && priced.route.sourceSwaps.length > 0) {
              afterSwapCctp++
              // The calldata, not only the bookkeeping: the swap before the burn must leave toAmountMin plus the burn's
              // maxFee (depositForBurn's sixth argument), or revert.
              const k = priced.route.sourceSwaps.length
              const burnWords = (built.order.calls[k]?.data ?? '0x').slice(10).match(/.{64}/g) ?? []
              const maxFee = BigInt(`0x${burnWords[5]}`)
              const needed = (found.amounts.toAmountMin + maxFee).toString(16).padStart(64, '0')
              expect(built.order.calls[k - 1]?.data.toLowerCase(), priced.route.id).toContain(needed)
            }
            expect(built.leastBridged, `${priced.route.id} at ${slippageE18}`).toBeGreaterThanOrEqual(found.amounts.toAmountMin)
          }
        }
    expect(afterSwapCctp).toBeGreaterThan(10)
    expect([...protocols.keys()].sort()).toEqual(expect.arrayContaining(['across', 'cctp-v2']))
  })
})

describe('an Across deposit after a source swap', () => {
  it("leaves the relayer the priced fee at the swap's least output: the swap must return the deposit whose fee leaves outputAmount, at 0.5% and 10% slippage", () => {
    const tokens = [...catalogue.tokensByLowerKey.values()].filter(isEvmToken)
    let checked = 0
    let raised = 0
    for (const slippageE18 of [5n * 10n ** 15n, 10n ** 17n])
      for (const from of tokens)
        for (const to of tokens) {
          if (from.key === to.key || from.chain === to.chain) continue
          const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18 })
          if (found.kind !== 'routes') continue
          for (const priced of found.viable) {
            const { route } = priced
            if (route.bridge?.bridge.protocol !== 'across' || route.sourceSwaps.length === 0) continue
            const sized = sizeRoute(catalogue, route, priced.amountIn, found.amounts.toAmount)!
            const built = builtRoute({
              catalogue,
              routerOn: () => ROUTER,
              sized,
              amounts: found.amounts,
              slippageE18,
              sender: SENDER,
              recipient: RECIPIENT,
              ref: REF,
              nowSec: 1_800_000_000,
            })
            const k = route.sourceSwaps.length
            const deposit = decodeFunctionData({ abi: acrossSpokePoolAbi, data: built.order.calls[k]!.data })
            const outputAmount = deposit.args[5] as bigint
            const least = leastBridgeInput(catalogue, route, outputAmount)
            // What the relayer keeps of the least deposit covers the fee Across charges on it: no fill is left unpaid.
            expect(simulateRoute(catalogue, { ...route, sourceSwaps: [] }, least).steps[0]?.amountOut).toBeGreaterThanOrEqual(outputAmount)
            const swapOut = sized.sized.steps[k - 1]!.amountOut
            const floor = (swapOut * (10n ** 18n - slippageE18)) / 10n ** 18n
            const minOut = least > floor ? least : floor
            if (least > floor) raised++
            // The swap before the deposit carries that minimum in its calldata, so it reverts rather than short the fill.
            expect(built.order.calls[k - 1]?.data.toLowerCase(), route.id).toContain(minOut.toString(16).padStart(64, '0'))
            checked++
          }
        }
    expect(checked).toBeGreaterThan(10)
    expect(raised).toBeGreaterThan(0)
  })
})

describe('leastBridgeInput', () => {
  it('is the exact inverse of what each bridge lane charges: the least input that delivers the amount, one unit less delivers less', () => {
    const lanes = new Map<string, ReturnType<typeof bridgeOnly>>()
    for (const from of [...catalogue.tokensByLowerKey.values()].filter(isEvmToken))
      for (const to of [...catalogue.tokensByLowerKey.values()].filter(isEvmToken)) {
        if (from.chain === to.chain) continue
        const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** BigInt(from.decimals), slippageE18: SLIPPAGE })
        if (found.kind !== 'routes') continue
        for (const priced of found.viable) if (priced.route.bridge) lanes.set(priced.route.id, bridgeOnly(priced.route))
      }
    expect(lanes.size).toBeGreaterThan(10)
    let seed = 7n
    const next = (): bigint => {
      seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n
      return seed
    }
    for (const route of lanes.values()) {
      const delivered = (input: bigint) => simulateRoute(catalogue, route, input).steps.at(-1)?.amountOut ?? 0n
      const scale = 10n ** BigInt(route.to.decimals)
      for (const wanted of [1n, scale / 100n + 1n, scale, 1000n * scale + 3n, next() % (10n ** 7n * scale)]) {
        const least = leastBridgeInput(catalogue, route, wanted)
        expect(delivered(least), `${route.id} for ${wanted}`).toBeGreaterThanOrEqual(wanted)
        expect(delivered(least - 1n), `${route.id} for ${wanted}`).toBeLessThan(wanted)
      }
      expect(leastBridgeInput(catalogue, route, 0n)).toBe(0n)
    }
  })
})

/** A route reduced to its bridge, so its input is what the bridge is handed (destination swaps priced apart). */
function bridgeOnly(route: CandidateRoute): CandidateRoute {
  const lane = route.bridge!
  return { ...route, from: lane.from, to: lane.to, sourceSwaps: [], destinationSwaps: [] }
}

describe('buildRouteTransaction refusals', () => {
  // A refusal is a value with the reason the catalogue recorded, never a thrown string.
  it('answers a route through a step marked unbuildable with { ok: false, reason, step }, without encoding it', () => {
    const from = token('ETH:USDC')
    const to = token('ETH:USDT')
    const found = findRoutes(catalogue, { from, to, amountIn: 1000n * 10n ** 6n, slippageE18: SLIPPAGE })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const priced = found.ranked.BALANCED
    const sized = sizeRoute(catalogue, priced.route, priced.amountIn, found.amounts.toAmount)!
    const [edge] = sized.route.sourceSwaps
    if (!edge) throw new Error('the route has no swap')
    const gap = { reason: 'missing_param' as const, detail: 'the venue lacks a parameter' }
    const marked = {
      ...sized,
      route: { ...sized.route, sourceSwaps: [{ ...edge, venue: { ...edge.venue, gap } }, ...sized.route.sourceSwaps.slice(1)] },
    }
    const result = buildRouteTransaction({
      catalogue,
      routerOn: () => ROUTER,
      sized: marked,
      amounts: found.amounts,
      slippageE18: SLIPPAGE,
      sender: SENDER,
      recipient: RECIPIENT,
      ref: REF,
      nowSec: 1_800_000_000,
    })
    expect(result).toEqual({ ok: false, reason: 'missing_param', detail: 'the venue lacks a parameter', step: edge.venue.id })
  })
})
