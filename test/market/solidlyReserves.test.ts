import pino from 'pino'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue, formatAtomic } from '../../src/engine/index.ts'
import { solidlyStableGetAmountOut } from '../../src/engine/solidlyStable.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createLiveMarket, type LiveMarket } from '../../src/market/liveMarket.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import type { Currency } from '../../src/schemas/catalogue.ts'
import { snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { type SolidlyPool, solidlyStandIns } from '../chain/solidlyStandIns.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// Solidly stable pools read live (issue 17 item 2): a stand-in router at Aerodrome's Router address on Base
// (manifest/venues.json) answers getReserves per pool, read through the real chain reader in the same multicall as
// the rest of the chain, and the live market prices the venue from the reserves at the block read.

const { files } = loadCatalogue(MANIFEST_DIR)
const snapshot = compileCatalogue(files)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const plan = readPlanOf(feeds, 'BAS', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const AERODROME = 'bas-aerodrome-usdc-dai'
const spec = plan.pools?.find((pool) => pool.id === AERODROME)
const POOL: SolidlyPool | undefined = spec?.solidly === undefined ? undefined : { address: spec.address, solidly: spec.solidly }
/** Each pool of the plan at its snapshot balances (manifest/market.json): the Aerodrome pool's are USDC then DAI. */
const snapshotBalances = Object.fromEntries(
  (plan.pools ?? []).map((pool) => {
    const state = files.market.venues[pool.id]
    return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
  }),
)
const [USDC_RESERVE = 0n, DAI_RESERVE = 0n] = snapshotBalances[AERODROME] ?? []
const usd8 = (value: string): bigint => BigInt(Math.round(Number(value) * 1e8))
/** Every feed of the plan at the snapshot's figure. */
const answers = Object.fromEntries(
  plan.feeds.map((feed) => [
    feed.id,
    usd8(feed.id === 'native' ? (files.market.chains.BAS?.nativeUsd ?? '0') : (files.market.fx[feed.id.slice(3) as Currency]?.usd ?? '0')),
  ]),
)
const usdcToDai = quoteBody({ fromChain: 'BAS', toChain: 'BAS', fromToken: 'USDC', toToken: 'DAI', fromAmount: '100000' })

/** What the Aerodrome USDC/DAI pool pays for 100,000 USDC in DAI at these reserves (manifest/venues.json: fee 500 ppm). */
function aerodromeUsdcToDai([usdc = 0n, dai = 0n]: readonly bigint[]): string {
  return formatAtomic(solidlyStableGetAmountOut({ reserves: [usdc, dai], decimals: [6, 18], feePpm: 500n }, 0, 100_000n * 10n ** 6n), 18)
}

let chain: FeedStandIns & { stop(): Promise<void> }
let market: LiveMarket
const reader = () => createChainReader(createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) }))
const pool = (): SolidlyPool => POOL ?? fail()

function fail(): never {
  throw new Error('the BAS plan reads no Aerodrome pool through its router')
}

beforeAll(async () => {
  chain = await startFeedStandIns()
  await chain.placePlan(plan, answers, snapshotBalances, snapshotDepthPools(plan, snapshot))
  // Refreshed by hand: a long interval keeps the last block fresh however slow the machine (Base's is 2 s).
  market = createLiveMarket({
    files,
    feeds,
    readers: { BAS: reader() },
    refreshMs: 60_000,
    clock: Date.now,
    log: pino({ level: 'silent' }),
  })
}, 120_000)

afterAll(async () => {
  await chain?.stop()
})

function app() {
  const deps = testDeps({ market, clock: Date.now })
  Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return createServer(deps)
}

async function quote(): Promise<QuoteResult> {
  const response = await postJson(app(), '/api/x402/quote', usdcToDai)
  expect(response.status).toBe(200)
  return QuoteResult.parse(await readJson(response))
}

const swaps = (quote: QuoteResult) => quote.route.steps.map((step) => (step.type === 'swap' ? [step.id, step.toAmount] : [step.type]))

describe('Solidly stable pools on anvil', () => {
  it('reads the reserves through the router in the multicall, in the venue’s token order whatever the pool’s', async () => {
    const [usdc, dai] = pool().solidly.tokens
    // Set the other way round: the stand-in keeps them in sorted-token order and answers in the order asked.
    await solidlyStandIns(chain.anvil).setReserves(pool(), [7n * 10n ** 24n, 6n * 10n ** 12n], [dai, usdc])
    const reading = await reader()(plan)
    expect(reading.rpcCalls).toBe(3)
    expect(reading.pools.find((read) => read.id === AERODROME)).toEqual({
      id: AERODROME,
      ok: true,
      balances: [6n * 10n ** 12n, 7n * 10n ** 24n],
    })
    // A factory with no such pool: the read fails, naming the venue and the router.
    const elsewhere = { ...plan, pools: [{ ...(spec ?? fail()), solidly: { ...pool().solidly, factory: pool().address } }] }
    expect((await reader()(elsewhere)).pools).toEqual([
      {
        id: AERODROME,
        ok: false,
        error: expect.stringMatching(new RegExp(`^${AERODROME} at ${pool().address}: getReserves\\(\\) failed: .*no such pool`)),
      },
    ])
    await solidlyStandIns(chain.anvil).setReserves(pool(), [USDC_RESERVE, DAI_RESERVE])
  })

  it('prices the venue from the reserves at the block read: moving them moves the next quote within one refresh', async () => {
    await market.refresh()
    expect(market.status().isDegraded).toBe(false)
    const first = await quote()
    expect(swaps(first)).toEqual([[AERODROME, aerodromeUsdcToDai([USDC_RESERVE, DAI_RESERVE])]])
    const block = market.status().chains.find((status) => status.chain === 'BAS')?.block
    expect(first.pricedOn).toEqual([{ chain: 'BAS', source: 'rpc', block, asOf: expect.any(String) }])
    const moved = [USDC_RESERVE, (DAI_RESERVE * 9n) / 10n]
    await solidlyStandIns(chain.anvil).setReserves(pool(), moved)
    await market.refresh()
    const after = await quote()
    expect(swaps(after)).toEqual([[AERODROME, aerodromeUsdcToDai(moved)]])
    expect(Number(swaps(after)[0]?.[1])).toBeLessThan(Number(swaps(first)[0]?.[1]))
    await solidlyStandIns(chain.anvil).setReserves(pool(), [USDC_RESERVE, DAI_RESERVE])
  })

  it('a router whose getReserves reverts makes the venue a gap: its routes are 503 naming it, health lists it', async () => {
    await solidlyStandIns(chain.anvil).setFailing(pool().address, true)
    await market.refresh()
    const refused = await postJson(app(), '/api/x402/quote', usdcToDai)
    expect(refused.status).toBe(503)
    const problem = await readJson(refused)
    expect(problem).toMatchObject({ code: 'market_unavailable', chains: [], currencies: [], venues: [AERODROME] })
    expect(problem['detail']).toContain('StandInSolidlyReserves: failing')
    const health = await readJson(await app().request('/api/v1/health'))
    expect(health).toMatchObject({ status: 'degraded' })
    expect((health['market'] as { chains: { chain: string }[] }).chains.find((c) => c.chain === 'BAS')).toMatchObject({
      stale: [`venue:${AERODROME}`],
    })
    await solidlyStandIns(chain.anvil).setFailing(pool().address, false)
    await market.refresh()
    expect(market.status().isDegraded).toBe(false)
    expect(swaps(await quote())).toEqual([[AERODROME, aerodromeUsdcToDai([USDC_RESERVE, DAI_RESERVE])]])
  })
})
