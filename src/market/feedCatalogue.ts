import { type Address, encodePacked, type Hex, isAddress, isHex, pad } from 'viem'
import * as z from 'zod'
import { type Catalogue, type CatalogueToken, E18, isEvmToken, L1_FEE_TX_BYTES, type Token, withGasMargin } from '../engine/index.ts'
import { AddressSchema } from '../schemas/address.ts'
import { type BridgeEntry, ChainCode, Currency, type VenueEntry } from '../schemas/catalogue.ts'
import type {
  ChainReadPlan,
  FeedSpec,
  L1FeeSpec,
  LadderDirection,
  LadderQuote,
  LadderSpec,
  MessagingFeeSpec,
  OracleSpec,
  PoolSpec,
  TokenRatioSpec,
} from './chainReading.ts'

const Feed = z.strictObject({ address: AddressSchema, heartbeatSec: z.number().int().positive() })

/** `manifest/feeds.json`: the on-chain feeds the live market reads per chain (live-chain.md (d)). */
export const FeedCatalogue = z.strictObject({
  source: z.string().min(3),
  chains: z.partialRecord(
    ChainCode,
    z.strictObject({
      /** USD per the chain's native token, for gas in USD. */
      native: Feed,
      /** Chainlink's L2 sequencer-uptime feed, where the chain has one. */
      sequencerUptime: AddressSchema.optional(),
      /** USD per one unit of each currency. */
      fx: z.partialRecord(Currency, Feed),
      /**
       * The QuoterV2 that quotes each concentrated-liquidity protocol's depth venues on this chain (routing.md 4.1);
       * a depth venue of a protocol with none here is not read, and is a gap on a live chain.
       */
      quoters: z.partialRecord(z.enum(['uniswap-v3', 'pancakeswap-v3']), AddressSchema).optional(),
      /**
       * Mento's SortedOracles (Celo): USD per one unit of each currency listed, by rate feed id, for currencies with
       * no usable Chainlink feed; each with its own maximum age in seconds.
       */
      mentoOracle: z
        .strictObject({
          address: AddressSchema,
          fx: z.partialRecord(Currency, z.strictObject({ rateFeedId: AddressSchema, maxAgeSec: z.number().int().positive() })),
        })
        .optional(),
    }),
  ),
})
export type FeedCatalogue = z.infer<typeof FeedCatalogue>

/** The feed id of a chain's native token price. */
export const NATIVE_FEED = 'native'

/** The feed id of a currency's USD rate. */
export const fxFeedId = (currency: Currency): string => `fx:${currency}`

/** The id of a currency's USD rate from Mento's SortedOracles. */
export const oracleFeedId = (currency: Currency): string => `oracle:${currency}`

/**
 * The protocols whose `stableswap` venues are priced from balances the venue's `contract` answers with
 * `balances(uint256)` (live-chain.md (e)). Solidly stable pools (`solidlyStable` venues) are read through the router
 * the catalogue names (solidlyPoolOf).
 */
const BALANCE_READ_PROTOCOLS: ReadonlySet<string> = new Set(['curve', 'curve-ng', 'pancakeswap-stable'])

/**
 * The sizes, in USD, at which each direction of a depth venue is quoted: a decade apart from 100 to 10,000,000, each
 * turned into the input token's atomic units at the snapshot's prices. The engine interpolates linearly between them
 * (from zero to the first), so a quote's error is that of a straight line over a decade of the curve, and refuses
 * any amount above the largest size the venue answered.
 */
export const LADDER_USD: readonly bigint[] = [100n, 1_000n, 10_000n, 100_000n, 1_000_000n, 10_000_000n]

/** The OP-stack GasPriceOracle predeploy (routing.md 5.2; not checked against a live chain). */
const GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F'
/** Arbitrum's ArbGasInfo precompile (not checked against a live chain). */
const ARB_GAS_INFO = '0x000000000000000000000000000000000000006C'

/** The rollups whose L1 data fee is read live, and how: Base, Optimism and Celo are OP stack (routing.md 5.2 and 3.4). */
export const L1_FEE_ORACLES: Readonly<Partial<Record<ChainCode, L1FeeSpec>>> = {
  BAS: { kind: 'opStackGasPriceOracle', address: GAS_PRICE_ORACLE, txBytes: L1_FEE_TX_BYTES },
  OPT: { kind: 'opStackGasPriceOracle', address: GAS_PRICE_ORACLE, txBytes: L1_FEE_TX_BYTES },
  CEL: { kind: 'opStackGasPriceOracle', address: GAS_PRICE_ORACLE, txBytes: L1_FEE_TX_BYTES },
  ARB: { kind: 'arbGasInfo', address: ARB_GAS_INFO, txBytes: L1_FEE_TX_BYTES },
}

/**
 * The token prices (market.json `tokenPrices`) read live, where and from what: sUSDe from its ERC-4626 vault on
 * Ethereum (the sUSDe token itself), in USDe; PYUSD from the EMA of the Curve PYUSD/USDC pool on Ethereum, in USDC.
 * USDe is not read: the only pool the catalogue knows for it, Curve's USDe/USDC, is one Curve names as having the
 * stableswap-ng oracle bug that lets its `price_oracle` jump where the coins' decimals differ (18 and 6 here).
 */
export const TOKEN_RATIO_READS: Readonly<
  Record<string, { chain: ChainCode } & ({ kind: 'erc4626'; of: string } | { kind: 'curveEma'; venue: string })>
> = {
  sUSDe: { chain: 'ETH', kind: 'erc4626', of: 'USDe' },
  PYUSD: { chain: 'ETH', kind: 'curveEma', venue: 'eth-curve-pyusd-usdc' },
}

/**
 * The token ratios read on `chain` (TOKEN_RATIO_READS), in its order: a vault whose token and asset are on the chain,
 * a pool whose venue is a two-coin Curve stableswap-ng pool there carrying the token. One that cannot be is left out;
 * the live market keeps its snapshot figure and says so in its source.
 */
function tokenRatiosOf(chain: ChainCode, venues: readonly VenueEntry[], tokens: ReadonlyMap<string, CatalogueToken>): TokenRatioSpec[] {
  const specs: TokenRatioSpec[] = []
  for (const [symbol, read] of Object.entries(TOKEN_RATIO_READS)) {
    if (read.chain !== chain) continue
    if (read.kind === 'erc4626') {
      const share = tokens.get(`${chain}:${symbol}`)
      const asset = tokens.get(`${chain}:${read.of}`)
      if (share === undefined || asset === undefined || !isEvmToken(share)) continue
      specs.push({
        symbol,
        of: read.of,
        kind: 'erc4626',
        vault: share.address,
        shareDecimals: share.decimals,
        assetDecimals: asset.decimals,
      })
      continue
    }
    const venue = venues.find((entry) => entry.id === read.venue)
    const coin = venue?.tokens.indexOf(symbol) ?? -1
    const of = venue?.tokens[1 - coin]
    if (
      venue?.chain !== chain ||
      venue.protocol !== 'curve-ng' ||
      venue.tokens.length !== 2 ||
      (coin !== 0 && coin !== 1) ||
      of === undefined
    )
      continue
    specs.push({ symbol, of, kind: 'curveEma', pool: venue.contract, coin })
  }
  return specs
}

/**
 * What one refresh reads on `chain`, in one multicall: its native price, its FX feeds (Chainlink, and Mento's
 * SortedOracles where feeds.json names it), its sequencer, a rollup's L1 data fee (L1_FEE_ORACLES) and, given the
 * catalogue's venues, the balances of each balance-model pool on the chain (`pools`; given also the tokens, the
 * reserves of its Solidly stable pools through their router; and the token ratios read there, TOKEN_RATIO_READS) and,
 * given also the snapshot
 * catalogue's tokens (their addresses, decimals and prices size the ladder), a quote of each depth venue per
 * direction at each of `LADDER_USD` (`ladders`); given also the bridges, the LayerZero messaging fee of each OFT lane
 * leaving the chain (`messagingFees`), and given also the pricing, of each such lane that can carry a compose, with
 * one as a route that swaps on arrival sends it.
 */
export function readPlanOf(
  feeds: FeedCatalogue,
  chain: ChainCode,
  venues?: readonly VenueEntry[],
  tokens?: ReadonlyMap<string, CatalogueToken>,
  bridges?: readonly BridgeEntry[],
  pricing?: Catalogue['pricing'],
): ChainReadPlan {
  const pools = venues === undefined ? undefined : poolsOf(venues, chain, tokens)
  const ladders = venues === undefined || tokens === undefined ? undefined : laddersOf(feeds, venues, tokens, chain)
  const messagingFees =
    bridges === undefined || tokens === undefined
      ? undefined
      : messagingFeesOf(bridges, tokens, chain, pricing === undefined || venues === undefined ? undefined : { pricing, venues })
  const l1Fee = L1_FEE_ORACLES[chain]
  const tokenRatios = venues === undefined || tokens === undefined ? [] : tokenRatiosOf(chain, venues, tokens)
  const withPools = {
    ...(l1Fee === undefined ? {} : { l1Fee }),
    ...(tokenRatios.length === 0 ? {} : { tokenRatios }),
    ...(pools === undefined ? {} : { pools }),
    ...(ladders === undefined ? {} : { ladders }),
    ...(messagingFees === undefined ? {} : { messagingFees }),
  }
  const entry = feeds.chains[chain]
  if (entry === undefined) return { chain, feeds: [], ...withPools }
  const specs: FeedSpec[] = [{ id: NATIVE_FEED, address: entry.native.address, heartbeatSec: entry.native.heartbeatSec }]
  for (const [currency, feed] of Object.entries(entry.fx))
    if (feed !== undefined) specs.push({ id: fxFeedId(currency as Currency), address: feed.address, heartbeatSec: feed.heartbeatSec })
  const oracle = entry.mentoOracle
  const oracles: OracleSpec[] = []
  for (const [currency, rate] of Object.entries(oracle?.fx ?? {}))
    if (oracle !== undefined && rate !== undefined)
      oracles.push({
        id: oracleFeedId(currency as Currency),
        address: oracle.address,
        rateFeedId: rate.rateFeedId,
        maxAgeSec: rate.maxAgeSec,
      })
  return {
    chain,
    feeds: specs,
    ...(oracles.length === 0 ? {} : { oracles }),
    ...(entry.sequencerUptime === undefined ? {} : { sequencerUptimeFeed: entry.sequencerUptime }),
    ...withPools,
  }
}

/**
 * The chain's `stableswap` venues whose balances their contract answers and, given the tokens, its `solidlyStable`
 * venues that can be read through their router, in the catalogue's order. A Solidly venue that cannot be (a token
 * not on the chain, no `factory` or `stable` in its params) is left out; the live market makes it a gap.
 */
function poolsOf(venues: readonly VenueEntry[], chain: ChainCode, tokens?: ReadonlyMap<string, CatalogueToken>): PoolSpec[] {
  const specs: PoolSpec[] = []
  for (const venue of venues) {
    if (venue.chain !== chain) continue
    if (venue.model === 'stableswap' && BALANCE_READ_PROTOCOLS.has(venue.protocol))
      specs.push({ id: venue.id, address: venue.contract, coins: venue.tokens.length })
    const solidly = venue.model === 'solidlyStable' && tokens !== undefined ? solidlyPoolOf(venue, tokens) : undefined
    if (solidly !== undefined) specs.push(solidly)
  }
  return specs
}

/**
 * A Solidly stable venue read through its router (Aerodrome, Velodrome v2): `getReserves(tokens[0], tokens[1],
 * stable, factory)` with the venue's own `stable` flag and factory (its params, as the builder's route names them),
 * so the reserves come back in the venue's token order; undefined when it cannot be read.
 */
function solidlyPoolOf(venue: VenueEntry, tokens: ReadonlyMap<string, CatalogueToken>): PoolSpec | undefined {
  const [first, second] = venue.tokens.map((symbol) => tokens.get(`${venue.chain}:${symbol}`))
  const { factory, stable } = venue.params ?? {}
  if (venue.tokens.length !== 2 || first === undefined || second === undefined || !isEvmToken(first) || !isEvmToken(second))
    return undefined
  if (typeof stable !== 'boolean' || typeof factory !== 'string' || !isAddress(factory, { strict: false })) return undefined
  return { id: venue.id, address: venue.contract, coins: 2, solidly: { tokens: [first.address, second.address], stable, factory } }
}

/**
 * The chain's depth venues that can be quoted, in the catalogue's order: Uniswap v3 and PancakeSwap v3 through the
 * chain's QuoterV2 (feeds.json `quoters`), Balancer v2 through its Vault (the venue's `contract`), Mento through its
 * Broker (the venue's `contract`), with the trading limits of its two tokens (`tradingLimits`). A venue that cannot
 * be (no quoter for its protocol, a token not on the chain, a missing parameter) is left out; the live market makes
 * it a gap (liveMarket.ts).
 */
function laddersOf(
  feeds: FeedCatalogue,
  venues: readonly VenueEntry[],
  tokens: ReadonlyMap<string, CatalogueToken>,
  chain: ChainCode,
): LadderSpec[] {
  const specs: LadderSpec[] = []
  for (const venue of venues) {
    if (venue.chain !== chain || venue.model !== 'depth' || venue.tokens.length !== 2) continue
    const [first, second] = venue.tokens.map((symbol) => tokens.get(`${chain}:${symbol}`))
    if (first === undefined || second === undefined || !isEvmToken(first) || !isEvmToken(second)) continue
    const pairs: [Token, Token, number][] = venue.bidirectional
      ? [
          [first, second, 0],
          [second, first, 1],
        ]
      : [[first, second, 0]]
    const directions: LadderDirection[] = []
    for (const [from, to, i] of pairs) {
      const quote = ladderQuote(feeds, venue, from, to, i)
      if (quote === undefined) break
      directions.push({ from: from.symbol, to: to.symbol, amountsIn: LADDER_USD.map((usd) => ladderAmount(from, usd)), quote })
    }
    // A venue quotable one way only would be offered one way only: leave it out whole, a gap with its reason.
    if (directions.length !== pairs.length) continue
    const [quote] = directions.map((direction) => direction.quote)
    // Mento's Broker also enforces trading limits on both tokens of the exchange: read with the quotes.
    const tradingLimits =
      quote?.kind === 'mentoBroker'
        ? {
            broker: quote.broker,
            exchangeId: quote.exchangeId,
            tokens: [first, second].map((token) => ({ symbol: token.symbol, address: token.address, decimals: token.decimals })),
          }
        : undefined
    specs.push({ id: venue.id, quotedBy: quotedBy(venue.protocol), directions, ...(tradingLimits === undefined ? {} : { tradingLimits }) })
  }
  return specs
}

/** Atomic units of `token` worth `usd` at the snapshot's price, rounded down. */
function ladderAmount(token: Token, usd: bigint): bigint {
  return (usd * E18 * 10n ** BigInt(token.decimals)) / token.priceUsdE18
}

function quotedBy(protocol: string): string {
  if (protocol === 'balancer-v2') return 'Vault.queryBatchSwap'
  if (protocol === 'mento') return 'Broker.getAmountOut'
  return 'QuoterV2'
}

/** How `from` → `to` (token `i` of the venue in) is quoted, or undefined when it cannot be. */
function ladderQuote(feeds: FeedCatalogue, venue: VenueEntry, from: Token, to: Token, i: number): LadderQuote | undefined {
  const params = venue.params ?? {}
  const address = (name: string): Address | undefined => {
    const value = params[name]
    return typeof value === 'string' && isAddress(value, { strict: false }) ? value : undefined
  }
  const bytes32 = (name: string): Hex | undefined => {
    const value = params[name]
    return typeof value === 'string' && isHex(value, { strict: true }) && value.length === 66 ? value : undefined
  }
  switch (venue.protocol) {
    case 'uniswap-v3':
    case 'pancakeswap-v3': {
      const quoter = feeds.chains[venue.chain]?.quoters?.[venue.protocol]
      const fee = params.feeTier
      if (quoter === undefined || typeof fee !== 'number') return undefined
      return { kind: 'quoterV2', quoter, tokenIn: from.address, tokenOut: to.address, fee }
    }
    case 'balancer-v2': {
      // The builder's path (src/tx/encodeBalancerBatchSwap.ts): tokens[0] ⇄ hubPoolId ⇄ hubAsset ⇄ poolId ⇄
      // tokens[1], where the Vault knows tokens[1] as vaultAsset.
      const poolId = bytes32('poolId')
      const hubPoolId = bytes32('hubPoolId')
      const hubAsset = address('hubAsset')
      const vaultAsset = address('vaultAsset')
      if (poolId === undefined || hubPoolId === undefined || hubAsset === undefined || vaultAsset === undefined) return undefined
      const vaultName = (token: Token, index: number): Address => (index === 1 ? vaultAsset : token.address)
      return {
        kind: 'balancerQuery',
        vault: venue.contract,
        poolIds: i === 1 ? [poolId, hubPoolId] : [hubPoolId, poolId],
        assets: [vaultName(from, i), hubAsset, vaultName(to, 1 - i)],
      }
    }
    case 'mento': {
      const exchangeProvider = address('exchangeProvider')
      const exchangeId = bytes32('exchangeId')
      if (exchangeProvider === undefined || exchangeId === undefined) return undefined
      return { kind: 'mentoBroker', broker: venue.contract, exchangeProvider, exchangeId, tokenIn: from.address, tokenOut: to.address }
    }
    default:
      return undefined
  }
}

/** The bridge protocols whose fee for a lane is the source OFT's `quoteSend` (Stargate v2 pools, USDT0 OFTs). */
const QUOTE_SEND_PROTOCOLS: ReadonlySet<string> = new Set(['stargate-v2', 'usdt0-oft'])

/** The size a messaging fee is quoted at: the fee does not depend on it, but a pool may refuse an amount of 0. */
const MESSAGING_FEE_QUOTE_USD = 1_000n

/**
 * The compose message a lane's compose fee is quoted with: zero bytes as long as the longest destination order the
 * builder sends (an encoded `DestinationOrder` of two swaps through Balancer's batchSwap is 1,568 bytes, one Curve
 * swap 672), since LayerZero prices a message by its length; test/market/composeMessage.test.ts checks that every route
 * the catalogue builds sends no longer one.
 */
export const COMPOSE_MESSAGE_BYTES = 1_600

/** The two message lengths a compose fee is quoted at, to extrapolate to COMPOSE_MESSAGE_BYTES (MessagingFeeSpec.compose). */
const COMPOSE_QUOTE_BYTES: readonly [number, number] = [32, 288]

/** The most swaps a destination order runs (the engine's routes: at most two on either side of the bridge). */
const MAX_DESTINATION_SWAPS = 2n

/**
 * LayerZero executor options, type 3, with one lzCompose option of `gas` for compose index 0: the same bytes as the
 * builder's `lzComposeOptions` (src/tx/encodeBridgeCall.ts, which the market may not import).
 */
function composeOptions(gas: bigint): Hex {
  return encodePacked(['uint16', 'uint8', 'uint16', 'uint8', 'uint16', 'uint128'], [3, 1, 19, 3, 0, gas])
}

/**
 * The compose a lane to `destination` is quoted with: gas for the router's overhead and two of the dearest venue on
 * that chain, with the catalogue's margin (the builder asks the overhead and the route's own venues, so never more),
 * and a message of COMPOSE_MESSAGE_BYTES (extrapolated from two shorter ones).
 */
function composeOf(
  destination: ChainCode,
  compose: { pricing: Catalogue['pricing']; venues: readonly VenueEntry[] },
): NonNullable<MessagingFeeSpec['compose']> {
  let dearest = 0n
  for (const venue of compose.venues) if (venue.chain === destination && BigInt(venue.gasUnits) > dearest) dearest = BigInt(venue.gasUnits)
  const gas = withGasMargin(compose, compose.pricing.routerOverheadGasUnits + MAX_DESTINATION_SWAPS * dearest)
  return { extraOptions: composeOptions(gas), sizes: COMPOSE_QUOTE_BYTES, messageBytes: COMPOSE_MESSAGE_BYTES }
}

/**
 * Each lane of a LayerZero bridge that leaves `chain` (its endpoint there sends; every other endpoint receives), quoted
 * as the swap sends it: to the destination's delivering contract, taxi or bus by the bridge's mode, without a compose
 * and, given the pricing and venues, once more with one (composeOf) where the lane can carry it (the bridge carries
 * destination calls, not the bus, and the destination's OFT is known for our executor to accept the compose from).
 */
function messagingFeesOf(
  bridges: readonly BridgeEntry[],
  tokens: ReadonlyMap<string, CatalogueToken>,
  chain: ChainCode,
  compose?: { pricing: Catalogue['pricing']; venues: readonly VenueEntry[] },
): MessagingFeeSpec[] {
  const specs: MessagingFeeSpec[] = []
  for (const bridge of bridges) {
    if (!QUOTE_SEND_PROTOCOLS.has(bridge.protocol)) continue
    const source = bridge.endpoints.find((endpoint) => endpoint.chain === chain)
    const token = tokens.get(`${chain}:${source?.token}`)
    if (source?.contract === undefined || source.inboundOnly === true || token === undefined || !isEvmToken(token)) continue
    for (const destination of bridge.endpoints) {
      if (destination.chain === chain || destination.domain === undefined) continue
      const recipient = destination.deliveredBy ?? destination.contract
      if (recipient === undefined) continue
      const spec: MessagingFeeSpec = {
        bridgeId: bridge.id,
        to: destination.chain,
        oft: source.contract,
        dstEid: destination.domain,
        recipient: pad(recipient, { size: 32 }),
        amountLD: ladderAmount(token, MESSAGING_FEE_QUOTE_USD),
        oftCmd: bridge.mode === 'bus' ? '0x00' : '0x',
      }
      specs.push(spec)
      const canCompose = bridge.destinationCalls && bridge.mode !== 'bus' && destination.contract !== undefined
      if (compose !== undefined && canCompose) specs.push({ ...spec, compose: composeOf(destination.chain, compose) })
    }
  }
  return specs
}
