import { type Address, encodeAbiParameters, encodeFunctionData, type Hex, toHex, zeroAddress } from 'viem'
import {
  type Catalogue,
  type CandidateRoute,
  calldataBytesOf,
  ceilDiv,
  E18,
  pow10,
  type PricedRoute,
  type QuoteAmounts,
  type SizedRoute,
  simulateRoute,
  type StepEstimate,
  type SwapAt,
  type Token,
  transactionGasLimit,
  withGasMargin,
  ACROSS_FILL_WINDOW_SEC,
  leastBridgeInput,
} from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { EncodingGap } from '../schemas/encodings.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import { routerExecuteCall, runDestinationInputs } from './abis.ts'
import { buildApproval, type BuildApprovalReturnType } from './buildApproval.ts'
import type { RouterCall } from './call.ts'
import { encodeBridgeCall } from './encodeBridgeCall.ts'
import { encodeSwapCall } from './encodeSwapCall.ts'
import type { RouterDeployment } from './routerDeployment.ts'

/**
 * How long after the build the user has to get the swap mined: the router refuses the order (`OrderExpired`) in any
 * later block, and the venues on the source chain get the same deadline. The quote's prices are promised for 60 s,
 * but a user signs the approval first, waits for it to be mined and then signs the swap, in a wallet that may ask a
 * person; ten minutes covers that with room for a slow block or a busy mempool. Longer would let a transaction that
 * sat unsent or unmined run on prices that old, held only by toAmountMin; the service answers this as `deadline`.
 */
export const ORDER_SIGNING_WINDOW_SEC = 10 * 60
/**
 * A destination order's margin past the route's p95 duration (the bridge's settlement prior and the blocks on either
 * side): the larger of this and the p95 again. One delivery in twenty is slower than the p95, and a delivery after
 * the deadline hands the recipient the bridged token instead of the one asked for (safe, but not what was wanted),
 * while one before it must still meet toAmountMin: so the deadline errs long.
 */
export const DESTINATION_MARGIN_SEC = 30 * 60

/** The `Order` struct of contracts/SwapEaziTypes.sol. */
export type RouterOrder = {
  ref: Hex
  tokenIn: Address
  amountIn: bigint
  fee: bigint
  tokenOut: Address
  minOut: bigint
  recipient: Address
  /** Unix seconds; the router reverts the order (`OrderExpired`) in any block after it. */
  deadline: bigint
  calls: RouterCall[]
}

/** The `DestinationOrder` struct: what our executor on the destination chain does with the bridged tokens. */
export type DestinationOrder = {
  ref: Hex
  token: Address
  tokenOut: Address
  minOut: bigint
  recipient: Address
  /** Unix seconds; delivered after it, the order runs no call and the recipient gets the bridged token. */
  deadline: bigint
  calls: RouterCall[]
}

/** The deadline of an order built at `nowSec`: the signing window after it. */
export const orderDeadline = (nowSec: number): bigint => BigInt(nowSec + ORDER_SIGNING_WINDOW_SEC)

/**
 * The deadline of a destination order whose source order expires at `sourceDeadline`: the source transaction may be
 * mined until then, and the bridge then takes up to the route's p95 duration, plus the margin.
 */
export function destinationDeadline(sourceDeadline: bigint, durationP95Sec: number): bigint {
  return sourceDeadline + BigInt(durationP95Sec + Math.max(durationP95Sec, DESTINATION_MARGIN_SEC))
}

export type BuildRouteTransactionParameters = {
  catalogue: Catalogue
  /** The router and executor on a chain (configuration; the same CREATE2 address by default). */
  routerOn: (chain: ChainCode) => RouterDeployment
  /** The chosen route, sized once by the engine (`sizeRoute`): the encoder prices nothing itself. */
  sized: SizedRoute
  amounts: QuoteAmounts
  slippageE18: bigint
  sender: Address
  /** Who receives the output on the destination chain (toAddress, or the sender). */
  recipient: Address
  /** The swap reference as bytes32. */
  ref: Hex
  nowSec: number
  /** How swaps are priced when the route is priced again (the snapshot's pools unless a batch moved them: PoolInflows). */
  swapAt?: SwapAt | undefined
}

/** The approval fields (`buildApproval`) beside the transaction they come before. */
/** The first step of `route` the catalogue marked unbuildable, as a refusal; undefined when every step can be built. */
function refusalOf(route: CandidateRoute): BuildRefusal | undefined {
  for (const edge of [...route.sourceSwaps, ...route.destinationSwaps])
    if (edge.venue.gap !== undefined) return { ok: false, ...edge.venue.gap, step: edge.venue.id }
  const lane = route.bridge
  if (lane === undefined) return undefined
  const step = `${lane.bridge.id}:${lane.from.chain}>${lane.to.chain}`
  if (lane.gap !== undefined) return { ok: false, ...lane.gap, step }
  if (route.destinationSwaps.length > 0 && lane.composeGap !== undefined) return { ok: false, ...lane.composeGap, step }
  return undefined
}

/**
 * A route the encoders cannot build: the stable reason the catalogue recorded when it compiled (DESIGN 7.20), the
 * step, and a sentence. The engine offers no such route, so a caller that gets one has a catalogue that changed
 * under it, or a bug.
 */
export type BuildRefusal = { ok: false; reason: EncodingGap['reason']; step: string; detail: string }

export type BuildRouteTransactionReturnType = BuildApprovalReturnType & {
  ok: true
  transactionRequest: TransactionRequest
  order: RouterOrder
  destinationOrder?: DestinationOrder
  /**
   * The least the bridge delivers on the destination chain, in its token's atomic units (the lane's `to`), whatever
   * the source swaps and the bridge's fee do within the calldata's bounds: Across's fixed output, LayerZero's
   * minimum, or what CCTP mints of the least burn less `maxFee`. Absent on a same-chain route.
   */
  leastBridged?: bigint
  /** Our executor on the destination chain, where the bridge delivers and the destination order runs; with that order. */
  destinationExecutor?: Address
  /** What runs through the route (sized to deliver toAmount) and what goes to the treasury: amountIn = both. */
  routedAmount: bigint
  margin: bigint
  /** The route priced at `routedAmount`: the step amounts the calldata was built from (see `relayFee`). */
  sized: PricedRoute
  /**
   * Our CCTP relayer's destination gas collected with the fee, in the input token: part of `margin`, taken out of
   * `sized.routedAmount`. After a source swap the swaps were priced again at the smaller input, and the calldata's
   * swap and burn amounts are those.
   */
  relayFee: bigint
}

const floorSlippage = (amount: bigint, slippageE18: bigint): bigint => (amount * (E18 - slippageE18)) / E18

/** USD (18-decimal) to native wei at the chain's snapshot price, rounded up: a fee we must not underpay. */
function nativeWeiForUsd(catalogue: Catalogue, chain: ChainCode, usdE18: bigint): bigint {
  if (usdE18 === 0n) return 0n
  const info = catalogue.chains.get(chain)
  if (!info || info.nativeUsdE18 === 0n) throw new Error(`no native token price for ${chain}`)
  return ceilDiv(usdE18 * E18, info.nativeUsdE18)
}

/** How much more than the priced messaging fee a LayerZero deposit carries (refunded when not used): 20%. */
export const LAYERZERO_FEE_HEADROOM_PPM = 200_000n

/**
 * A messaging fee as sent: the fee priced plus LAYERZERO_FEE_HEADROOM_PPM, rounded up. LayerZero's fee follows the
 * destination's gas price, which may rise between the block the fee was read at and the block the transaction is
 * mined in (the quote's life and the signing window); a send short of the fee reverts, and the endpoint refunds what
 * is not used to the sender (refundTo), so the headroom costs nothing.
 */
function withFeeHeadroom(feeWei: bigint): bigint {
  return feeWei === 0n ? 0n : ceilDiv(feeWei * (1_000_000n + LAYERZERO_FEE_HEADROOM_PPM), 1_000_000n)
}

function swapCalls(
  steps: readonly StepEstimate[],
  route: CandidateRoute['sourceSwaps'],
  slippageE18: bigint,
  executor: Address,
  deadlineSec: bigint,
  /** A floor on the last swap's minimum output, above its slippage floor (what the bridge after it must be handed). */
  lastMinOut = 0n,
): RouterCall[] {
  return route.map((edge, k) => {
    const step = steps[k]
    if (!step || step.id !== edge.venue.id) throw new Error(`step ${k} does not match venue ${edge.venue.id}`)
    const slipped = floorSlippage(step.amountOut, slippageE18)
    return encodeSwapCall({
      edge,
      amountIn: step.amountIn,
      minOut: k === route.length - 1 ? maxBig(slipped, lastMinOut) : slipped,
      recipient: executor,
      deadlineSec,
    })
  })
}

const encodeDestinationOrder = (order: DestinationOrder): Hex => encodeAbiParameters(runDestinationInputs, [order])

/**
 * Encodes a sized route as the one transaction the user signs: a call to our router's `execute` whose inner calls
 * are the route's venue and bridge calls, encoded by viem against their public ABIs. The route runs only the
 * input sized to deliver `toAmount` (DESIGN 3); the rest of the input is the margin the router sends to the
 * treasury. Every minimum in the calldata derives from the quote: the same-chain output is checked against
 * `toAmountMin` by the router, a bridge delivers at least the promised amount, and a destination order carries
 * `toAmountMin` for the executor there. The order expires `ORDER_SIGNING_WINDOW_SEC` after `nowSec`, and a destination
 * order after the route's p95 duration and a margin more (`destinationDeadline`).
 */
export function buildRouteTransaction(parameters: BuildRouteTransactionParameters): BuildRouteTransactionReturnType | BuildRefusal {
  const refusal = refusalOf(parameters.sized.route)
  if (refusal !== undefined) return refusal
  const { catalogue, amounts, slippageE18, sender, recipient, ref, nowSec } = parameters
  const { route, sized } = parameters.sized
  const amountIn = parameters.sized.routedAmount + parameters.sized.margin
  // Our relayer's destination gas on a CCTP route is collected with the fee, so the treasury is paid back what the
  // relayer spends: the executor burns that much less, and Circle's maxFee leaves it out. The fee is taken in the
  // input token before any call: where that is the burned token, the gas itself; after a source swap, the input the
  // swaps turn into that gas (relayFeeBeforeSwaps).
  const front = route.sourceSwaps.length === 0 ? undefined : relayFeeBeforeSwaps(catalogue, parameters.sized, parameters.swapAt)
  const relayFee = route.sourceSwaps.length === 0 ? sized.relayGasAmount : (front?.relayFee ?? 0n)
  /** The step amounts the calls are encoded from: after a source swap whose input paid the gas, priced again. */
  const steps = front?.steps ?? sized.steps
  const routedAmount = parameters.sized.routedAmount - relayFee
  const margin = parameters.sized.margin + relayFee
  const source = parameters.routerOn(route.from.chain)
  const deadline = orderDeadline(nowSec)

  const calls = swapCalls(steps, route.sourceSwaps, slippageE18, source.executor, deadline)
  let destinationOrder: DestinationOrder | undefined
  let leastBridged: bigint | undefined
  const lane = route.bridge
  if (lane) {
    const bridgeIndex = route.sourceSwaps.length
    const bridgeStep = sized.steps[bridgeIndex]
    /** What reaches the bridge: the priced step's input, or after a source swap that paid the gas, its smaller output. */
    const bridgeIn = steps[bridgeIndex]?.amountIn ?? bridgeStep?.amountIn ?? 0n
    if (bridgeStep?.kind !== 'bridge') throw new Error(`route ${route.id} has no bridge step at ${bridgeIndex}`)
    const destination = parameters.routerOn(lane.to.chain)
    const destinationChain = catalogue.chains.get(lane.to.chain)
    if (!destinationChain) throw new Error(`chain ${lane.to.chain} is not in the catalogue`)
    const endsHere = route.destinationSwaps.length === 0
    if (!endsHere) {
      const destinationSteps = sized.steps.slice(bridgeIndex + 1)
      // The venues there get the order's own deadline: an earlier one would fall back before it.
      const arrivalDeadline = destinationDeadline(deadline, sized.durationP95Sec)
      destinationOrder = {
        ref,
        token: lane.to.address,
        tokenOut: route.to.address,
        minOut: amounts.toAmountMin,
        recipient,
        deadline: arrivalDeadline,
        calls: swapCalls(destinationSteps, route.destinationSwaps, slippageE18, destination.executor, arrivalDeadline),
      }
    }
    // A bridge-only deposit is exact, so Across can be asked for the full estimate; after a source swap the deposit
    // is that swap's actual output and the output allows for slippage. The user's own floor is toAmountMin.
    const estimate = bridgeStep.amountOut
    const slipped = floorSlippage(estimate, slippageE18)
    const outputMin = endsHere ? amounts.toAmountMin : slipped
    const exactDeposit = route.sourceSwaps.length === 0
    let destinationGasUnits = catalogue.pricing.routerOverheadGasUnits
    for (const edge of route.destinationSwaps) destinationGasUnits += edge.venue.gasUnits
    const outputAmount = exactDeposit ? estimate : maxBig(slipped, outputMin)
    const maxFee = bridgeIn - (front === undefined ? relayFee : 0n) - rescaleDown(bridgeStep.amountOut, lane.to, lane.from)
    // The burn is the executor's whole balance: exactly the routed amount, or after a source swap at least its minimum.
    const lastSwap = steps[bridgeIndex - 1]
    let leastBurn = lastSwap === undefined ? routedAmount : floorSlippage(lastSwap.amountOut, slippageE18)
    // What the swap before the bridge must leave, above its slippage floor, or revert (the user keeps the input):
    // - a CCTP burn that ends the route: Circle may keep up to maxFee of whatever is burned, so toAmountMin plus
    //   maxFee; the slippage floor alone lets the mint fall short of toAmountMin by maxFee's share of the slippage;
    // - an Across deposit: the deposit is whatever the swap returns and the relayer keeps it less outputAmount, so at
    //   the slippage floor that margin falls short of the fee the quote priced (by the slippage's share of the fixed
    //   fee and gas) and a relayer need not fill it: at least the deposit whose own fee leaves outputAmount.
    const needed =
      lastSwap === undefined
        ? undefined
        : lane.bridge.protocol === 'across'
          ? leastBridgeInput(catalogue, route, outputAmount)
          : endsHere && lane.bridge.protocol === 'cctp-v2'
            ? rescaleUp(amounts.toAmountMin, lane.to, lane.from) + maxFee
            : undefined
    if (lastSwap !== undefined && needed !== undefined) {
      if (needed > lastSwap.amountOut)
        throw new Error(
          `route ${route.id}: the swap before the bridge is priced at ${lastSwap.amountOut}, below the ${needed} it must leave`,
        )
      if (needed > leastBurn) {
        leastBurn = needed
        calls[bridgeIndex - 1] = swapCalls(steps, route.sourceSwaps, slippageE18, source.executor, deadline, needed)[
          bridgeIndex - 1
        ] as RouterCall
      }
    }
    leastBridged =
      lane.bridge.protocol === 'across'
        ? outputAmount
        : lane.bridge.protocol === 'cctp-v2'
          ? rescaleDown(maxBig(leastBurn - maxFee, 0n), lane.from, lane.to)
          : outputMin
    calls.push(
      encodeBridgeCall({
        lane,
        amountIn: bridgeIn,
        outputAmount,
        outputMin,
        maxFee,
        recipient: endsHere ? recipient : destination.executor,
        ...(destinationOrder ? { message: encodeDestinationOrder(destinationOrder) } : {}),
        refundTo: sender,
        destinationChainId: destinationChain.chainId,
        quoteTimestampSec: nowSec,
        fillDeadlineSec: nowSec + ACROSS_FILL_WINDOW_SEC,
        nativeFeeWei: withFeeHeadroom(nativeWeiForUsd(catalogue, lane.from.chain, sized.messagingFeeUsdE18)),
        composeGas: withGasMargin(catalogue, destinationGasUnits),
      }),
    )
  }

  const isSameChain = !lane
  const order: RouterOrder = {
    ref,
    tokenIn: route.from.address,
    amountIn,
    fee: margin,
    tokenOut: isSameChain ? route.to.address : zeroAddress,
    minOut: isSameChain ? amounts.toAmountMin : 0n,
    recipient,
    deadline,
    calls,
  }
  const value = calls.reduce((sum, call) => sum + call.value, 0n)
  const chainId = chainIdOf(catalogue, route.from.chain)
  const data = encodeFunctionData({ ...routerExecuteCall, args: [order] })
  return {
    ok: true,
    transactionRequest: {
      chainId,
      from: sender,
      to: source.router,
      data,
      value: toHex(value),
      // The execution estimate plus, on an Arbitrum-style chain, the L2 gas of this calldata's L1 data, with the margin.
      gas: toHex(transactionGasLimit(catalogue, route.from.chain, sized.sourceGasUnits, calldataBytesOf(data))),
    },
    ...buildApproval({ catalogue, token: route.from, chainId, owner: sender, spender: source.router, amount: amountIn }),
    order,
    ...(destinationOrder && lane ? { destinationOrder, destinationExecutor: parameters.routerOn(lane.to.chain).executor } : {}),
    ...(leastBridged === undefined ? {} : { leastBridged }),
    routedAmount,
    margin,
    sized,
    relayFee,
  }
}

/**
 * After a source swap, our relayer's destination gas on a CCTP route in the input token: `relayGas` of the burned
 * token turned back through the swaps at their average rate, rounded down, and the swaps priced again at the input
 * less it. A swap's output is concave in its input, so taking input away at the average rate loses at most `relayGas`
 * of output; where rounding makes it lose more, the fee is lowered until it does not. So the burn is at least the priced
 * burn less the gas, and maxFee (the burn less what the quote delivers) still covers Circle's fee on it. Undefined
 * when there is no gas to collect or no fee that keeps that (the gas then stays in the burn, as it used to).
 */
function relayFeeBeforeSwaps(
  catalogue: Catalogue,
  sizedRoute: SizedRoute,
  swapAt: SwapAt | undefined,
): { relayFee: bigint; steps: readonly StepEstimate[] } | undefined {
  const { route, routedAmount, sized } = sizedRoute
  const bridgeStep = sized.steps[route.sourceSwaps.length]
  const relayGas = sized.relayGasAmount
  if (relayGas === 0n || bridgeStep?.kind !== 'bridge' || bridgeStep.amountIn === 0n) return undefined
  const floor = bridgeStep.amountIn - relayGas
  let relayFee = (relayGas * routedAmount) / bridgeStep.amountIn
  for (let attempt = 0; attempt < 3 && relayFee > 0n && relayFee < routedAmount; attempt++) {
    const repriced = simulateRoute(catalogue, route, routedAmount - relayFee, swapAt)
    const burned = repriced.steps[route.sourceSwaps.length]?.amountIn ?? 0n
    if (burned >= floor) return { relayFee, steps: repriced.steps }
    relayFee -= ceilDiv((floor - burned) * routedAmount, bridgeStep.amountIn) + 1n
  }
  return undefined
}

const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b)

/** An amount of `to` expressed in `from`'s decimals, rounded up. */
function rescaleUp(amount: bigint, to: Token, from: Token): bigint {
  if (from.decimals >= to.decimals) return amount * pow10(from.decimals - to.decimals)
  return ceilDiv(amount, pow10(to.decimals - from.decimals))
}

/** An amount of `to` expressed in `from`'s decimals, rounded down. */
function rescaleDown(amount: bigint, to: Token, from: Token): bigint {
  if (from.decimals >= to.decimals) return amount * pow10(from.decimals - to.decimals)
  return amount / pow10(to.decimals - from.decimals)
}

export function chainIdOf(catalogue: Catalogue, chain: ChainCode): number {
  const info = catalogue.chains.get(chain)
  if (!info) throw new Error(`chain ${chain} is not in the catalogue`)
  return info.chainId
}
