import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { candidateRoutes } from '../../src/engine/candidateRoutes.ts'
import { checkViability } from '../../src/engine/checkViability.ts'
import { compileCatalogue, E18, findRoutes, isEvmToken, viableRange } from '../../src/engine/index.ts'
import { simulateRoute } from '../../src/engine/simulateRoute.ts'
import type { Catalogue, Token } from '../../src/engine/types.ts'
import { type LaneFees, MarketFile } from '../../src/schemas/catalogue.ts'

// A lane's own proportional fee, flat fee, destination gas and deposit limits (market.json bridgeFees): what the live
// market writes from each Across lane's suggested fees, used by simulateRoute and checkViability in place of the
// bridge's figures.

const { files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const ACROSS = 'across-usdc'
const LANE = 'ETH>OPT'

const withLane = (fees: LaneFees): Catalogue =>
  compileCatalogue({ ...files, market: MarketFile.parse({ ...files.market, bridgeFees: { [ACROSS]: { [LANE]: fees } } }) })

function token(catalogue: Catalogue, key: string): Token {
  const found = catalogue.tokens.get(key)
  if (found === undefined || !isEvmToken(found)) throw new Error(`no token ${key}`)
  return found
}

/** The route that bridges ETH USDC to OPT USDC over Across alone, priced for `amountIn`. */
function acrossAlone(catalogue: Catalogue, amountIn: bigint) {
  const route = candidateRoutes(catalogue, token(catalogue, 'ETH:USDC'), token(catalogue, 'OPT:USDC')).find(
    (candidate) => candidate.id === `${ACROSS}:${LANE}`,
  )
  if (route === undefined) throw new Error('no Across route ETH>OPT')
  return simulateRoute(catalogue, route, amountIn)
}

const cost = (priced: ReturnType<typeof acrossAlone>, kind: string) => priced.costs.find((item) => item.kind === kind)?.usdE18

describe("a lane's own fees", () => {
  const snapshot = compileCatalogue(files)
  const amountIn = 10_000n * 10n ** 6n

  it('without them the bridge’s figures price the lane, as before (2 bp, no flat fee, the fill’s destination gas)', () => {
    const priced = acrossAlone(snapshot, amountIn)
    expect(cost(priced, 'bridge_fee')).toBe(2n * E18) // 200 ppm of USD 10,000
    expect(cost(priced, 'bridge_fixed_fee')).toBeUndefined()
    expect(cost(priced, 'destination_gas')).toBeGreaterThan(0n)
    const lane = snapshot.lanes.get(LANE)?.find((candidate) => candidate.bridge.id === ACROSS)
    expect(lane?.feePpm).toBeUndefined()
    expect(lane?.feeQuotedBy).toBeUndefined()
  })

  it('with them, the lane is charged its own proportional and flat fee, and no fill gas on top when it says 0', () => {
    const catalogue = withLane({ feePpm: 350, fixedFeeUsd: '0.42', destinationGasUnits: 0, quotedBy: 'across', source: 'test' })
    const priced = acrossAlone(catalogue, amountIn)
    expect(cost(priced, 'bridge_fee')).toBe((35n * E18) / 10n) // 350 ppm of USD 10,000
    expect(cost(priced, 'bridge_fixed_fee')).toBe((42n * E18) / 100n)
    expect(cost(priced, 'destination_gas')).toBeUndefined()
    const bridge = priced.steps.find((step) => step.kind === 'bridge')
    // 10,000 USDC less 3.50 and 0.42, in OPT USDC (same decimals).
    expect(bridge?.amountOut).toBe(amountIn - 3_500_000n - 420_000n)
    expect(catalogue.lanes.get(LANE)?.find((candidate) => candidate.bridge.id === ACROSS)?.feeQuotedBy).toBe('across')
    // The bridge's other lanes keep its figures.
    const other = catalogue.lanes.get('ETH>ARB')?.find((candidate) => candidate.bridge.id === ACROSS)
    expect(other?.feePpm).toBeUndefined()
  })

  it('a lane that names only some figures keeps the bridge’s for the rest', () => {
    const priced = acrossAlone(withLane({ feePpm: 1000, source: 'test' }), amountIn)
    expect(cost(priced, 'bridge_fee')).toBe(10n * E18)
    expect(cost(priced, 'destination_gas')).toBe(cost(acrossAlone(snapshot, amountIn), 'destination_gas'))
  })

  it('refuses a bridged amount outside the lane’s deposit limits, and the viable range ends at them', () => {
    const catalogue = withLane({ minAmount: '5000000', maxAmount: '20000000000', source: 'test' })
    const toAmount = (priced: ReturnType<typeof acrossAlone>) => priced.amountOut // what it delivers, so only limits refuse
    const at = (amount: bigint) => {
      const priced = acrossAlone(catalogue, amount)
      return checkViability(priced, toAmount(priced))
    }
    expect(at(20_000n * 10n ** 6n)).toBeUndefined()
    expect(at(20_000n * 10n ** 6n + 1n)).toBe('above_bridge_maximum')
    expect(at(5_000_000n)).toBeUndefined()
    expect(at(4_999_999n)).toBe('below_bridge_minimum')
    // With the fee the build keeps back (50 bps at most), the minimum binds the deposit it makes, not the input.
    const withFee = (amount: bigint) => {
      const priced = acrossAlone(catalogue, amount)
      return checkViability(priced, toAmount(priced), 50n)
    }
    expect(withFee(5_000_000n)).toBe('below_bridge_minimum')
    expect(withFee(5_025_125n)).toBe('below_bridge_minimum') // 5,025,125 × 0.995 = 4,999,999.4
    expect(withFee(5_025_126n)).toBeUndefined() // 5,025,126 × 0.995 = 5,000,000.4
    // Without the lane's limits the bridge's USD 2,000,000 is the only cap.
    const plain = acrossAlone(snapshot, 20_000n * 10n ** 6n + 1n)
    expect(checkViability(plain, plain.amountOut)).toBeUndefined()
  })

  it('a request only that lane serves is refused above its maximum as above_bridge_maximum', () => {
    // USDC from Ethereum to BNB Chain: Across and Stargate carry it; with Stargate's lanes capped too, only limits bind.
    const catalogue = compileCatalogue({
      ...files,
      market: MarketFile.parse({
        ...files.market,
        bridgeFees: Object.fromEntries(
          files.bridges.bridges
            .filter((bridge) => bridge.endpoints.some((e) => e.chain === 'ETH') && bridge.endpoints.some((e) => e.chain === 'BNB'))
            .map((bridge) => [bridge.id, { 'ETH>BNB': { maxAmount: '50000000000', source: 'test' } }]),
        ),
      }),
    })
    const from = token(catalogue, 'ETH:USDC')
    const to = token(catalogue, 'BNB:USDC')
    const found = findRoutes(catalogue, { from, to, amountIn: 60_000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
    expect(found.kind).toBe('not_viable')
    if (found.kind !== 'not_viable') return
    expect(found.rejected.map((rejection) => rejection.reason)).toContain('above_bridge_maximum')
    // A route that swaps first bridges a little less than it takes in: its input may exceed the cap by the swap's cost.
    const maxIn = viableRange(catalogue, from, to)?.maxIn ?? 0n
    expect(maxIn).toBeGreaterThanOrEqual(49_900n * 10n ** 6n)
    expect(maxIn).toBeLessThanOrEqual(50_100n * 10n ** 6n)
    expect(findRoutes(catalogue, { from, to, amountIn: 40_000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n }).kind).toBe('routes')
  })

  it('a lane whose minimum is above its maximum, or a compose fee without a plain one, is refused by the schema', () => {
    expect(() => withLane({ minAmount: '2', maxAmount: '1', source: 'test' })).toThrow(/minAmount must not be more than maxAmount/)
    expect(() => withLane({ composeMessagingFeeUsd: '1', source: 'test' })).toThrow(/composeMessagingFeeUsd needs messagingFeeUsd/)
  })
})
