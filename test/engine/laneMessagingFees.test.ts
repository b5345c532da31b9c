import { describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { CatalogueError, compileCatalogue, E18, findRoutes, isEvmToken } from '../../src/engine/index.ts'
import { MarketFile } from '../../src/schemas/catalogue.ts'

// A bridge lane's own messaging fee (market.json bridgeFees): what the live market writes from each LayerZero lane's
// quoteSend, compiled onto the lane and charged by simulateRoute to routes over it.

const { files } = loadCatalogue(new URL('../../manifest', import.meta.url).pathname)
const TAXI = 'stargate-usdc-taxi'

const withLaneFees = (bridgeFees: Record<string, Record<string, { messagingFeeUsd: string; source: string }>>) => ({
  ...files,
  market: MarketFile.parse({ ...files.market, bridgeFees }),
})
const laneOf = (catalogue: ReturnType<typeof compileCatalogue>, bridgeId: string, lane: string) =>
  catalogue.lanes.get(lane)?.find((candidate) => candidate.bridge.id === bridgeId)

describe('per-lane messaging fees', () => {
  it('without bridgeFees (the snapshot), every lane carries its bridge’s figure', () => {
    const catalogue = compileCatalogue(files)
    for (const lanes of catalogue.lanes.values())
      for (const lane of lanes) expect(lane.messagingFeeUsdE18).toBe(lane.bridge.messagingFeeUsdE18)
  })

  it('a lane named in bridgeFees carries its own fee, the bridge’s other lanes the bridge’s, and routes over it are charged it', () => {
    const catalogue = compileCatalogue(withLaneFees({ [TAXI]: { 'ETH>ARB': { messagingFeeUsd: '1.5', source: 'test' } } }))
    expect(laneOf(catalogue, TAXI, 'ETH>ARB')?.messagingFeeUsdE18).toBe((15n * E18) / 10n)
    expect(laneOf(catalogue, TAXI, 'ETH>OPT')?.messagingFeeUsdE18).toBe((3n * E18) / 10n)
    expect(catalogue.bridges.find((bridge) => bridge.id === TAXI)?.messagingFeeUsdE18).toBe((3n * E18) / 10n)
    const token = (key: string) => {
      const token = catalogue.tokens.get(key)
      if (token === undefined || !isEvmToken(token)) throw new Error(`no ${key}`)
      return token
    }
    const found = findRoutes(catalogue, {
      from: token('ETH:USDC'),
      to: token('ARB:USDC'),
      amountIn: 10_000n * 10n ** 6n,
      slippageE18: 5n * 10n ** 15n,
    })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const taxi = found.viable.find((priced) => priced.route.bridge?.bridge.id === TAXI && priced.route.sourceSwaps.length === 0)
    const plain = compileCatalogue(files)
    const before = findRoutes(plain, {
      from: token('ETH:USDC'),
      to: token('ARB:USDC'),
      amountIn: 10_000n * 10n ** 6n,
      slippageE18: 5n * 10n ** 15n,
    })
    if (before.kind !== 'routes') throw new Error(before.kind)
    const taxiBefore = before.viable.find((priced) => priced.route.bridge?.bridge.id === TAXI && priced.route.sourceSwaps.length === 0)
    expect(taxi?.messagingFeeUsdE18).toBe((15n * E18) / 10n)
    // The USD 1.20 more the lane asks is USD 1.20 more of the signer's source-chain cost.
    expect((taxi?.sourceCostUsdE18 ?? 0n) - (taxiBefore?.sourceCostUsdE18 ?? 0n)).toBe((12n * E18) / 10n)
  })

  it('a fee for a lane no bridge has stops the compile, naming it', () => {
    expect(() => compileCatalogue(withLaneFees({ [TAXI]: { 'ETH>CEL': { messagingFeeUsd: '1', source: 'test' } } }))).toThrow(
      new CatalogueError('market', `bridgeFees.${TAXI}.ETH>CEL`, `no lane ETH>CEL of a bridge ${TAXI}`),
    )
    expect(() =>
      MarketFile.parse({ ...files.market, bridgeFees: { [TAXI]: { 'ETH-ARB': { messagingFeeUsd: '1', source: 'test' } } } }),
    ).toThrow(/a lane is SRC>DST/)
  })

  it('a lane in the gaps is not offered; the bridge’s other lanes are', () => {
    const ungapped = compileCatalogue(files)
    const catalogue = compileCatalogue(files, {
      chains: new Map(),
      currencies: new Map(),
      venues: new Map(),
      lanes: new Map([[`${TAXI}:ETH>ARB`, 'its messaging fee could not be quoted']]),
      ungapped,
    })
    expect(laneOf(catalogue, TAXI, 'ETH>ARB')).toBeUndefined()
    expect(laneOf(catalogue, TAXI, 'ARB>ETH')).toBeDefined()
    expect(laneOf(catalogue, 'stargate-usdc-bus', 'ETH>ARB')).toBeDefined()
  })
})
