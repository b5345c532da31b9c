import pino from 'pino'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue, E18 } from '../../src/engine/index.ts'
import type { ChainReadPlan } from '../../src/market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { COMPOSE_MESSAGE_BYTES, readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createLiveMarket } from '../../src/market/liveMarket.ts'
import { snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { oftQuoteStandIns } from '../chain/oftQuoteStandIns.ts'
import { MANIFEST_DIR } from '../http/testApp.ts'

// LayerZero messaging fees read live (issue 17 item 2): stand-in OFTs at manifest/bridges.json's Ethereum addresses
// answer quoteSend, read through the real chain reader in the same multicall as the rest of the chain.

const { files } = loadCatalogue(MANIFEST_DIR)
const snapshot = compileCatalogue(files)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const eth = readPlanOf(feeds, 'ETH', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const TAXI = 'stargate-usdc-taxi'
const taxiToArb = eth.messagingFees?.find((lane) => lane.bridgeId === TAXI && lane.to === 'ARB')
const usd8 = (value: number): bigint => BigInt(Math.round(value * 1e8))

let chain: FeedStandIns & { stop(): Promise<void> }
const reader = () => createChainReader(createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) }))

beforeAll(async () => {
  chain = await startFeedStandIns()
  const balances = Object.fromEntries(
    (eth.pools ?? []).map((pool) => {
      const state = files.market.venues[pool.id]
      return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
    }),
  )
  await chain.placePlan(
    eth,
    { native: usd8(3000), 'fx:EUR': usd8(1.16), 'fx:GBP': usd8(1.3), 'fx:SGD': usd8(0.77) },
    balances,
    snapshotDepthPools(eth, snapshot),
    10n ** 14n,
  )
}, 120_000)

afterAll(async () => {
  await chain?.stop()
})

describe('quoteSend on anvil', () => {
  const lanesOnly = (): ChainReadPlan => ({ chain: 'ETH', feeds: [], messagingFees: eth.messagingFees ?? [] })

  it('reads every lane leaving the chain in the one multicall: the taxi’s fee, the bus’s for one zero byte of command', async () => {
    if (taxiToArb === undefined) throw new Error('no taxi lane to ARB')
    await oftQuoteStandIns(chain.anvil).setFee(taxiToArb.oft, taxiToArb.dstEid, 4n * 10n ** 14n)
    const reading = await reader()(lanesOnly())
    expect(reading.rpcCalls).toBe(3)
    const fee = (bridgeId: string, to: string) => reading.messagingFees.find((lane) => lane.bridgeId === bridgeId && lane.to === to)
    expect(fee(TAXI, 'ARB')).toEqual({ bridgeId: TAXI, to: 'ARB', ok: true, nativeFeeWei: 4n * 10n ** 14n })
    expect(fee(TAXI, 'OPT')).toMatchObject({ ok: true, nativeFeeWei: 10n ** 14n })
    // The stand-in charges the bus a tenth of the taxi: the reader sent the bus's command.
    expect(fee('stargate-usdc-bus', 'OPT')).toMatchObject({ ok: true, nativeFeeWei: 10n ** 13n })
    expect(reading.messagingFees).toHaveLength(eth.messagingFees?.length ?? -1)
  })

  it('quotes a lane with its compose too: the executor options and the message ride in the call, and the OFT prices them', async () => {
    if (taxiToArb === undefined) throw new Error('no taxi lane to ARB')
    const withCompose = readPlanOf(feeds, 'ETH', files.venues.venues, snapshot.tokens, files.bridges.bridges, snapshot.pricing)
    const lanes = (withCompose.messagingFees ?? []).filter((lane) => lane.bridgeId === TAXI && lane.to === 'ARB')
    expect(lanes.map((lane) => lane.compose === undefined)).toEqual([true, false])
    await oftQuoteStandIns(chain.anvil).setFee(taxiToArb.oft, taxiToArb.dstEid, 10n ** 14n)
    await oftQuoteStandIns(chain.anvil).setComposeFeePerByte(taxiToArb.oft, 10n ** 10n)
    const reading = await reader()({ chain: 'ETH', feeds: [], messagingFees: lanes })
    // The stand-in refuses a compose without executor options, and charges 10^10 wei per byte of the message.
    expect(reading.messagingFees).toEqual([
      { bridgeId: TAXI, to: 'ARB', ok: true, nativeFeeWei: 10n ** 14n },
      { bridgeId: TAXI, to: 'ARB', isCompose: true, ok: true, nativeFeeWei: 10n ** 14n + BigInt(COMPOSE_MESSAGE_BYTES) * 10n ** 10n },
    ])
    await oftQuoteStandIns(chain.anvil).setComposeFeePerByte(taxiToArb.oft, 0n)
  })

  it('an OFT that reverts is a failed lane with the reason', async () => {
    if (taxiToArb === undefined) throw new Error('no taxi lane to ARB')
    await oftQuoteStandIns(chain.anvil).setFailing(taxiToArb.oft, true)
    const [failed] = (await reader()(lanesOnly())).messagingFees.filter((lane) => lane.bridgeId === TAXI)
    expect(failed).toMatchObject({ ok: false, error: expect.stringMatching(/^stargate-usdc-taxi ETH → ARB .*StandInOftQuote: failing/) })
    await oftQuoteStandIns(chain.anvil).setFailing(taxiToArb.oft, false)
  })

  it('the live market charges each LayerZero lane its own quoteSend, at the native price; a lane whose quote fails is taken out', async () => {
    if (taxiToArb === undefined) throw new Error('no taxi lane to ARB')
    // 0.0004 ETH at 3,000 USD is 1.20 USD to Arbitrum; the other lanes ask 0.0001 ETH, 0.30 USD.
    await oftQuoteStandIns(chain.anvil).setFee(taxiToArb.oft, taxiToArb.dstEid, 4n * 10n ** 14n)
    const market = createLiveMarket({
      files,
      feeds,
      readers: { ETH: reader() },
      refreshMs: 4000,
      clock: Date.now,
      log: pino({ level: 'silent' }),
    })
    const laneFee = (bridgeId: string, lane: string) =>
      market
        .catalogue()
        .lanes.get(lane)
        ?.find((candidate) => candidate.bridge.id === bridgeId)?.messagingFeeUsdE18
    await market.refresh()
    expect(market.status().chains.find((status) => status.chain === 'ETH')?.error).toBeUndefined()
    expect(market.status().isDegraded).toBe(false)
    expect(laneFee(TAXI, 'ETH>ARB')).toBe((12n * E18) / 10n)
    expect(laneFee(TAXI, 'ETH>OPT')).toBe((3n * E18) / 10n)
    // The stand-in charges the bus a tenth of the taxi: 0.12 USD to Arbitrum.
    expect(laneFee('stargate-usdc-bus', 'ETH>ARB')).toBe((12n * E18) / 100n)
    await oftQuoteStandIns(chain.anvil).setFailing(taxiToArb.oft, true)
    await market.refresh()
    const lanes = ['ARB', 'OPT', 'POL', 'BAS', 'BNB', 'GNO']
    expect(market.status().chains.find((status) => status.chain === 'ETH')?.stale).toEqual([
      ...lanes.flatMap((to) => [`bridge:${TAXI}:ETH>${to}`, `bridge:${TAXI}:ETH>${to}:compose`]),
      // The bus rides the same pool (and carries no compose).
      ...lanes.map((to) => `bridge:stargate-usdc-bus:ETH>${to}`),
    ])
    expect(market.status().isDegraded).toBe(true)
    // Not priced from the snapshot's 0.30: not offered at all, with the reason.
    expect(laneFee(TAXI, 'ETH>ARB')).toBeUndefined()
    expect(market.catalogue().gaps?.lanes.get(`${TAXI}:ETH>ARB`)).toMatch(/quoteSend\(\) failed: .*StandInOftQuote: failing/)
    // CCTP and Across still carry USDC from Ethereum to Arbitrum.
    expect(
      market
        .catalogue()
        .lanes.get('ETH>ARB')
        ?.map((lane) => lane.bridge.id),
    ).toContain('cctp-v2-fast')
    await oftQuoteStandIns(chain.anvil).setFailing(taxiToArb.oft, false)
  })
})
