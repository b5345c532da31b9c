import { bridgeWireName, NO_BRIDGE } from './bridgeWireName.ts'
import type * as z from 'zod'
import {
  type BridgesFile,
  type ChainCode,
  type ChainsFile,
  type CorridorsFile,
  type Currency,
  isEvmChain,
  isEvmTokenEntry,
  type LaneFees,
  type MarketFile,
  type PricingFile,
  type TokensFile,
  type VenuesFile,
} from '../schemas/catalogue.ts'
import { ceilDiv, E18, parseFixed } from './decimal.ts'
import { laneComposeGap, laneEncodingGap, venueEncodingGap } from './encodingGaps.ts'
import { L1_FEE_TX_BYTES, L1_GAS_IN_LIMIT } from './gas.ts'
import { prepareStableSwap } from './stableSwap.ts'
import type {
  Bridge,
  BridgeLane,
  Catalogue,
  CatalogueToken,
  ChainInfo,
  DurationPrior,
  L1GasPrices,
  MarketGaps,
  QuoteLadder,
  SwapEdge,
  Token,
  Venue,
  VenuePricing,
} from './types.ts'
import { ladderKey } from './types.ts'

export type CatalogueFiles = {
  chains: z.infer<typeof ChainsFile>
  tokens: z.infer<typeof TokensFile>
  corridors: z.infer<typeof CorridorsFile>
  venues: z.infer<typeof VenuesFile>
  bridges: z.infer<typeof BridgesFile>
  market: z.infer<typeof MarketFile>
  pricing: z.infer<typeof PricingFile>
  /**
   * The L1 data prices the live market read on an Arbitrum-style chain (ArbGasInfo), by chain; a chain without them
   * has its prices derived from market.json's figures (snapshotL1GasPrices).
   */
  l1GasPrices?: Readonly<Partial<Record<ChainCode, L1GasPrices>>>
}

/** A catalogue that parses but does not hold together; names the file and the field at fault. */
export class CatalogueError extends Error {
  override name = 'CatalogueError'
  constructor(
    readonly file: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`manifest/${file}.json: ${field}: ${detail}`)
  }
}

/**
 * Turns the parsed catalogue files into the engine's model: decimal strings become fixed-point bigints, symbols
 * become token references, and every cross-reference (a venue's token, a bridge's chain, a corridor's symbol) is
 * checked so a broken catalogue stops the service at start.
 */
export function compileCatalogue(files: CatalogueFiles, gaps?: MarketGaps): Catalogue {
  const { market } = files
  /** A token the live market cannot price now: its chain or its currency is in a gap. */
  const isGapped = (token: Token): boolean => gaps !== undefined && (gaps.chains.has(token.chain) || gaps.currencies.has(token.currency))
  const fxUsdE18 = {} as Record<Currency, bigint>
  for (const [currency, rate] of Object.entries(market.fx)) fxUsdE18[currency as Currency] = parseFixed(rate.usd)

  const tokens = new Map<string, CatalogueToken>()
  /** The tokens on EVM chains, the only ones venues and bridge lanes may carry. */
  const evmTokens = new Map<string, Token>()
  const tokensByLowerKey = new Map<string, CatalogueToken>()
  const allTokensByLowerKey = new Map<string, CatalogueToken>()
  files.tokens.tokens.forEach((entry, index) => {
    const key = `${entry.chain}:${entry.symbol}`
    if (tokens.has(key)) throw new CatalogueError('tokens', `tokens[${index}]`, `duplicate token ${key}`)
    const ratio = market.tokenPrices[entry.symbol]
    const priceUsdE18 = (fxUsdE18[entry.currency] * (ratio ? parseFixed(ratio.ratio) : E18)) / E18
    const fields = {
      key,
      symbol: entry.symbol,
      decimals: entry.decimals,
      currency: entry.currency,
      isHub: entry.hub === true,
      hasPermit: entry.permit === true,
      needsApprovalReset: entry.approvalReset === true,
      priceUsdE18,
    }
    let token: CatalogueToken
    if (isEvmTokenEntry(entry)) {
      const evmToken: Token = { ...fields, chain: entry.chain, address: entry.address }
      evmTokens.set(key, evmToken)
      token = evmToken
    } else {
      token = { ...fields, chain: entry.chain, address: entry.address }
    }
    tokens.set(key, token)
    const lowerKey = `${entry.chain}:${entry.symbol.toLowerCase()}`
    allTokensByLowerKey.set(lowerKey, token)
    if (!token.isHub) tokensByLowerKey.set(lowerKey, token)
  })

  const chains = new Map<ChainCode, ChainInfo>()
  files.chains.chains.forEach((entry, index) => {
    if (chains.has(entry.id)) throw new CatalogueError('chains', `chains[${index}].id`, `duplicate chain ${entry.id}`)
    entry.tokens.forEach((symbol, t) => {
      const token = tokens.get(`${entry.id}:${symbol}`)
      if (!token || token.isHub)
        throw new CatalogueError('chains', `chains[${index}].tokens[${t}]`, `${symbol} on ${entry.id} is not in tokens.json`)
    })
    const gas = market.chains[entry.id]
    const isAgentCallable = isEvmChain(entry.id)
    if (isAgentCallable && !gas) throw new CatalogueError('market', `chains.${entry.id}`, 'no gas and native price for this chain')
    // gas price in wei (gwei has 9 places) × USD per native token (1e18 wei): USD per gas unit, 18-decimal.
    const gasUnitUsdE18 = gas ? (parseFixed(gas.gasPriceGwei, 9) * parseFixed(gas.nativeUsd)) / E18 : 0n
    chains.set(entry.id, {
      id: entry.id,
      name: entry.name,
      chainId: entry.chainId,
      tokens: entry.tokens,
      ...(entry.note === undefined ? {} : { note: entry.note }),
      isAgentCallable,
      nativeUsdE18: gas ? parseFixed(gas.nativeUsd) : 0n,
      gasUnitUsdE18,
      l1FeeUsdE18: gas ? parseFixed(gas.l1FeeUsd) : 0n,
      ...l1GasPricesOf(entry.id, files.l1GasPrices?.[entry.id], gas),
      blockTimeSec: gas?.blockTimeSec ?? 1,
    })
  })
  for (const token of tokens.values())
    if (!chains.has(token.chain)) throw new CatalogueError('tokens', token.key, `chain ${token.chain} is not in chains.json`)

  /** A token a venue or bridge names: listed in tokens.json, on an EVM chain. */
  const routableToken = (file: string, field: string, chain: ChainCode, symbol: string): Token => {
    const key = `${chain}:${symbol}`
    const token = evmTokens.get(key)
    if (token) return token
    throw new CatalogueError(
      file,
      field,
      tokens.has(key)
        ? `${symbol} on ${chain} is listed for discovery only: no venue or bridge carries it`
        : `${symbol} on ${chain} is not in tokens.json`,
    )
  }

  const venues: Venue[] = files.venues.venues.map((entry, index) => {
    const at = `venues[${index}]`
    const venueTokens = entry.tokens.map((symbol, t) => routableToken('venues', `${at}.tokens[${t}]`, entry.chain, symbol))
    const state = market.venues[entry.id]
    if (!state) throw new CatalogueError('market', `venues.${entry.id}`, 'no state for this venue')
    let pricing: VenuePricing
    if (entry.model === 'depth') {
      if (venueTokens.length !== 2) throw new CatalogueError('venues', `${at}.tokens`, 'a depth venue has exactly two tokens')
      if ('ladder' in state) pricing = { model: 'ladder', ladders: compileLadders(entry.id, entry.tokens, state.ladder) }
      else if ('depthUsd' in state) pricing = { model: 'depth', depthUsdE18: parseFixed(state.depthUsd) }
      else throw new CatalogueError('market', `venues.${entry.id}`, 'a depth venue needs depthUsd or a ladder of quotes')
    } else {
      if (!('balances' in state) || state.balances.length !== venueTokens.length)
        throw new CatalogueError('market', `venues.${entry.id}.balances`, `needs one balance per token (${venueTokens.length})`)
      const balances = state.balances.map(BigInt)
      const decimals = venueTokens.map((token) => token.decimals)
      if (entry.model === 'stableswap') {
        if (entry.amp === undefined) throw new CatalogueError('venues', `${at}.amp`, 'a stableswap venue needs amp')
        pricing = {
          model: 'stableswap',
          pool: prepareStableSwap({ balances, decimals, amp: BigInt(entry.amp), feePpm: BigInt(entry.feePpm) }),
        }
      } else {
        const [r0, r1] = balances
        const [d0, d1] = decimals
        if (r0 === undefined || r1 === undefined || d0 === undefined || d1 === undefined || balances.length !== 2)
          throw new CatalogueError('venues', `${at}.tokens`, 'a solidlyStable venue has exactly two tokens')
        pricing = { model: 'solidlyStable', pool: { reserves: [r0, r1], decimals: [d0, d1], feePpm: BigInt(entry.feePpm) } }
      }
    }
    const params = entry.params ?? {}
    const gap = venueEncodingGap({ name: entry.name, protocol: entry.protocol, chain: entry.chain, params })
    return {
      id: entry.id,
      chain: entry.chain,
      name: entry.name,
      tool: entry.tool,
      protocol: entry.protocol,
      contract: entry.contract,
      ...(entry.pool === undefined ? {} : { pool: entry.pool }),
      params,
      tokens: venueTokens,
      feePpm: BigInt(entry.feePpm),
      gasUnits: BigInt(entry.gasUnits),
      pricing,
      ...(gap === undefined ? {} : { gap }),
    }
  })

  const edgesFrom = new Map<string, SwapEdge[]>()
  files.venues.venues.forEach((entry, index) => {
    const venue = venues[index] as Venue
    if (venue.tokens.some(isGapped) || gaps?.venues.has(venue.id) === true) return
    venue.tokens.forEach((from, i) => {
      venue.tokens.forEach((to, j) => {
        if (i === j || (!entry.bidirectional && !(i === 0 && j === 1))) return
        // A live quote ladder offers only the directions it was quoted in.
        if (venue.pricing.model === 'ladder' && !venue.pricing.ladders.has(ladderKey(i, j))) return
        const list = edgesFrom.get(from.key) ?? []
        list.push({ venue, i, j, from, to })
        edgesFrom.set(from.key, list)
      })
    })
  })

  const bridges: Bridge[] = []
  const lanes = new Map<string, BridgeLane[]>()
  /** Every lane of every bridge, gapped or not, as `<bridge id>:<SRC>><DST>`: what market.json `bridgeFees` may name. */
  const laneIds = new Set<string>()
  files.bridges.bridges.forEach((entry, index) => {
    const at = `bridges[${index}]`
    const durationBySource: Partial<Record<ChainCode, DurationPrior>> = {}
    for (const [chain, prior] of Object.entries(entry.duration.bySource)) durationBySource[chain as ChainCode] = prior
    const feePpmBySource: Partial<Record<ChainCode, bigint>> = {}
    for (const [chain, ppm] of Object.entries(entry.feePpm.bySource)) feePpmBySource[chain as ChainCode] = BigInt(ppm)
    const bridge: Bridge = {
      id: entry.id,
      name: entry.name,
      protocol: entry.protocol,
      ...(entry.mode === undefined ? {} : { mode: entry.mode }),
      carriesDestinationCalls: entry.destinationCalls,
      feePpmDefault: BigInt(entry.feePpm.default),
      feePpmBySource,
      fixedFeeUsdE18: parseFixed(entry.fixedFeeUsd),
      destinationGasUnits: BigInt(entry.destinationGasUnits),
      messagingFeeUsdE18: parseFixed(entry.messagingFeeUsd),
      gasUnits: BigInt(entry.gasUnits),
      minUsdE18: parseFixed(entry.minUsd),
      maxUsdE18: parseFixed(entry.maxUsd),
      durationDefault: entry.duration.default,
      durationBySource,
    }
    bridges.push(bridge)
    const endpoints = entry.endpoints.map((endpoint, e) => ({
      ...endpoint,
      token: routableToken('bridges', `${at}.endpoints[${e}]`, endpoint.chain, endpoint.token),
    }))
    for (const source of endpoints) {
      if (source.inboundOnly === true || source.contract === undefined) continue
      for (const destination of endpoints) {
        if (destination.chain === source.chain) continue
        const key = `${source.chain}>${destination.chain}`
        laneIds.add(`${entry.id}:${key}`)
        if (isGapped(source.token) || isGapped(destination.token) || gaps?.lanes.has(`${entry.id}:${key}`) === true) continue
        const list = lanes.get(key) ?? []
        const laneFee = market.bridgeFees?.[entry.id]?.[key]
        const messagingFeeUsdE18 = laneFee?.messagingFeeUsd === undefined ? bridge.messagingFeeUsdE18 : parseFixed(laneFee.messagingFeeUsd)
        const composeFeeGap = gaps?.lanes.get(`${entry.id}:${key}:compose`)
        const lane: BridgeLane = {
          bridge,
          from: source.token,
          to: destination.token,
          sourceContract: source.contract,
          messagingFeeUsdE18,
          composeMessagingFeeUsdE18:
            laneFee?.composeMessagingFeeUsd === undefined ? messagingFeeUsdE18 : parseFixed(laneFee.composeMessagingFeeUsd),
          isComposeGasPrepaid: laneFee?.composeMessagingFeeUsd !== undefined,
          ...(composeFeeGap === undefined ? {} : { composeFeeGap }),
          ...(laneFee === undefined ? {} : ownLaneFigures(laneFee)),
          ...(destination.domain === undefined ? {} : { destinationDomain: destination.domain }),
          ...(destination.contract === undefined ? {} : { destinationContract: destination.contract }),
          ...(destination.deliveredBy === undefined ? {} : { deliveredBy: destination.deliveredBy }),
        }
        const gap = laneEncodingGap(lane)
        const composeGap = laneComposeGap(lane)
        list.push({ ...lane, ...(gap === undefined ? {} : { gap }), ...(composeGap === undefined ? {} : { composeGap }) })
        lanes.set(key, list)
      }
    }
  })

  for (const [id, fees] of Object.entries(market.bridgeFees ?? {}))
    for (const key of Object.keys(fees))
      if (!laneIds.has(`${id}:${key}`)) throw new CatalogueError('market', `bridgeFees.${id}.${key}`, `no lane ${key} of a bridge ${id}`)

  const userSymbols = new Set([...tokens.values()].filter((token) => !token.isHub).map((token) => token.symbol))
  files.corridors.corridors.forEach((row, index) => {
    for (const side of ['from', 'to'] as const)
      if (!userSymbols.has(row[side]))
        throw new CatalogueError('corridors', `corridors[${index}].${side}`, `${row[side]} is not listed on any chain`)
    row.chains.forEach((chain, c) => {
      const listed = chains.get(chain)?.tokens ?? []
      const isTron = row.from === 'USDT-TRC20'
      if (!isTron && !listed.includes(row.from) && !listed.includes(row.to))
        throw new CatalogueError('corridors', `corridors[${index}].chains[${c}]`, `neither ${row.from} nor ${row.to} is listed on ${chain}`)
    })
  })

  const { pricing } = files
  return {
    asOf: market.asOf,
    chains,
    tokens,
    tokensByLowerKey,
    allTokensByLowerKey,
    venues,
    bridges,
    bridgeNames: [...new Set([...bridges.map(bridgeWireName), NO_BRIDGE])].sort(),
    edgesFrom,
    lanes,
    corridors: files.corridors.corridors,
    fxUsdE18,
    pricing: {
      feeBps: BigInt(pricing.feeBps),
      balancedLambdaBpsPerMinuteE18: parseFixed(pricing.balancedLambdaBpsPerMinute),
      routerOverheadGasUnits: BigInt(pricing.routerOverheadGasUnits),
      gasMarginPercent: BigInt(pricing.gasMarginPercent),
      quoteTtlSec: pricing.quoteTtlSec,
    },
    ...(gaps === undefined ? {} : { gaps }),
  }
}

/**
 * An Arbitrum-style chain's L1 data prices (gas.ts L1_GAS_IN_LIMIT): those the live market read, else derived from
 * market.json's figures (snapshotL1GasPrices); none on other chains.
 */
function l1GasPricesOf(
  chain: ChainCode,
  read: L1GasPrices | undefined,
  market: { l1FeeUsd: string; nativeUsd: string } | undefined,
): Pick<ChainInfo, 'l1GasPrices'> {
  const inLimit = L1_GAS_IN_LIMIT[chain]
  if (inLimit === undefined) return {}
  if (read !== undefined) return { l1GasPrices: read }
  if (market === undefined) return {}
  return { l1GasPrices: snapshotL1GasPrices(chain, market, inLimit.minBaseFeeWei) }
}

/**
 * The snapshot gives one figure, the L1 data fee of a transaction of L1_FEE_TX_BYTES in USD: in wei at the native
 * price (rounded up), it is taken as the per-transaction price and again, spread over L1_FEE_TX_BYTES (rounded up),
 * as the per-byte price. A transaction of any size is sized for at least the snapshot's fee, one of up to 4,096 bytes
 * for at most twice it, and the fixed part is never lost to a small transaction; with the assumed minimum base fee.
 */
function snapshotL1GasPrices(chain: ChainCode, market: { l1FeeUsd: string; nativeUsd: string }, minBaseFeeWei: bigint): L1GasPrices {
  const nativeUsdE18 = parseFixed(market.nativeUsd)
  if (nativeUsdE18 <= 0n)
    throw new CatalogueError('market', `chains.${chain}.nativeUsd`, 'a chain whose L1 fee is gas needs a native price')
  const feeWei = ceilDiv(parseFixed(market.l1FeeUsd) * E18, nativeUsdE18)
  return { perTxWei: feeWei, perByteWei: ceilDiv(feeWei, BigInt(L1_FEE_TX_BYTES)), minBaseFeeWei }
}

/** A lane's own fees and deposit limits (market.json `bridgeFees`), where it has them. */
function ownLaneFigures(
  laneFee: LaneFees,
): Pick<
  BridgeLane,
  'feePpm' | 'fixedFeeUsdE18' | 'destinationGasUnits' | 'minAmountIn' | 'maxAmountIn' | 'instantAmountIn' | 'feeQuotedBy' | 'duration'
> {
  return {
    ...(laneFee.feePpm === undefined ? {} : { feePpm: BigInt(laneFee.feePpm) }),
    ...(laneFee.fixedFeeUsd === undefined ? {} : { fixedFeeUsdE18: parseFixed(laneFee.fixedFeeUsd) }),
    ...(laneFee.destinationGasUnits === undefined ? {} : { destinationGasUnits: BigInt(laneFee.destinationGasUnits) }),
    ...(laneFee.minAmount === undefined ? {} : { minAmountIn: BigInt(laneFee.minAmount) }),
    ...(laneFee.maxAmount === undefined ? {} : { maxAmountIn: BigInt(laneFee.maxAmount) }),
    ...(laneFee.instantAmount === undefined ? {} : { instantAmountIn: BigInt(laneFee.instantAmount) }),
    ...(laneFee.quotedBy === undefined ? {} : { feeQuotedBy: laneFee.quotedBy }),
    ...(laneFee.durationP50Sec === undefined || laneFee.durationP95Sec === undefined
      ? {}
      : { duration: { p50Sec: laneFee.durationP50Sec, p95Sec: laneFee.durationP95Sec } }),
  }
}

/**
 * A live depth venue's quote ladders by direction (market.json `ladder`): each names two of the venue's tokens, and
 * its points rise strictly in both input and output, so interpolation between them is monotone.
 */
function compileLadders(
  id: string,
  symbols: readonly string[],
  ladders: readonly { from: string; to: string; points: readonly (readonly [string, string])[] }[],
): Map<string, QuoteLadder> {
  const compiled = new Map<string, QuoteLadder>()
  ladders.forEach((ladder, index) => {
    const field = `venues.${id}.ladder[${index}]`
    const i = symbols.indexOf(ladder.from)
    const j = symbols.indexOf(ladder.to)
    if (i < 0 || j < 0 || i === j)
      throw new CatalogueError('market', field, `${ladder.from} to ${ladder.to} is not a direction of this venue`)
    if (compiled.has(ladderKey(i, j))) throw new CatalogueError('market', field, `${ladder.from} to ${ladder.to} is listed twice`)
    const amountsIn = ladder.points.map(([amountIn]) => BigInt(amountIn))
    const amountsOut = ladder.points.map(([, amountOut]) => BigInt(amountOut))
    for (let k = 0; k < amountsIn.length; k += 1) {
      const previousIn = k === 0 ? 0n : (amountsIn[k - 1] as bigint)
      const previousOut = k === 0 ? 0n : (amountsOut[k - 1] as bigint)
      if ((amountsIn[k] as bigint) <= previousIn || (amountsOut[k] as bigint) <= previousOut)
        throw new CatalogueError('market', `${field}.points[${k}]`, 'ladder points must rise strictly in both amountIn and amountOut')
    }
    compiled.set(ladderKey(i, j), { amountsIn, amountsOut })
  })
  return compiled
}
