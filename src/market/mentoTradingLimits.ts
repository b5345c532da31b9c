import { type Address, type Hex, numberToHex } from 'viem'

/**
 * Mento's trading limits as its Broker (v2) enforces them on `swapIn` (mento-core `contracts/swap/Broker.sol`
 * `guardTradingLimits`, `contracts/libraries/TradingLimits.sol` `update` and `verify`), and how much of them a swap
 * can still use: the live market ends a Mento ladder there (createChainReader.ts), so a quote never promises a swap
 * the Broker would refuse.
 *
 * Per token of an exchange (limit id `exchangeId ^ bytes32(uint256(uint160(token)))`), a swap moves the token's
 * netflow: tokenIn's up by amountIn, tokenOut's down by amountOut, counted in whole tokens (the atomic amount divided
 * by 10^decimals, truncated; a nonzero flow below one unit counts as ±1). L0 and L1 keep a netflow per time window,
 * which starts from 0 when the window's time is up (`block.timestamp > lastUpdated + timestep`); LG keeps one for
 * ever. A limit applies only when its flag is set (L0 = 1, L1 = 2, LG = 4; L1 moves only with L0, as in `update`),
 * and the swap reverts if afterwards any applicable |netflow| is above its limit.
 */

/** `tradingLimitsConfig(limitId)`: the windows in seconds, the limits in whole tokens, and which limits apply. */
export type TradingLimitConfig = {
  timestep0: number
  timestep1: number
  limit0: bigint
  limit1: bigint
  limitGlobal: bigint
  flags: number
}

/** `tradingLimitsState(limitId)`: when each window last started (unix seconds), and the netflows in whole tokens. */
export type TradingLimitState = {
  lastUpdated0: number
  lastUpdated1: number
  netflow0: bigint
  netflow1: bigint
  netflowGlobal: bigint
}

export const LIMIT_L0 = 1
export const LIMIT_L1 = 2
export const LIMIT_LG = 4

/** The Broker's limit id of `token` in exchange `exchangeId`: the exchange id XOR the address as a bytes32. */
export function tradingLimitId(exchangeId: Hex, token: Address): Hex {
  return numberToHex(BigInt(exchangeId) ^ BigInt(token), { size: 32 })
}

/** Whole tokens a swap can still move one way, and the limit that leaves the least (`L0`, `L1`, `LG`). */
export type Room = { units: bigint; limit: 'L0' | 'L1' | 'LG' }

/**
 * What a token's limits leave, in whole tokens, for a swap mined at or after `blockTimestamp` (the block read):
 * `inflow` for the token going in, `outflow` for it coming out; undefined where no limit applies.
 *
 * A window whose time is up at the block starts from 0, as the Broker would start it. A window still running may
 * run out before the swap is mined, and then starts from 0 too: the room is the smaller of the two, so a netflow the
 * other way (which would leave more room while the window lasts) is not counted on. A netflow already beyond its
 * limit (a limit lowered since) leaves no room either way: the Broker refuses any swap that does not bring it back
 * within, and a ladder cannot start above zero.
 */
export function roomLeft(config: TradingLimitConfig, state: TradingLimitState, blockTimestamp: number): { inflow?: Room; outflow?: Room } {
  const windows: { limit: Room['limit']; bound: bigint; netflows: bigint[] }[] = []
  const windowed = (netflow: bigint, lastUpdated: number, timestep: number): bigint[] =>
    blockTimestamp > lastUpdated + timestep ? [0n] : [netflow, 0n]
  if ((config.flags & LIMIT_L0) !== 0) {
    windows.push({ limit: 'L0', bound: config.limit0, netflows: windowed(state.netflow0, state.lastUpdated0, config.timestep0) })
    if ((config.flags & LIMIT_L1) !== 0)
      windows.push({ limit: 'L1', bound: config.limit1, netflows: windowed(state.netflow1, state.lastUpdated1, config.timestep1) })
  } else if ((config.flags & LIMIT_L1) !== 0) {
    // L1 without L0 (validate() forbids it): a swap does not move netflow1, yet verify() still checks it.
    const within = state.netflow1 <= config.limit1 && state.netflow1 >= -config.limit1
    if (!within) windows.push({ limit: 'L1', bound: config.limit1, netflows: [state.netflow1] })
  }
  if ((config.flags & LIMIT_LG) !== 0) windows.push({ limit: 'LG', bound: config.limitGlobal, netflows: [state.netflowGlobal] })
  let inflow: Room | undefined
  let outflow: Room | undefined
  for (const { limit, bound, netflows } of windows) {
    const beyond = netflows.some((netflow) => netflow > bound || netflow < -bound)
    const highest = netflows.reduce((a, b) => (a > b ? a : b))
    const lowest = netflows.reduce((a, b) => (a < b ? a : b))
    const roomIn = beyond ? 0n : bound - highest
    const roomOut = beyond ? 0n : bound + lowest
    if (inflow === undefined || roomIn < inflow.units) inflow = { units: roomIn, limit }
    if (outflow === undefined || roomOut < outflow.units) outflow = { units: roomOut, limit }
  }
  return { ...(inflow === undefined ? {} : { inflow }), ...(outflow === undefined ? {} : { outflow }) }
}

/**
 * The largest atomic amount of a token of `decimals` whose flow counts as at most `units` whole tokens: the Broker
 * truncates to whole tokens, so everything below units + 1 of them, and none when no whole token is left (any
 * nonzero flow counts as at least one).
 */
export function maxAtomicFlow(units: bigint, decimals: number): bigint {
  return units < 1n ? 0n : (units + 1n) * 10n ** BigInt(decimals) - 1n
}

/**
 * The largest input whose output is surely at most `maxOut`, from a ladder's first point (`amountIn`, `amountOut`):
 * an exchange's output is concave in its input and 0 at 0, so past the first point it is at most the first point's
 * rate times the input, that rate taken one atomic unit up (the quote was rounded down). Below the first point
 * nothing bounds it but that point's output: 0 when even that is above `maxOut`.
 */
export function maxInputForOutput(first: readonly [bigint, bigint], maxOut: bigint): bigint {
  const [amountIn, amountOut] = first
  if (amountOut > maxOut) return 0n
  const byRate = (maxOut * amountIn) / (amountOut + 1n)
  return byRate > amountIn ? byRate : amountIn
}

/**
 * A ladder ended at `maxIn`: the points above it dropped and, when a point was dropped, one added at `maxIn` with the
 * output interpolated between the points around it (from (0, 0) below the first), rounded down, as the engine would
 * price it, so it never promises more than the ladder did; none when it would not pay more than the point below.
 */
export function cutLadder(points: readonly (readonly [bigint, bigint])[], maxIn: bigint): { points: [bigint, bigint][]; isCut: boolean } {
  const kept = points.filter(([amountIn]) => amountIn <= maxIn).map(([a, b]): [bigint, bigint] => [a, b])
  const above = points[kept.length]
  if (above === undefined) return { points: kept, isCut: false }
  const [lowerIn, lowerOut] = kept.at(-1) ?? [0n, 0n]
  const [upperIn, upperOut] = above
  if (maxIn > lowerIn) {
    const out = lowerOut + ((upperOut - lowerOut) * (maxIn - lowerIn)) / (upperIn - lowerIn)
    if (out > lowerOut) kept.push([maxIn, out])
  }
  return { points: kept, isCut: true }
}

/** One token's limits as read, with what the reasons call it and its decimals (the Broker asks the token's own). */
export type TokenTradingLimits = { symbol: string; decimals: number; config: TradingLimitConfig; state: TradingLimitState }

/**
 * One direction's ladder within what the Broker would still accept at `blockTimestamp`: tokenIn's inflow room, and
 * tokenOut's outflow room turned into an input (maxInputForOutput), the smaller of the two ending the ladder
 * (cutLadder), with `end` saying which limit; no point at all when no whole token is left. A ladder that ends below
 * the allowance anyway is returned as read.
 */
export function withinTradingLimits(
  direction: { from: string; to: string; points: readonly (readonly [bigint, bigint])[]; end?: string },
  tokenIn: TokenTradingLimits,
  tokenOut: TokenTradingLimits,
  blockTimestamp: number,
): { from: string; to: string; points: [bigint, bigint][]; end?: string } {
  const asRead = { ...direction, points: direction.points.map(([a, b]): [bigint, bigint] => [a, b]) }
  const [first] = direction.points
  if (first === undefined) return asRead
  const { inflow } = roomLeft(tokenIn.config, tokenIn.state, blockTimestamp)
  const { outflow } = roomLeft(tokenOut.config, tokenOut.state, blockTimestamp)
  const bounds: { maxIn: bigint; why: string }[] = []
  if (inflow !== undefined)
    bounds.push({
      maxIn: maxAtomicFlow(inflow.units, tokenIn.decimals),
      why: `${tokenIn.symbol}'s ${inflow.limit} leaves ${inflow.units} whole ${tokenIn.symbol} to flow in`,
    })
  if (outflow !== undefined)
    bounds.push({
      maxIn: maxInputForOutput(first, maxAtomicFlow(outflow.units, tokenOut.decimals)),
      why: `${tokenOut.symbol}'s ${outflow.limit} leaves ${outflow.units} whole ${tokenOut.symbol} to flow out`,
    })
  const binding = bounds.reduce<{ maxIn: bigint; why: string } | undefined>(
    (least, bound) => (least === undefined || bound.maxIn < least.maxIn ? bound : least),
    undefined,
  )
  if (binding === undefined) return asRead
  const { points, isCut } = cutLadder(direction.points, binding.maxIn)
  if (!isCut) return asRead
  const at = `${direction.from} → ${direction.to}`
  return {
    from: direction.from,
    to: direction.to,
    points,
    end:
      points.length === 0
        ? `${at}: Mento's trading limit leaves no room (${binding.why})`
        : `${at} above ${binding.maxIn}: Mento's trading limit would refuse it (${binding.why})`,
  }
}
