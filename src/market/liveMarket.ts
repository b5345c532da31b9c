import type { Logger } from 'pino'
import {
  type Catalogue,
  type CatalogueFiles,
  ceilDiv,
  compileCatalogue,
  E18,
  formatAtomic,
  type L1GasPrices,
  type PricedOn,
  parseFixed,
} from '../engine/index.ts'
import type { ChainCode, Currency } from '../schemas/catalogue.ts'
import type { AcrossLaneFees } from './acrossLaneFees.ts'
import type { ChainReading, ReadChain } from './chainReading.ts'
import { type FeedCatalogue, fxFeedId, NATIVE_FEED, oracleFeedId, readPlanOf } from './feedCatalogue.ts'
import { fxClosedSince, fxNextChangeMs } from './fxMarketHours.ts'

/** A feed's answer is usable for its heartbeat plus this share of it (DESIGN 5: heartbeat + 10%). */
const HEARTBEAT_MARGIN = 1.1
/** Venue state and gas are usable for this many refresh intervals. */
const STALE_AFTER_INTERVALS = 3
/** An oracle rate further than this factor from the snapshot's, either way, is not used (farFromSnapshotRate). */
const ORACLE_SNAPSHOT_FACTOR = 2n
/** A token price read live further than this factor from the snapshot's, either way, is not used (liveTokenRatios). */
const RATIO_SNAPSHOT_FACTOR = 2n
/** The health name of a rollup's L1 data fee, stale or unread. */
const L1_FEE = 'l1-fee'
/** After an L2 sequencer comes back up, its feeds and prices are not trusted for this long (Chainlink's advice). */
const SEQUENCER_GRACE_SEC = 3600

/** What health reports of one chain's market (DESIGN 5). */
export type ChainMarketStatus = {
  chain: ChainCode
  source: 'rpc' | 'snapshot'
  /** The block the chain's live figures were read at, and its age in seconds. */
  block?: string
  blockAgeSec?: number
  /**
   * The figures of this chain that are stale or unread, by name: gas, native/USD, sequencer, l1-fee (a rollup's L1
   * data fee), venue:<venue id> (a pool
   * or a depth venue), venue:<venue id>:<from>><to> (a depth venue's direction), bridge:<bridge id>:<from>><to> (a
   * LayerZero lane's messaging fee, or an Across lane's suggested fees), price:<symbol> (a token's price relative to
   * its currency, on the chain it is read on).
   */
  stale: string[]
  /**
   * Why, by name, for the stale figures whose reason is not told elsewhere: each direction of a depth venue left with
   * no point, as its ladder ended (its first quote failed, or a Mento trading limit leaves no room), and each token
   * price not used. A venue gap's reason is in a 503's detail.
   */
  reasons?: Record<string, string>
  /** The last read's error, when it failed. */
  error?: string
}

export type MarketStatus = {
  /** True when a configured chain or a live currency lacks a fresh figure: some routes are then not offered. */
  isDegraded: boolean
  /** True while FX markets are closed (FX feeds hold still): their last answer stays usable through the closure. */
  isFxMarketClosed: boolean
  chains: ChainMarketStatus[]
  /** Currencies priced live, each with the chain and block its rate came from, or why it is unavailable. */
  currencies: { currency: Currency; source: 'rpc' | 'snapshot'; chain?: ChainCode; block?: string; stale?: string }[]
}

/** The market the engine prices from: replaced atomically after every read (DESIGN 5). */
export type LiveMarket = {
  /** The current catalogue: the snapshot with every fresh live figure applied, and the stale ones as gaps. */
  catalogue(): Catalogue
  status(): MarketStatus
  /**
   * Reads every configured chain once, then recompiles; resolves when all reads have settled. Each chain's read begins
   * after the call: one the schedule had under way is waited out first, as it may predate what the caller changed. The
   * Across lanes' refresh under way is joined (a whole refresh of them takes minutes at the public API's rate).
   */
  refresh(): Promise<void>
  /** Refreshes each chain every max(SWAPEAZI_MARKET_REFRESH_MS, its block time), until stop(). */
  start(): void
  /** Stops refreshing; resolves once the Across lanes' store writes under way have ended (the store may then close). */
  stop(): Promise<void>
  /** The chains read live. */
  liveChains: readonly ChainCode[]
}

export type CreateLiveMarketParameters = {
  files: CatalogueFiles
  feeds: FeedCatalogue
  /** One reader per chain with an RPC URL (SWAPEAZI_RPC_URLS); the other chains keep the snapshot. */
  readers: Partial<Record<ChainCode, ReadChain>>
  refreshMs: number
  /** Milliseconds since the epoch. */
  clock: () => number
  log: Logger
  /** Each Across lane's suggested fees, read from Across's API (SWAPEAZI_ACROSS_API_URL); absent: the snapshot's. */
  across?: AcrossLaneFees
}

type ChainState = { reading?: ChainReading; error?: string }

/** One composition of the market: what it prices, what health says, and until when its figures are all as judged. */
type Composed = { catalogue: Catalogue; status: MarketStatus; validUntilMs: number }

/** One place a currency's USD rate is read (a Chainlink feed, or Mento's SortedOracles), and how old it may be. */
type RateSource = {
  chain: ChainCode
  /** The reading's id: `fx:EUR` (Chainlink) or `oracle:KES` (SortedOracles). */
  id: string
  /** For the rate's source: `Chainlink EUR/USD`. */
  name: string
  /** For a stale rate's reason: `feed`, `Mento SortedOracles KES/USD`. */
  shortName: string
  allowedSec: number
  /** The age limit, as the reason for a stale rate names it. */
  limit: string
  isCheckedAgainstSnapshot: boolean
}

/**
 * The `rpc` market source (DESIGN 5, issue 17): per configured chain, one multicall per refresh pinned to a block
 * reads the FX feeds, the native token's USD feed, the sequencer, gas, the balances of the balance-model pools
 * (Curve, Curve NG, PancakeSwap stable) and the depth venues' quotes at a ladder of sizes (QuoterV2, Balancer's
 * queryBatchSwap, Mento's Broker, within the trading limits its swapIn enforces); each figure is checked against its
 * maximum age (a feed: its heartbeat plus 10%; gas, pools, quotes and the chain's read: three refresh intervals). Fresh figures replace the snapshot's; a stale
 * one becomes a gap, so routes that need it are not offered and a request that needs it is 503 `market_unavailable`
 * (getQuote.ts). The reserves of Solidly stable pools are read through their router and priced as pool balances are;
 * each LayerZero lane's messaging fee is its own `quoteSend` (a lane whose quote fails is a gap, never the snapshot's
 * fee), and each Across lane is priced from Across's suggested fees when `across` is given (acrossLaneFees.ts: a lane
 * whose fees are unread, failed or too old is a gap). A rollup's L1 data fee is read in the same multicall
 * (GasPriceOracle or ArbGasInfo, for our largest transaction) and priced at the chain's native price; a failed read
 * makes the chain stale, as a failed native price does. On Arbitrum, which charges that fee as gas inside the gas
 * limit, ArbGasInfo's prices and minimum base fee also size the L1 part of every gas limit built there
 * (CatalogueFiles.l1GasPrices, src/engine/gas.ts). The prices of sUSDe (its vault) and PYUSD (its Curve pool's
 * EMA) are read on Ethereum; one not fresh takes out the venues and lanes that carry the token. CCTP's fast fee stays a
 * snapshot figure. The catalogue is recompiled off the request path and swapped in one assignment.
 */
export function createLiveMarket(parameters: CreateLiveMarketParameters): LiveMarket {
  const { files, feeds, readers, refreshMs, clock, log, across } = parameters
  const liveChains = Object.keys(readers) as ChainCode[]
  const states = new Map<ChainCode, ChainState>(liveChains.map((chain) => [chain, {}]))
  const timers = new Map<ChainCode, NodeJS.Timeout>()
  let isStopped = true

  const intervalMsOf = (chain: ChainCode): number => Math.max(refreshMs, (files.market.chains[chain]?.blockTimeSec ?? 1) * 1000)

  /**
   * What each live chain's refresh reads: its feeds, the balance-model pools of its venues and its depth venues'
   * quotes at the ladder of sizes (sized at the snapshot's prices).
   */
  const snapshotCatalogue = compileCatalogue(files)
  const plans = new Map(
    liveChains.map((chain) => [
      chain,
      readPlanOf(feeds, chain, files.venues.venues, snapshotCatalogue.tokens, files.bridges.bridges, snapshotCatalogue.pricing),
    ]),
  )
  /**
   * Venues on a live chain the plan cannot read, each with why: depth venues it cannot quote (no quoter for their
   * protocol, a token or parameter missing) and Solidly pools it cannot read (no factory or stable flag): gaps, never
   * the snapshot.
   */
  const unread = new Map(
    liveChains.map((chain) => {
      const plan = plans.get(chain)
      const read = new Set([...(plan?.ladders ?? []), ...(plan?.pools ?? [])].map((spec) => spec.id))
      const reasons: { id: string; why: string }[] = []
      for (const venue of files.venues.venues) {
        if (venue.chain !== chain || read.has(venue.id)) continue
        if (venue.model === 'depth')
          reasons.push({
            id: venue.id,
            why: `its depth cannot be read: no quoter for ${venue.protocol} on ${chain} in manifest/feeds.json, or a token or parameter its quote needs is missing`,
          })
        else if (venue.model === 'solidlyStable')
          reasons.push({
            id: venue.id,
            why: `its reserves cannot be read: its router's getReserves needs both tokens on ${chain} and the pool's factory and stable flag in manifest/venues.json params`,
          })
      }
      return [chain, reasons]
    }),
  )

  /**
   * Where `currency`'s USD rate is read on `chain`, each with how old its answer may be: Chainlink's feed (its
   * heartbeat plus 10%) and Mento's SortedOracles (feeds.json `maxAgeSec`), both widened through the FX closure.
   */
  function rateSourcesOf(chain: ChainCode, currency: Currency): RateSource[] {
    const entry = feeds.chains[chain]
    const chainlink = entry?.fx[currency]
    const oracle = entry?.mentoOracle?.fx[currency]
    const sources: RateSource[] = []
    if (chainlink !== undefined)
      sources.push({
        chain,
        id: fxFeedId(currency),
        name: `Chainlink ${currency}/USD`,
        shortName: 'feed',
        allowedSec: chainlink.heartbeatSec * HEARTBEAT_MARGIN,
        limit: `heartbeat ${chainlink.heartbeatSec} s`,
        isCheckedAgainstSnapshot: false,
      })
    if (oracle !== undefined)
      sources.push({
        chain,
        id: oracleFeedId(currency),
        name: `Mento SortedOracles ${currency}/USD`,
        shortName: `Mento SortedOracles ${currency}/USD`,
        allowedSec: oracle.maxAgeSec,
        limit: `max age ${oracle.maxAgeSec} s`,
        isCheckedAgainstSnapshot: true,
      })
    return sources
  }

  /**
   * Why an oracle's rate is not believed: more than ORACLE_SNAPSHOT_FACTOR times the snapshot's rate, or less than
   * its share. Which way round a SortedOracles rate feed quotes (USD per unit, or units per USD) is not checked on a
   * live chain (live-chain.md (d)); a rate upside down is off by orders of magnitude, and must not price a swap.
   */
  function farFromSnapshotRate(currency: Currency, answer: bigint, decimals: number): string | undefined {
    const snapshotE18 = snapshotCatalogue.fxUsdE18[currency]
    const answerE18 = answer * 10n ** BigInt(18 - decimals)
    if (snapshotE18 === undefined || snapshotE18 === 0n) return undefined
    if (answerE18 <= snapshotE18 * ORACLE_SNAPSHOT_FACTOR && answerE18 * ORACLE_SNAPSHOT_FACTOR >= snapshotE18) return undefined
    return `its rate ${formatAtomic(answerE18, 18)} USD is more than ${ORACLE_SNAPSHOT_FACTOR}× away from the snapshot's ${formatAtomic(snapshotE18, 18)}: check the rate feed id and which way round it quotes`
  }

  /**
   * Each LayerZero lane's messaging fee (what `send` must carry), as its own `quoteSend` asks at the block read on its
   * source chain, in USD at that chain's native price (market.json `bridgeFees`), without a compose and with one
   * (`composeMessagingFeeUsd`, for routes that swap on arrival; a failed one takes out only those, as
   * `bridge:<id>:<from>><to>:compose`). A lane whose quote failed on a chain
   * read fresh is a gap (`lanes`, named in health as `bridge:<id>:<from>><to>`): its routes are not offered, never
   * priced from the snapshot's fee. Lanes from chains not read live keep the bridge's snapshot figure; lanes from a
   * stale chain go with the chain.
   */
  function liveBridgeFees(
    market: CatalogueFiles['market'],
    chainGaps: ReadonlyMap<ChainCode, string>,
    laneGaps: Map<string, string>,
    chainStatuses: ChainMarketStatus[],
  ): NonNullable<CatalogueFiles['market']['bridgeFees']> {
    // Per-lane figures of the snapshot, if it has any, under the live ones.
    const fees: NonNullable<CatalogueFiles['market']['bridgeFees']> = Object.fromEntries(
      Object.entries(files.market.bridgeFees ?? {}).map(([id, lanes]) => [id, { ...lanes }]),
    )
    for (const chain of liveChains) {
      const reading = states.get(chain)?.reading
      const nativeUsd = market.chains[chain]?.nativeUsd
      if (reading === undefined || nativeUsd === undefined || chainGaps.has(chain)) continue
      for (const lane of plans.get(chain)?.messagingFees ?? []) {
        const isCompose = lane.compose !== undefined
        const laneKey = `${chain}>${lane.to}`
        const figure = `${lane.bridgeId}:${laneKey}${isCompose ? ':compose' : ''}`
        const read = reading.messagingFees.find(
          (candidate) => candidate.bridgeId === lane.bridgeId && candidate.to === lane.to && (candidate.isCompose === true) === isCompose,
        )
        if (read?.ok !== true) {
          laneGaps.set(
            figure,
            read === undefined
              ? `its messaging fee${isCompose ? ' with a compose' : ''} was not read at block ${reading.blockNumber}`
              : `its messaging fee${isCompose ? ' with a compose' : ''} could not be quoted at block ${reading.blockNumber}: ${read.error}`,
          )
          chainStatuses.find((status) => status.chain === chain)?.stale.push(`bridge:${figure}`)
          continue
        }
        // Wei (18 decimals) × USD per native token, rounded up: a fee is never understated.
        const usd = formatAtomic(ceilDiv(read.nativeFeeWei * parseFixed(nativeUsd), E18), 18)
        const lanes = fees[lane.bridgeId] ?? {}
        const known = lanes[laneKey]
        const at = `rpc ${chain} block ${reading.blockNumber}: quoteSend`
        if (!isCompose) lanes[laneKey] = { messagingFeeUsd: usd, source: `${at} ${read.nativeFeeWei} wei` }
        // The plan quotes a lane plain first, then with a compose; a lane whose plain quote failed is out anyway.
        else if (known?.source.startsWith(at))
          lanes[laneKey] = { ...known, composeMessagingFeeUsd: usd, source: `${known.source}, ${read.nativeFeeWei} wei with a compose` }
        fees[lane.bridgeId] = lanes
      }
    }
    return fees
  }

  /**
   * Each token price read live (feedCatalogue.ts TOKEN_RATIO_READS) as market.json `tokenPrices` has it, relative to
   * the token's currency: what one whole token is worth in its `of` token at the block read, times that token's own
   * ratio (sUSDe: the vault's USDe per share × USDe's ratio). A price whose chain is stale or unread, whose read failed,
   * or that is more than RATIO_SNAPSHOT_FACTOR away from the snapshot's is not used: it is returned by symbol with why,
   * and named in its chain's health as `price:<symbol>`. Tokens not read keep the snapshot's ratio.
   */
  function liveTokenRatios(
    market: CatalogueFiles['market'],
    chainGaps: ReadonlyMap<ChainCode, string>,
    chainStatuses: ChainMarketStatus[],
  ): Map<string, string> {
    const gaps = new Map<string, string>()
    for (const chain of liveChains) {
      const reading = states.get(chain)?.reading
      const status = chainStatuses.find((entry) => entry.chain === chain)
      for (const spec of plans.get(chain)?.tokenRatios ?? []) {
        const figure = `price:${spec.symbol}`
        // The chain's own staleness is told by the chain's gap: no reason of its own then, as for its venues.
        const gap = (why: string, isChainStale = false): void => {
          gaps.set(spec.symbol, why)
          if (status === undefined) return
          status.stale.push(figure)
          if (!isChainStale) status.reasons = { ...status.reasons, [figure]: why }
        }
        const read = reading?.tokenRatios?.find((candidate) => candidate.symbol === spec.symbol)
        const chainGap = chainGaps.get(chain)
        if (reading === undefined || chainGap !== undefined) gap(`${chain} is stale: ${chainGap ?? 'not read yet'}`, true)
        else if (read === undefined) gap(`it was not read at ${chain} block ${reading.blockNumber}`)
        else if (!read.ok) gap(`it could not be read at ${chain} block ${reading.blockNumber}: ${read.error}`)
        else if (gaps.has(spec.of)) gap(`it is priced in ${spec.of}, whose price is not fresh`)
        else {
          const ofRatio = market.tokenPrices[spec.of]?.ratio
          const ratioE18 = (read.valueE18 * (ofRatio === undefined ? E18 : parseFixed(ofRatio))) / E18
          const snapshot = files.market.tokenPrices[spec.symbol]?.ratio
          const snapshotE18 = snapshot === undefined ? undefined : parseFixed(snapshot)
          const read18 = formatAtomic(read.valueE18, 18)
          const by = spec.kind === 'erc4626' ? 'ERC-4626 convertToAssets' : 'Curve EMA price_oracle'
          if (
            snapshotE18 !== undefined &&
            (ratioE18 > snapshotE18 * RATIO_SNAPSHOT_FACTOR || ratioE18 * RATIO_SNAPSHOT_FACTOR < snapshotE18)
          )
            gap(
              `its price read at ${chain} block ${reading.blockNumber}, ${formatAtomic(ratioE18, 18)} (${by} ${read18} ${spec.of}), is more than ${RATIO_SNAPSHOT_FACTOR}× away from the snapshot's ${snapshot}: check the contract and what it answers`,
            )
          else
            market.tokenPrices[spec.symbol] = {
              ratio: formatAtomic(ratioE18, 18),
              source: `rpc ${chain} block ${reading.blockNumber}: ${by} ${read18} ${spec.of}${ofRatio === undefined ? '' : ` × ${spec.of}'s ${ofRatio}`}`,
            }
        }
      }
    }
    return gaps
  }

  /**
   * Takes out every venue and bridge lane that carries a token whose live price is not fresh (liveTokenRatios), each
   * with why, unless it is out already: its routes are not offered, and a request only they serve is 503.
   */
  function gapTokenRatios(ratioGaps: ReadonlyMap<string, string>, venueGaps: Map<string, string>, laneGaps: Map<string, string>): void {
    for (const [symbol, why] of ratioGaps) {
      const reason = `the price of ${symbol} is not fresh: ${why}`
      for (const venue of snapshotCatalogue.venues)
        if (venue.tokens.some((token) => token.symbol === symbol) && !venueGaps.has(venue.id)) venueGaps.set(venue.id, reason)
      for (const lanes of snapshotCatalogue.lanes.values())
        for (const lane of lanes) {
          const id = `${lane.bridge.id}:${lane.from.chain}>${lane.to.chain}`
          if ((lane.from.symbol === symbol || lane.to.symbol === symbol) && !laneGaps.has(id)) laneGaps.set(id, reason)
        }
    }
  }

  /** Live venue states the catalogue could not take, by venue: the state's source (its block) and why. */
  const unpriceable = new Map<string, { source: string; why: string }>()

  let current = compose()

  function compose(): Composed {
    const nowMs = clock()
    const nowSec = Math.floor(nowMs / 1000)
    const closedSince = fxClosedSince(nowMs)
    /**
     * The first second at which a figure used now goes stale (or a sequencer's grace ends, or FX markets close or
     * reopen): the market is composed again then, whether or not a read has finished (a hung RPC must not keep it).
     */
    let validUntilSec = Math.floor(fxNextChangeMs(nowMs) / 1000)
    const changesAt = (sec: number): void => {
      const at = Math.floor(sec) + 1
      if (at < validUntilSec) validUntilSec = Math.max(at, nowSec + 1)
    }
    const market = {
      ...files.market,
      chains: { ...files.market.chains },
      fx: { ...files.market.fx },
      tokenPrices: { ...files.market.tokenPrices },
      venues: { ...files.market.venues },
    }
    /** An Arbitrum-style chain's L1 data prices read, which size the L1 part of its gas limits (src/engine/gas.ts). */
    const l1GasPrices: Partial<Record<ChainCode, L1GasPrices>> = {}
    const chainGaps = new Map<ChainCode, string>()
    const currencyGaps = new Map<Currency, string>()
    const venueGaps = new Map<string, string>()
    const laneGaps = new Map<string, string>()
    const chainStatuses: ChainMarketStatus[] = []

    for (const chain of liveChains) {
      const state = states.get(chain)
      const reading = state?.reading
      const stale: string[] = []
      const reasons: Record<string, string> = {}
      const gap = (figure: string, why: string): void => {
        stale.push(figure)
        if (!chainGaps.has(chain)) chainGaps.set(chain, why)
      }
      const venueGap = (id: string, why: string): void => {
        stale.push(`venue:${id}`)
        venueGaps.set(id, why)
      }
      const pools = plans.get(chain)?.pools ?? []
      const ladders = plans.get(chain)?.ladders ?? []
      for (const { id, why } of unread.get(chain) ?? []) venueGap(id, why)
      const maxAgeSec = (STALE_AFTER_INTERVALS * intervalMsOf(chain)) / 1000
      const blockAgeSec = reading === undefined ? undefined : Math.max(0, nowSec - reading.blockTimestamp)
      if (reading === undefined || blockAgeSec === undefined) {
        gap('gas', `not read yet${state?.error === undefined ? '' : ` (${state.error})`}`)
        for (const pool of pools) venueGap(pool.id, `its pool has not been read on ${chain}`)
        for (const ladder of ladders) venueGap(ladder.id, `its quotes have not been read on ${chain}`)
      } else if (blockAgeSec > maxAgeSec) {
        gap('gas', `last read at block ${reading.blockNumber}, ${blockAgeSec} s ago (at most ${maxAgeSec} s)`)
        for (const pool of pools) venueGap(pool.id, `its pool was last read at block ${reading.blockNumber}, ${blockAgeSec} s ago`)
        for (const ladder of ladders) venueGap(ladder.id, `its quotes were last read at block ${reading.blockNumber}, ${blockAgeSec} s ago`)
      } else {
        changesAt(reading.blockTimestamp + maxAgeSec)
        for (const pool of pools) {
          const read = reading.pools.find((candidate) => candidate.id === pool.id)
          if (read === undefined) venueGap(pool.id, `its pool was not read at block ${reading.blockNumber}`)
          else if (!read.ok) venueGap(pool.id, `its pool could not be read at block ${reading.blockNumber}: ${read.error}`)
          else
            market.venues[pool.id] = {
              balances: read.balances.map(String),
              source: `rpc ${chain} block ${reading.blockNumber}${pool.solidly === undefined ? '' : ': Router.getReserves'}`,
            }
        }
        for (const ladder of ladders) {
          const read = reading.ladders.find((candidate) => candidate.id === ladder.id)
          const quoted = (read?.directions ?? []).filter((direction) => direction.points.length > 0)
          const ends = (read?.directions ?? []).flatMap((direction) => (direction.end === undefined ? [] : [direction.end]))
          if (read === undefined) venueGap(ladder.id, `its quotes were not read at block ${reading.blockNumber}`)
          // Never priced as if unlimited: a Mento venue whose trading limits could not be read is a gap.
          else if (read.error !== undefined) venueGap(ladder.id, `it could not be read at block ${reading.blockNumber}: ${read.error}`)
          else if (quoted.length === 0)
            venueGap(ladder.id, `no size could be quoted at block ${reading.blockNumber} (${ladder.quotedBy}): ${ends.join('; ')}`)
          else {
            // A direction with no point is not offered (the engine lists only the directions quoted): health names it.
            for (const direction of read.directions) {
              if (direction.points.length > 0) continue
              const figure = `venue:${ladder.id}:${direction.from}>${direction.to}`
              stale.push(figure)
              if (direction.end !== undefined) reasons[figure] = direction.end
            }
            market.venues[ladder.id] = {
              ladder: quoted.map((direction) => ({
                from: direction.from,
                to: direction.to,
                points: direction.points.map(([amountIn, amountOut]): [string, string] => [String(amountIn), String(amountOut)]),
              })),
              source: `rpc ${chain} block ${reading.blockNumber}: ${ladder.quotedBy}`,
            }
          }
        }
        const snapshot = market.chains[chain]
        if (snapshot !== undefined) {
          const gasPriceWei = reading.gas.baseFeePerGas + reading.gas.priorityFeePerGas
          market.chains[chain] = {
            ...snapshot,
            gasPriceGwei: formatAtomic(gasPriceWei, 9),
            source: `rpc ${chain} block ${reading.blockNumber}`,
          }
        }
        if (reading.sequencer !== undefined && !reading.sequencer.isUp) gap('sequencer', 'the L2 sequencer is down')
        else if (reading.sequencer !== undefined && nowSec - reading.sequencer.since < SEQUENCER_GRACE_SEC) {
          changesAt(reading.sequencer.since + SEQUENCER_GRACE_SEC - 1)
          gap('sequencer', `the L2 sequencer came back up ${nowSec - reading.sequencer.since} s ago (grace ${SEQUENCER_GRACE_SEC} s)`)
        }
        const native = reading.feeds.find((feed) => feed.id === NATIVE_FEED)
        const nativeSpec = feeds.chains[chain]?.native
        if (native === undefined || nativeSpec === undefined) gap('native/USD', 'no native price feed is configured')
        else if (!native.ok) gap('native/USD', `the native price feed failed: ${native.error}`)
        else if (nowSec - native.updatedAt > nativeSpec.heartbeatSec * HEARTBEAT_MARGIN)
          gap(
            'native/USD',
            `the native price feed was last updated ${nowSec - native.updatedAt} s ago (heartbeat ${nativeSpec.heartbeatSec} s)`,
          )
        else {
          changesAt(native.updatedAt + nativeSpec.heartbeatSec * HEARTBEAT_MARGIN)
          if (snapshot !== undefined)
            market.chains[chain] = { ...(market.chains[chain] ?? snapshot), nativeUsd: formatAtomic(native.answer, native.decimals) }
        }
        const l1Fee = plans.get(chain)?.l1Fee
        const live = market.chains[chain]
        if (l1Fee !== undefined) {
          const read = reading.l1Fee
          if (read === undefined) gap(L1_FEE, `the L1 data fee was not read at block ${reading.blockNumber}`)
          else if (!read.ok) gap(L1_FEE, `the L1 data fee could not be read at block ${reading.blockNumber}: ${read.error}`)
          // Arbitrum charges the fee as gas inside the limit: without its prices no limit could be sized from the read.
          else if (l1Fee.kind === 'arbGasInfo' && read.arbitrum === undefined)
            gap(L1_FEE, `the L1 gas prices were not read at block ${reading.blockNumber}`)
          else if (live !== undefined) {
            if (read.arbitrum !== undefined)
              l1GasPrices[chain] = {
                perTxWei: read.arbitrum.perL2TxWei,
                perByteWei: read.arbitrum.perL1CalldataByteWei,
                minBaseFeeWei: read.arbitrum.minBaseFeeWei,
              }
            market.chains[chain] = {
              ...live,
              // Wei (18 decimals) × USD per native token, rounded up: a cost is never understated.
              l1FeeUsd: formatAtomic(ceilDiv(read.feeWei * parseFixed(live.nativeUsd), E18), 18),
              source: `${live.source}; L1 data fee ${read.feeWei} wei for ${l1Fee.txBytes} bytes (${l1Fee.kind === 'arbGasInfo' ? 'ArbGasInfo.getPricesInWei' : 'GasPriceOracle.getL1FeeUpperBound'})`,
            }
          }
        }
      }
      chainStatuses.push({
        chain,
        source: 'rpc',
        ...(reading === undefined || blockAgeSec === undefined ? {} : { block: reading.blockNumber.toString(), blockAgeSec }),
        stale,
        ...(Object.keys(reasons).length === 0 ? {} : { reasons }),
        ...(state?.error === undefined ? {} : { error: state.error }),
      })
    }
    for (const chain of files.chains.chains.map((entry) => entry.id))
      if (!states.has(chain) && files.market.chains[chain] !== undefined) chainStatuses.push({ chain, source: 'snapshot', stale: [] })

    const currencies: MarketStatus['currencies'] = []
    const fxNotes = new Map<Currency, string>()
    for (const currency of Object.keys(files.market.fx) as Currency[]) {
      const spec = liveChains.flatMap((chain) => rateSourcesOf(chain, currency))
      if (spec.length === 0) {
        currencies.push({ currency, source: 'snapshot' })
        continue
      }
      let best: { chain: ChainCode; block: bigint; answer: bigint; decimals: number; updatedAt: number; name: string } | undefined
      const why: string[] = []
      for (const { chain, id, name, shortName, allowedSec, limit, isCheckedAgainstSnapshot } of spec) {
        const reading = states.get(chain)?.reading
        const read = [...(reading?.feeds ?? []), ...(reading?.oracles ?? [])].find((candidate) => candidate.id === id)
        const chainStale = chainStatuses.find((status) => status.chain === chain)?.stale ?? []
        if (reading === undefined || read === undefined) why.push(`${chain} not read`)
        // A chain whose read is too old, or whose sequencer is not trusted, vouches for none of its figures.
        else if (chainStale.includes('gas') || chainStale.includes('sequencer')) why.push(`${chain} stale: ${chainGaps.get(chain)}`)
        else if (!read.ok) why.push(`${chain} ${shortName} failed: ${read.error}`)
        else {
          // FX feeds hold still while FX markets are closed: the last answer before the close stays usable.
          const closureSec = closedSince === undefined ? 0 : (nowMs - closedSince) / 1000
          const ageSec = nowSec - read.updatedAt
          const farFromSnapshot = isCheckedAgainstSnapshot ? farFromSnapshotRate(currency, read.answer, read.decimals) : undefined
          if (ageSec > allowedSec + closureSec) why.push(`${chain} ${shortName} last updated ${ageSec} s ago (${limit})`)
          else if (farFromSnapshot !== undefined) why.push(`${chain} ${shortName}: ${farFromSnapshot}`)
          else if (best === undefined || read.updatedAt > best.updatedAt) {
            // Through a closure the allowance grows with it: the figure is re-checked when markets reopen.
            if (closedSince === undefined) changesAt(read.updatedAt + allowedSec)
            best = { chain, block: reading.blockNumber, answer: read.answer, decimals: read.decimals, updatedAt: read.updatedAt, name }
          }
        }
      }
      if (best === undefined) {
        const reason = `no fresh ${currency}/USD feed (${why.join('; ')})`
        currencyGaps.set(currency, reason)
        currencies.push({ currency, source: 'rpc', stale: reason })
        continue
      }
      market.fx[currency] = {
        usd: formatAtomic(best.answer, best.decimals),
        source: `rpc ${best.chain} block ${best.block}: ${best.name}`,
      }
      currencies.push({ currency, source: 'rpc', chain: best.chain, block: best.block.toString() })
      if (closedSince !== undefined)
        fxNotes.set(
          currency,
          `FX markets are closed since ${new Date(closedSince).toISOString()}: the ${currency}/USD rate is the feed's last answer (updated ${new Date(best.updatedAt * 1000).toISOString()}), held through the closure; the amounts may differ when FX markets reopen (Sunday about 22:00 UTC).`,
        )
    }

    const ratioGaps = liveTokenRatios(market, chainGaps, chainStatuses)
    const bridgeFees = liveBridgeFees(market, chainGaps, laneGaps, chainStatuses)
    across?.apply({ nowMs, bridgeFees, laneGaps, chainStatuses, changesAt })
    gapTokenRatios(ratioGaps, venueGaps, laneGaps)
    const liveFiles = { ...files, market: { ...market, bridgeFees }, l1GasPrices }
    const ungapped = compileOrGapPools(liveFiles, venueGaps, chainStatuses)
    const hasGaps = chainGaps.size > 0 || currencyGaps.size > 0 || venueGaps.size > 0 || laneGaps.size > 0
    const catalogue = hasGaps
      ? compileCatalogue(liveFiles, { chains: chainGaps, currencies: currencyGaps, venues: venueGaps, lanes: laneGaps, ungapped })
      : ungapped
    const pricedOn = new Map<ChainCode, PricedOn>()
    for (const chain of files.chains.chains.map((entry) => entry.id)) {
      const reading = states.get(chain)?.reading
      pricedOn.set(
        chain,
        reading === undefined || chainGaps.has(chain)
          ? { source: 'snapshot', asOf: files.market.asOf }
          : { source: 'rpc', block: reading.blockNumber, asOf: new Date(reading.blockTimestamp * 1000).toISOString() },
      )
    }
    catalogue.pricedOn = pricedOn
    if (fxNotes.size > 0) catalogue.fxNotes = fxNotes
    return {
      catalogue,
      validUntilMs: validUntilSec * 1000,
      // A figure read but not used (a depth venue's direction, a bridge lane's fee) degrades the market too.
      status: {
        isDegraded: hasGaps || chainStatuses.some((status) => status.stale.length > 0),
        isFxMarketClosed: closedSince !== undefined,
        chains: chainStatuses,
        currencies,
      },
    }
  }

  /**
   * The catalogue of the live figures. A venue state read live that the catalogue cannot take (balances so lopsided
   * the StableSwap invariant does not converge; a quote ladder the engine refuses) would fail the whole compile: then
   * each live venue state is tried alone over the snapshot, and those that fail go back to their snapshot state as
   * gaps, so only their routes are not offered.
   */
  function compileOrGapPools(liveFiles: CatalogueFiles, venueGaps: Map<string, string>, chainStatuses: ChainMarketStatus[]): Catalogue {
    try {
      return compileCatalogue(liveFiles)
    } catch {
      const venues = liveFiles.market.venues
      for (const [id, state] of Object.entries(venues)) {
        const snapshot = files.market.venues[id]
        if (snapshot === undefined || state === snapshot) continue
        // The same state from the same block was already found unpriceable: no second compile, no second warning.
        const known = unpriceable.get(id)
        let why = known?.source === state.source ? known.why : undefined
        if (why === undefined)
          try {
            compileCatalogue({ ...files, market: { ...files.market, venues: { ...files.market.venues, [id]: state } } })
          } catch (error) {
            why = `its state as read cannot be priced (${error instanceof Error ? error.message : String(error)})`
            unpriceable.set(id, { source: state.source, why })
            log.warn({ event: 'market_pool_unpriced', venue: id, err: why }, 'market_pool_unpriced')
          }
        if (why === undefined) continue
        venues[id] = snapshot
        venueGaps.set(id, why)
        const chain = files.venues.venues.find((entry) => entry.id === id)?.chain
        chainStatuses.find((entry) => entry.chain === chain)?.stale.push(`venue:${id}`)
      }
      return compileCatalogue(liveFiles)
    }
  }

  /**
   * The market as of now: composed again, off any read, once a figure it uses has outlived its maximum age, so a
   * read that hangs cannot keep stale figures in use past their age; otherwise the last composition (memory only).
   */
  function currentNow(): Composed {
    if (clock() < current.validUntilMs) return current
    const wasDegraded = current.status.isDegraded
    try {
      current = compose()
    } catch (error) {
      // Cannot happen with readings compose() already accepted; should it, the stale figures must still go.
      log.error({ event: 'market_compose_failed', err: error instanceof Error ? error.message : String(error) }, 'market_compose_failed')
      for (const state of states.values()) delete state.reading
      current = compose()
    }
    logDegradation(wasDegraded)
    return current
  }

  function logDegradation(wasDegraded: boolean): void {
    if (current.status.isDegraded === wasDegraded) return
    log[current.status.isDegraded ? 'warn' : 'info'](
      { event: 'market_state', degraded: current.status.isDegraded, chains: current.status.chains },
      current.status.isDegraded ? 'market degraded: routes needing stale figures are not offered' : 'market fresh again',
    )
  }

  /** Composes again once the Across fees were read: they are applied at each composition. */
  function recompose(): void {
    const wasDegraded = current.status.isDegraded
    try {
      current = compose()
    } catch (error) {
      log.error({ event: 'market_compose_failed', err: error instanceof Error ? error.message : String(error) }, 'market_compose_failed')
    }
    logDegradation(wasDegraded)
  }

  const inFlight = new Map<ChainCode, Promise<void>>()

  /** Reads `chain`, or joins the read already under way (the schedule's ticks never read a chain twice at once). */
  function readChain(chain: ChainCode): Promise<void> {
    const running = inFlight.get(chain)
    if (running !== undefined) return running
    const read = readChainOnce(chain).finally(() => inFlight.delete(chain))
    inFlight.set(chain, read)
    return read
  }

  /** A read of `chain` that began after this call: one under way is waited out first (its failure is its own). */
  function readChainAfresh(chain: ChainCode): Promise<void> {
    const running = inFlight.get(chain)
    return running === undefined ? readChain(chain) : running.catch(() => undefined).then(() => readChain(chain))
  }

  async function readChainOnce(chain: ChainCode): Promise<void> {
    const state = states.get(chain)
    const reader = readers[chain]
    const plan = plans.get(chain)
    if (state === undefined || reader === undefined || plan === undefined) return
    try {
      state.reading = await reader(plan)
      delete state.error
    } catch (error) {
      state.error = error instanceof Error ? error.message : String(error)
      log.warn({ event: 'market_read_failed', chain, err: state.error }, 'market_read_failed')
    }
    const wasDegraded = current.status.isDegraded
    try {
      current = compose()
    } catch (error) {
      // A reading the market cannot use must not freeze it or crash the process: drop it, keep the last market,
      // and let the chain go stale by the freshness rules.
      delete state.reading
      state.error = `the read could not be applied: ${error instanceof Error ? error.message : String(error)}`
      log.error({ event: 'market_compose_failed', chain, err: state.error }, 'market_compose_failed')
      try {
        current = compose()
      } catch (again) {
        // The figure at fault came from another chain: drop every reading; the snapshot-and-gaps market composes.
        for (const other of states.values()) delete other.reading
        log.error({ event: 'market_compose_failed', err: again instanceof Error ? again.message : String(again) }, 'market_compose_failed')
        current = compose()
      }
    }
    logDegradation(wasDegraded)
  }

  function schedule(chain: ChainCode): void {
    if (isStopped) return
    const timer = setTimeout(() => {
      readChain(chain)
        .catch((error: unknown) => {
          // Never an unhandled rejection (it would end the process): the chain goes stale by the freshness rules.
          log.error(
            { event: 'market_refresh_failed', chain, err: error instanceof Error ? error.message : String(error) },
            'market_refresh_failed',
          )
        })
        .finally(() => schedule(chain))
    }, intervalMsOf(chain))
    timer.unref()
    timers.set(chain, timer)
  }

  return {
    liveChains,
    catalogue: () => currentNow().catalogue,
    status: () => currentNow().status,
    async refresh() {
      await Promise.all([...liveChains.map(readChainAfresh), ...(across === undefined ? [] : [across.refresh().then(recompose)])])
    },
    start() {
      if (!isStopped) return
      isStopped = false
      for (const chain of liveChains) schedule(chain)
      across?.start(recompose)
    },
    async stop() {
      isStopped = true
      for (const timer of timers.values()) clearTimeout(timer)
      timers.clear()
      await across?.stop()
    },
  }
}
