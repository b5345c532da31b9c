import { createPublicClient, decodeFunctionData, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue, type Venue } from '../../src/engine/index.ts'
import type { ChainReadPlan, LadderSpec } from '../../src/market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { LADDER_USD, readPlanOf } from '../../src/market/feedCatalogue.ts'
import { batchSwapCall } from '../../src/tx/abis.ts'
import { encodeBalancerBatchSwap } from '../../src/tx/encodeBalancerBatchSwap.ts'
import { type DepthStandIns, depthStandIns } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { MANIFEST_DIR } from '../http/testApp.ts'

// The chain reader's depth-venue ladders (issue 17 item 2) against stand-ins on anvil at the catalogue's own
// addresses: Ethereum's QuoterV2 (manifest/feeds.json), Gnosis's Balancer Vault and Celo's Mento Broker
// (manifest/venues.json), each answering from constant-product pools the test sets.

const { files } = loadCatalogue(MANIFEST_DIR)
const snapshot = compileCatalogue(files)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
/** The chain's plan with its depth venues only (no feeds, pools or sequencer to place). */
const laddersOn = (chain: 'ETH' | 'GNO' | 'CEL', ids?: readonly string[]): ChainReadPlan => {
  const ladders = (readPlanOf(feeds, chain, files.venues.venues, snapshot.tokens).ladders ?? []).filter(
    (ladder) => ids === undefined || ids.includes(ladder.id),
  )
  return { chain, feeds: [], ladders }
}
const ladderOf = (plan: ChainReadPlan, id: string): LadderSpec => {
  const found = plan.ladders?.find((ladder) => ladder.id === id)
  if (found === undefined) throw new Error(`${id} is not in the plan`)
  return found
}

/** The stand-ins' constant product: the fee (ppm) off the input, floored at each step as Solidity does. */
const constantProduct = (reserveIn: bigint, reserveOut: bigint, feePpm: bigint, amountIn: bigint): bigint => {
  const net = (amountIn * (1_000_000n - feePpm)) / 1_000_000n
  return (reserveOut * net) / (reserveIn + net)
}
const e6 = (whole: bigint): bigint => whole * 10n ** 6n
const e18 = (whole: bigint): bigint => whole * 10n ** 18n

let chain: FeedStandIns & { stop(): Promise<void> }
let depth: DepthStandIns
let read: ReturnType<typeof createChainReader>

beforeAll(async () => {
  chain = await startFeedStandIns()
  depth = depthStandIns(chain.anvil)
  read = createChainReader(createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) }))
})

afterAll(async () => {
  await chain?.stop()
})

describe('the plan of a chain’s depth venues', () => {
  it('quotes every depth venue of the catalogue on a chain with a quoter, both ways, at USD 100 to 10,000,000', () => {
    const depthVenues = files.venues.venues.filter((venue) => venue.model === 'depth')
    const planned = (['ETH', 'POL', 'ARB', 'OPT', 'BAS', 'BNB', 'GNO', 'CEL'] as const).flatMap((code) =>
      (readPlanOf(feeds, code, files.venues.venues, snapshot.tokens).ladders ?? []).map((ladder) => ladder.id),
    )
    expect(planned.sort()).toEqual(depthVenues.map((venue) => venue.id).sort())
    const cusdCkes = ladderOf(laddersOn('CEL'), 'cel-mento-cusd-ckes')
    expect(cusdCkes.quotedBy).toBe('Broker.getAmountOut')
    expect(cusdCkes.directions.map((direction) => `${direction.from}>${direction.to}`)).toEqual(['cUSD>cKES', 'cKES>cUSD'])
    // cKES at the snapshot's KES rate: USD 100 is 100 / rate cKES, rounded down.
    const kesUsdE18 = snapshot.tokens.get('CEL:cKES')?.priceUsdE18 ?? 1n
    expect(cusdCkes.directions[1]?.amountsIn).toEqual(LADDER_USD.map((usd) => (usd * 10n ** 36n) / kesUsdE18))
    // Without the snapshot's tokens (nothing to size the ladder with) no ladder is planned.
    expect(readPlanOf(feeds, 'CEL', files.venues.venues).ladders).toBeUndefined()
  })

  it('asks the Balancer Vault for the same two-step path, in the same asset order, as the swap builder sends', () => {
    for (const id of ['gno-balancer-eure-usdce', 'gno-balancer-gbpe-usdce']) {
      const venue = snapshot.venues.find((candidate) => candidate.id === id) as Venue
      for (const direction of ladderOf(laddersOn('GNO'), id).directions) {
        const i = venue.tokens.findIndex((token) => token.symbol === direction.from)
        const [from, to] = [venue.tokens[i], venue.tokens[1 - i]]
        if (from === undefined || to === undefined) throw new Error('no tokens')
        const built = encodeBalancerBatchSwap({
          edge: { venue, i, j: 1 - i, from, to },
          amountIn: 1n,
          minOut: 0n,
          recipient: '0x0000000000000000000000000000000000000001',
          deadlineSec: 1n,
        })
        const { args } = decodeFunctionData({ abi: batchSwapCall.abi, data: built.data })
        const [, swaps, assets] = args as unknown as [number, { poolId: string }[], string[]]
        expect(direction.quote).toMatchObject({ kind: 'balancerQuery', vault: venue.contract })
        if (direction.quote.kind !== 'balancerQuery') continue
        expect(direction.quote.poolIds).toEqual(swaps.map((swap) => swap.poolId))
        expect(direction.quote.assets).toEqual(assets)
      }
    }
  })
})

describe('createChainReader: depth venues quoted at a ladder of sizes', () => {
  const USDC_USDT = 'eth-univ3-usdc-usdt-100'

  it('reads a QuoterV2 ladder both ways in the one multicall, each point what the pool pays at that size', async () => {
    const plan = laddersOn('ETH', [USDC_USDT])
    const reserves = [e6(30_000_000n), e6(29_000_000n)] as const
    await depth.placeLadders(plan, { [USDC_USDT]: { reserves, feePpm: 100 } })
    const reading = await read(plan)
    expect(reading.rpcCalls).toBe(3)
    const [usdcToUsdt, usdtToUsdc] = reading.ladders[0]?.directions ?? []
    const sizes = LADDER_USD.map(e6)
    expect(usdcToUsdt).toEqual({
      from: 'USDC',
      to: 'USDT',
      points: sizes.map((size) => [size, constantProduct(reserves[0], reserves[1], 100n, size)]),
    })
    expect(usdtToUsdc?.points).toEqual(sizes.map((size) => [size, constantProduct(reserves[1], reserves[0], 100n, size)]))
  })

  it('ends a QuoterV2 ladder at the size whose quote reached the price limit: the pool ran out', async () => {
    const plan = laddersOn('ETH', [USDC_USDT])
    const reserves = [e6(30_000_000n), e6(29_000_000n)] as const
    // 150,000 USDT can be paid out: the USD 1,000,000 size runs out (the other way, 150,000 USDC).
    await depth.placeLadders(plan, { [USDC_USDT]: { reserves, available: [e6(150_000n), e6(150_000n)], feePpm: 100 } })
    const [usdcToUsdt, usdtToUsdc] = (await read(plan)).ladders[0]?.directions ?? []
    expect(usdcToUsdt?.points.map(([size]) => size)).toEqual(LADDER_USD.slice(0, 4).map(e6))
    expect(usdcToUsdt?.end).toBe(`USDC → USDT at ${e6(1_000_000n)}: the pool ran out of liquidity (the quote reached the price limit)`)
    // Selling token1 the limit is the other end of the price range.
    expect(usdtToUsdc?.points).toHaveLength(4)
    expect(usdtToUsdc?.end).toContain('the pool ran out of liquidity')
  })

  it('a quoter that reverts leaves no point, with its reason', async () => {
    const plan = laddersOn('ETH', [USDC_USDT])
    const quoter = plan.ladders?.[0]?.directions[0]?.quote
    if (quoter?.kind !== 'quoterV2') throw new Error('not a quoter')
    await depth.placeLadders(plan, { [USDC_USDT]: { reserves: [e6(1_000n), e6(1_000n)], feePpm: 100 } })
    await depth.setFailing(quoter.quoter, 'StandInQuoterV2', true)
    const [usdcToUsdt] = (await read(plan)).ladders[0]?.directions ?? []
    expect(usdcToUsdt?.points).toEqual([])
    expect(usdcToUsdt?.end).toMatch(/^USDC → USDT at 100000000: the quote failed: .*StandInQuoterV2: failing/)
    await depth.setFailing(quoter.quoter, 'StandInQuoterV2', false)
  })

  it('reads Balancer’s two-step query through the hub: the output is what the second pool pays for the first’s', async () => {
    const id = 'gno-balancer-eure-usdce'
    const plan = laddersOn('GNO', [id])
    const hub = e18(5_000_000n)
    // USDC.e → EURe: first the hub pool (USDC.e, sDAI), then the EURe pool (sDAI, EURe v1).
    const pool = { reserves: [e6(1_160_000n), e18(1_000_000n)] as const, feePpm: 2_500 }
    await depth.placeLadders(plan, { [id]: pool }, hub)
    const [usdceToEure, eureToUsdce] = (await read(plan)).ladders[0]?.directions ?? []
    const throughHub = (size: bigint): bigint =>
      constantProduct(hub, pool.reserves[1], 0n, constantProduct(pool.reserves[0], hub, 2_500n, size))
    expect(usdceToEure?.from).toBe('USDC.e')
    expect(usdceToEure?.points).toEqual(LADDER_USD.map(e6).map((size) => [size, throughHub(size)]))
    expect(eureToUsdce?.points.length).toBe(LADDER_USD.length)
  })

  it('reads Mento’s Broker, and a size the exchange cannot pay ends the ladder at the one below', async () => {
    const id = 'cel-mento-usdt-cusd'
    const plan = laddersOn('CEL', [id])
    // 50,000 cUSD can be paid out: the USD 100,000 size reverts.
    const pool = {
      reserves: [e6(20_000_000n), e18(20_000_000n)] as const,
      available: [e6(20_000_000n), e18(50_000n)] as const,
      feePpm: 200,
    }
    await depth.placeLadders(plan, { [id]: pool })
    const [usdtToCusd] = (await read(plan)).ladders[0]?.directions ?? []
    expect(usdtToCusd?.points).toEqual(
      LADDER_USD.slice(0, 3)
        .map(e6)
        .map((size) => [size, constantProduct(pool.reserves[0], pool.reserves[1], 200n, size)]),
    )
    expect(usdtToCusd?.end).toMatch(/^USDT → cUSD at 100000000000: the quote failed: .*exceeds the bucket/)
  })

  it('ends a ladder at a size that pays no more than the one below', async () => {
    const id = 'cel-mento-usdt-cusd'
    const plan = laddersOn('CEL', [id])
    // 3 atomic units of cUSD: every size pays 2 (the constant product rounds down), so only the first is a point.
    await depth.placeLadders(plan, { [id]: { reserves: [e6(1n), 3n], feePpm: 0 } })
    const [usdtToCusd] = (await read(plan)).ladders[0]?.directions ?? []
    expect(usdtToCusd?.points).toEqual([[e6(100n), 2n]])
    expect(usdtToCusd?.end).toBe(`USDT → cUSD at ${e6(1_000n)}: the quote paid 2, not more than 2 for the size below`)
  })
})

describe('createChainReader: Mento’s trading limits end its ladders', () => {
  const id = 'cel-mento-usdt-cusd'
  const pool = { reserves: [e6(20_000_000n), e18(20_000_000n)] as const, feePpm: 0 }
  const NO_LIMIT = { timestep0: 0, timestep1: 0, limit0: 0n, limit1: 0n, limitGlobal: 0n, flags: 0 }
  const NO_FLOW = { lastUpdated0: 0, lastUpdated1: 0, netflow0: 0n, netflow1: 0n, netflowGlobal: 0n }
  const limitsOf = (plan: ChainReadPlan) => {
    const limits = ladderOf(plan, id).tradingLimits
    if (limits === undefined) throw new Error('no trading limits planned')
    const [usdt, cusd] = limits.tokens
    if (usdt === undefined || cusd === undefined) throw new Error('no tokens')
    return { ...limits, usdt, cusd }
  }
  const unlimit = async (plan: ChainReadPlan): Promise<void> => {
    const limits = limitsOf(plan)
    for (const token of [limits.usdt, limits.cusd])
      await depth.setTradingLimit(limits.broker, limits.exchangeId, token.address, NO_LIMIT, NO_FLOW)
    await depth.setTradingLimitsFailing(limits.broker, false)
  }

  it('plans the config and state of both tokens of every Mento venue, and of no other venue', () => {
    const plan = laddersOn('CEL')
    for (const ladder of plan.ladders ?? []) {
      const [quote] = ladder.directions.map((direction) => direction.quote)
      if (quote?.kind !== 'mentoBroker') throw new Error('not Mento')
      expect(ladder.tradingLimits).toEqual({
        broker: quote.broker,
        exchangeId: quote.exchangeId,
        tokens: [quote.tokenIn, quote.tokenOut].map((address) => ({
          symbol: expect.any(String),
          address,
          decimals: expect.any(Number),
        })),
      })
    }
    expect(laddersOn('ETH').ladders?.every((ladder) => ladder.tradingLimits === undefined)).toBe(true)
  })

  it('reads them in the same multicall and ends each direction at what the Broker would accept from the block read', async () => {
    const plan = laddersOn('CEL', [id])
    await depth.placeLadders(plan, { [id]: pool })
    const limits = limitsOf(plan)
    const { timestamp } = await chain.latestBlock()
    // cUSD: 5,000 a 5-minute window, 2,000 of it out already; USDT: 30,000 for ever, 29,000.4 in already.
    await depth.setTradingLimit(
      limits.broker,
      limits.exchangeId,
      limits.cusd.address,
      { ...NO_LIMIT, timestep0: 300, limit0: 5_000n, flags: 1 },
      { ...NO_FLOW, lastUpdated0: timestamp, netflow0: -2_000n },
    )
    await depth.setTradingLimit(
      limits.broker,
      limits.exchangeId,
      limits.usdt.address,
      { ...NO_LIMIT, limitGlobal: 30_000n, flags: 4 },
      { ...NO_FLOW, netflowGlobal: 29_000n },
    )
    const reading = await read(plan)
    expect(reading.rpcCalls).toBe(3)
    const [usdtToCusd, cusdToUsdt] = reading.ladders[0]?.directions ?? []
    const quoted = (size: bigint, reserves: readonly [bigint, bigint]) => constantProduct(reserves[0], reserves[1], 0n, size)
    // USDT in: 1,000 whole USDT of LG left (USDT 1,000.999999 counts as 1,000); cUSD out: 3,000 of L0 left, more.
    const maxIn = e6(1_001n) - 1n
    expect(usdtToCusd?.points).toEqual([
      [e6(100n), quoted(e6(100n), pool.reserves)],
      [e6(1_000n), quoted(e6(1_000n), pool.reserves)],
      [
        maxIn,
        quoted(e6(1_000n), pool.reserves) +
          ((quoted(e6(10_000n), pool.reserves) - quoted(e6(1_000n), pool.reserves)) * (maxIn - e6(1_000n))) / e6(9_000n),
      ],
    ])
    expect(usdtToCusd?.end).toBe(
      `USDT → cUSD above ${maxIn}: Mento's trading limit would refuse it (USDT's LG leaves 1000 whole USDT to flow in)`,
    )
    // cUSD in: the netflow of -2,000 is not counted on (the window may restart); USDT out: 1,000 + 29,000 of LG.
    const reversed = [pool.reserves[1], pool.reserves[0]] as const
    expect(cusdToUsdt?.points.map(([size]) => size)).toEqual([e18(100n), e18(1_000n), e18(5_001n) - 1n])
    expect(cusdToUsdt?.points.at(-1)?.[1]).toBeLessThan(quoted(e18(10_000n), reversed))
    expect(cusdToUsdt?.end).toContain("(cUSD's L0 leaves 5000 whole cUSD to flow in)")
    await unlimit(plan)
  })

  it('a direction with no whole token left has no point, and the reason says the trading limit', async () => {
    const plan = laddersOn('CEL', [id])
    await depth.placeLadders(plan, { [id]: pool })
    const limits = limitsOf(plan)
    const { timestamp } = await chain.latestBlock()
    await depth.setTradingLimit(
      limits.broker,
      limits.exchangeId,
      limits.cusd.address,
      { ...NO_LIMIT, timestep0: 300, limit0: 5_000n, flags: 1 },
      { ...NO_FLOW, lastUpdated0: timestamp, netflow0: -5_000n },
    )
    const [usdtToCusd, cusdToUsdt] = (await read(plan)).ladders[0]?.directions ?? []
    expect(usdtToCusd).toEqual({
      from: 'USDT',
      to: 'cUSD',
      points: [],
      end: "USDT → cUSD: Mento's trading limit leaves no room (cUSD's L0 leaves 0 whole cUSD to flow out)",
    })
    expect(cusdToUsdt?.points).toHaveLength(3)
    await unlimit(plan)
  })

  it('limits that cannot be read leave the venue no point, with the reason as its error: never quoted as unlimited', async () => {
    const plan = laddersOn('CEL', [id])
    await depth.placeLadders(plan, { [id]: pool })
    const limits = limitsOf(plan)
    await depth.setTradingLimitsFailing(limits.broker, true)
    const [ladder] = (await read(plan)).ladders
    expect(ladder?.error).toMatch(
      new RegExp(
        `^the trading limits of USDT \\(limit id 0x[0-9a-f]{64}\\) at the Broker ${limits.broker}: tradingLimitsConfig\\(\\) failed: .*MentoTradingLimitsBook: failing`,
      ),
    )
    expect(ladder?.directions.map((direction) => direction.points)).toEqual([[], []])
    await unlimit(plan)
    expect((await read(plan)).ladders[0]?.directions.map((direction) => direction.points.length)).toEqual([6, 6])
  })
})
