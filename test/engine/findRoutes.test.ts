import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { findRoutes, type FindRoutesReturnType } from '../../src/engine/findRoutes.ts'
import type { PricedRoute } from '../../src/engine/route.ts'
import { isEvmToken } from '../../src/engine/isEvmToken.ts'
import type { Token } from '../../src/engine/types.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const { catalogue } = loadCatalogue(MANIFEST)

const SLIPPAGE = 5n * 10n ** 15n

function token(key: string): Token {
  const found = catalogue.tokens.get(key)
  if (!found || !isEvmToken(found)) throw new Error(`no token ${key}`)
  return found
}

function units(t: Token, whole: bigint): bigint {
  return whole * 10n ** BigInt(t.decimals)
}

function routesFor(fromKey: string, toKey: string, whole = 1000n): Extract<FindRoutesReturnType, { kind: 'routes' }> {
  const from = token(fromKey)
  const result = findRoutes(catalogue, { from, to: token(toKey), amountIn: units(from, whole), slippageE18: SLIPPAGE })
  if (result.kind !== 'routes') throw new Error(`${fromKey} → ${toKey}: ${result.kind}`)
  return result
}

/** USD value at the snapshot price, written out here rather than imported. */
function valueUsdE18(t: Token, amount: bigint): bigint {
  return (amount * t.priceUsdE18) / 10n ** BigInt(t.decimals)
}

/** A route's shape: swap counts either side and whether it bridges. */
function shape(p: PricedRoute): string {
  return `${p.route.sourceSwaps.length}|${p.route.bridge ? 'bridge' : '-'}|${p.route.destinationSwaps.length}`
}

describe('findRoutes: every route shape of DESIGN 4 appears', () => {
  it('same chain, one hop: ETH USDC → USDT', () => {
    const result = routesFor('ETH:USDC', 'ETH:USDT')
    expect(result.viable.map((p) => p.route.id).sort()).toEqual(['eth-curve-3pool:USDC>USDT', 'eth-univ3-usdc-usdt-100:USDC>USDT'])
    for (const p of result.viable) expect(shape(p)).toBe('1|-|0')
  })

  it('same chain, two hops: ETH EURe → EURC through USDC', () => {
    const result = routesFor('ETH:EURe', 'ETH:EURC')
    const route = result.viable.find((p) => shape(p) === '2|-|0')
    expect(route?.route.id).toBe('eth-univ3-eure-usdc-500:EURe>USDC|eth-univ3-eurc-usdc-500:USDC>EURC')
    expect(route?.steps.map((s) => `${s.from.key}>${s.to.key}`)).toEqual(['ETH:EURe>ETH:USDC', 'ETH:USDC>ETH:EURC'])
  })

  it('bridge only: BAS USDC → POL USDC over CCTP fast and standard, Across and Stargate', () => {
    const result = routesFor('BAS:USDC', 'POL:USDC')
    expect(result.viable.map((p) => p.route.id).sort()).toEqual([
      'across-usdc:BAS>POL',
      'cctp-v2-fast:BAS>POL',
      'cctp-v2-standard:BAS>POL',
      'stargate-usdc-bus:BAS>POL',
      'stargate-usdc-taxi:BAS>POL',
    ])
    for (const p of result.viable) expect(shape(p)).toBe('0|bridge|0')
  })

  it('swap then bridge: ETH USDC → ARB USDT, swapping into USDT before a USDT lane', () => {
    const result = routesFor('ETH:USDC', 'ARB:USDT')
    const swapThenBridge = result.viable.filter((p) => shape(p) === '1|bridge|0')
    expect(swapThenBridge.length).toBeGreaterThan(0)
    for (const p of swapThenBridge) {
      expect(p.route.sourceSwaps[0]?.to.key).toBe('ETH:USDT')
      expect(p.route.bridge?.from.key).toBe('ETH:USDT')
      expect(p.route.bridge?.to.key).toBe('ARB:USDT')
    }
    expect(swapThenBridge.map((p) => p.route.bridge?.bridge.id)).toContain('usdt0-oft')
  })

  it('bridge then swap: ETH USDC → GNO EURe, arriving as USDC.e and swapped on Gnosis', () => {
    const result = routesFor('ETH:USDC', 'GNO:EURe')
    expect(result.viable.length).toBeGreaterThan(0)
    for (const p of result.viable) {
      expect(shape(p)).toBe('0|bridge|1')
      expect(p.route.bridge?.to.key).toBe('GNO:USDC.e')
      expect(p.route.destinationSwaps[0]?.venue.id).toBe('gno-balancer-eure-usdce')
    }
  })

  it('swap, bridge, swap: ETH USDT → GNO EURe, into USDC, over Stargate as USDC.e, then Balancer on Gnosis', () => {
    const result = routesFor('ETH:USDT', 'GNO:EURe')
    expect(result.viable.map((p) => p.route.id).sort()).toEqual([
      'eth-curve-3pool:USDT>USDC|stargate-usdc-taxi:ETH>GNO|gno-balancer-eure-usdce:USDC.e>EURe',
      'eth-univ3-usdc-usdt-100:USDT>USDC|stargate-usdc-taxi:ETH>GNO|gno-balancer-eure-usdce:USDC.e>EURe',
    ])
    expect(result.viable.map(shape)).toEqual(['1|bridge|1', '1|bridge|1'])
  })

  it('swap, bridge, two swaps: ARB USDC → CEL cKES is a route, but costs more than the fee (Mento alone takes 1.02%)', () => {
    const from = token('ARB:USDC')
    const result = findRoutes(catalogue, { from, to: token('CEL:cKES'), amountIn: units(from, 1000n), slippageE18: SLIPPAGE })
    expect(result).toMatchObject({
      kind: 'not_viable',
      rejected: [
        {
          routeId:
            'arb-univ3-usdt-usdc-100:USDC>USDT|usdt0-legacy-mesh:ARB>CEL|cel-mento-usdt-cusd:USDT>cUSD|cel-mento-cusd-ckes:cUSD>cKES',
          reason: 'cost_exceeds_fee',
        },
      ],
    })
  })

  it('answers no_route where no lane or venue joins the tokens', () => {
    const amountIn = 1_000_000_000n
    expect(findRoutes(catalogue, { from: token('ETH:RLUSD'), to: token('ETH:USDD'), amountIn, slippageE18: SLIPPAGE })).toEqual({
      kind: 'no_route',
    })
    expect(findRoutes(catalogue, { from: token('ETH:RLUSD'), to: token('ETH:USDC'), amountIn, slippageE18: SLIPPAGE }).kind).toBe(
      'no_route',
    )
  })
})

/** Every viable route of every pair of user-facing EVM tokens, for 1,000 units of the source token. */
function sweep(): { from: Token; to: Token; amountIn: bigint; toAmount: bigint; priced: PricedRoute }[] {
  const tokens = [...catalogue.tokens.values()].filter(isEvmToken).filter((t) => !t.isHub)
  const out: { from: Token; to: Token; amountIn: bigint; toAmount: bigint; priced: PricedRoute }[] = []
  for (const from of tokens)
    for (const to of tokens) {
      if (from.key === to.key) continue
      const amountIn = units(from, 1000n)
      const result = findRoutes(catalogue, { from, to, amountIn, slippageE18: SLIPPAGE })
      if (result.kind === 'routes')
        for (const priced of result.viable) out.push({ from, to, amountIn, toAmount: result.amounts.toAmount, priced })
    }
  return out
}

describe('findRoutes: what each priced route reports', () => {
  const all = sweep()

  it('covers thousands of routes of every shape', () => {
    expect(all.length).toBeGreaterThan(2000)
    expect(new Set(all.map(({ priced }) => shape(priced)))).toEqual(
      new Set([
        '1|-|0',
        '2|-|0',
        '0|bridge|0',
        '1|bridge|0',
        '2|bridge|0',
        '0|bridge|1',
        '0|bridge|2',
        '1|bridge|1',
        '1|bridge|2',
        '2|bridge|1',
      ]),
    )
  })

  it('itemises costs that add up to realCostUsdE18 exactly, and realCost + value(out) = value(in)', () => {
    for (const { from, to, amountIn, priced } of all) {
      const sum = priced.costs.reduce((total, item) => total + item.usdE18, 0n)
      expect(sum, priced.route.id).toBe(priced.realCostUsdE18)
      expect(priced.realCostUsdE18 + valueUsdE18(to, priced.amountOut), priced.route.id).toBe(valueUsdE18(from, amountIn))
    }
  })

  it('never offers a route that delivers less than toAmount or costs more than the 0.5% it earns', () => {
    for (const { from, to, amountIn, toAmount, priced } of all) {
      expect(priced.amountOut >= toAmount, priced.route.id).toBe(true)
      // value(toAmount) ≥ 0.995·value(in) − one unit of `to`; so real cost ≤ 0.5% + that unit (+1 for flooring).
      const oneUnitUsd = valueUsdE18(to, 1n) + 1n
      expect(priced.realCostUsdE18 * 10_000n <= valueUsdE18(from, amountIn) * 50n + (oneUnitUsd + 1n) * 10_000n, priced.route.id).toBe(true)
    }
  })

  it('chains its steps: each step takes what the previous delivered, from the input to the output', () => {
    for (const { from, to, amountIn, priced } of all) {
      const { steps } = priced
      const expectedKinds = [
        ...priced.route.sourceSwaps.map(() => 'swap'),
        ...(priced.route.bridge ? ['bridge'] : []),
        ...priced.route.destinationSwaps.map(() => 'swap'),
      ]
      expect(steps.map((s) => s.kind)).toEqual(expectedKinds)
      expect(steps[0]?.amountIn).toBe(amountIn)
      expect(steps[0]?.from.key).toBe(from.key)
      expect(steps.at(-1)?.amountOut).toBe(priced.amountOut)
      expect(steps.at(-1)?.to.key).toBe(to.key)
      for (let i = 1; i < steps.length; i += 1) {
        expect(steps[i]?.amountIn).toBe(steps[i - 1]?.amountOut)
        expect(steps[i]?.from.key).toBe(steps[i - 1]?.to.key)
      }
    }
  })

  it('estimates source gas above zero, a gas limit with margin, and p95 ≥ p50 > 0', () => {
    for (const { priced } of all) {
      expect(priced.sourceGasUnits > 21_000n, priced.route.id).toBe(true)
      expect(priced.sourceCostUsdE18 > 0n, priced.route.id).toBe(true)
      expect(priced.gasLimit >= (priced.sourceGasUnits * 130n) / 100n, priced.route.id).toBe(true)
      expect(priced.durationP50Sec).toBeGreaterThan(0)
      expect(priced.durationP95Sec).toBeGreaterThanOrEqual(priced.durationP50Sec)
    }
  })

  it('prices a bridged route by its lane: CCTP standard BAS → POL charges only destination gas', () => {
    const result = routesFor('BAS:USDC', 'POL:USDC')
    const standard = result.viable.find((p) => p.route.id === 'cctp-v2-standard:BAS>POL')
    expect(standard?.costs.map((c) => c.kind)).toEqual(['bridge_fee', 'destination_gas'])
    expect(standard?.costs[0]?.usdE18).toBe(0n)
    // Bridge step, then nothing else: the output is the input less the destination gas, in USDC units.
    const gas = standard?.costs[1]?.usdE18 ?? 0n
    expect(gas > 0n).toBe(true)
    expect(standard?.amountOut).toBe(1_000_000_000n - (gas * 10n ** 6n + 10n ** 18n - 1n) / 10n ** 18n)
  })
})

describe('findRoutes is deterministic', () => {
  it.each([
    ['ETH:USDC', 'GNO:EURe'],
    ['BAS:USDC', 'POL:USDC'],
    ['ARB:USDC', 'CEL:cKES'],
    ['POL:USDC', 'POL:ZARP'],
  ])('%s → %s: same call, same answer, even on a freshly loaded catalogue', (fromKey, toKey) => {
    const summary = (result: FindRoutesReturnType): unknown =>
      result.kind !== 'routes'
        ? result
        : {
            amounts: result.amounts,
            viable: result.viable.map((p) => [p.route.id, p.amountOut, p.realCostUsdE18, p.sourceCostUsdE18, p.durationP50Sec]),
            ranked: Object.fromEntries(Object.entries(result.ranked).map(([k, p]) => [k, p.route.id])),
            rejected: result.rejected,
          }
    const from = token(fromKey)
    const parameters = { from, to: token(toKey), amountIn: units(from, 1234n) + 5n, slippageE18: SLIPPAGE }
    const first = summary(findRoutes(catalogue, parameters))
    expect(summary(findRoutes(catalogue, parameters))).toEqual(first)
    const fresh = loadCatalogue(MANIFEST).catalogue
    const freshFrom = fresh.tokens.get(fromKey)
    const freshTo = fresh.tokens.get(toKey)
    if (!freshFrom || !freshTo || !isEvmToken(freshFrom) || !isEvmToken(freshTo)) throw new Error('fresh catalogue lost a token')
    expect(summary(findRoutes(fresh, { ...parameters, from: freshFrom, to: freshTo }))).toEqual(first)
  })
})

describe('tokens of discovery-only chains', () => {
  // Solana and Tron tokens are listed but never routed: the engine's Token is an EVM token, so findRoutes cannot be
  // handed one.
  it.each(['SOL:USDC', 'TRX:USDT-TRC20'])('%s is not an EVM token', (key) => {
    const listed = catalogue.tokens.get(key)
    expect(listed).toBeDefined()
    if (listed) expect(isEvmToken(listed)).toBe(false)
  })
})
