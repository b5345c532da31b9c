import { ceilDiv, pow10 } from './decimal.ts'
import { BASE_TX_GAS, L1_FEE_TX_BYTES, transactionGasLimit } from './gas.ts'
import type { CandidateRoute, CostItem, PricedRoute, StepEstimate } from './route.ts'
import { swapOut, tokenAmountForUsd, usdValue } from './swapOut.ts'
import type { Catalogue, ChainInfo, SwapEdge } from './types.ts'

const PPM = 1_000_000n

function chainOf(catalogue: Catalogue, id: string): ChainInfo {
  const chain = catalogue.chains.get(id as ChainInfo['id'])
  if (!chain) throw new RangeError(`chain ${id} is not in the catalogue`)
  return chain
}

/** What one swap edge gives for an input: `swapOut` on the snapshot's pools, or on pools earlier legs moved (PoolInflows). */
export type SwapAt = (edge: SwapEdge, amountIn: bigint) => bigint

function runSwaps(edges: readonly SwapEdge[], amountIn: bigint, steps: StepEstimate[], costs: CostItem[], swapAt: SwapAt): bigint {
  let amount = amountIn
  for (const edge of edges) {
    const out = swapAt(edge, amount)
    steps.push({ kind: 'swap', id: edge.venue.id, tool: edge.venue.tool, from: edge.from, to: edge.to, amountIn: amount, amountOut: out })
    const outUsd = usdValue(edge.to, out)
    const lossUsd = usdValue(edge.from, amount) - outUsd
    // The venue's fee is a fixed share of its gross output; whatever else was lost against the oracle is impact.
    const grossOutUsd = (outUsd * PPM) / (PPM - edge.venue.feePpm)
    const feeUsd = (grossOutUsd * edge.venue.feePpm) / PPM
    costs.push({ kind: 'dex_fee', label: `${edge.venue.name} fee`, usdE18: feeUsd })
    costs.push({ kind: 'price_impact', label: `${edge.venue.name} price impact`, usdE18: lossUsd - feeUsd })
    amount = out
  }
  return amount
}

interface BridgeCharges {
  feePpm: bigint
  /** The bridge's share of what it carries (feePpm of it), rounded up. */
  fee: bigint
  fixedFee: bigint
  /** Gas spent completing the transfer on the destination, in the bridged token. */
  destinationGas: bigint
  /** What arrives, in the destination token's atomic units, rounded down. */
  delivered: bigint
}

/** What a route's bridge charges for carrying `bridgedIn` of its input token, and what it then delivers. */
function bridgeCharges(catalogue: Catalogue, route: CandidateRoute, bridgedIn: bigint): BridgeCharges {
  const lane = route.bridge
  if (!lane) throw new RangeError(`route ${route.id} has no bridge`)
  const { bridge } = lane
  const destination = chainOf(catalogue, lane.to.chain)
  // A lane's own fees (an Across lane's suggested fees read live) take the place of the bridge's.
  const feePpm = lane.feePpm ?? bridge.feePpmBySource[lane.from.chain] ?? bridge.feePpmDefault
  const fee = ceilDiv(bridgedIn * feePpm, PPM)
  const fixedFeeUsdE18 = lane.fixedFeeUsdE18 ?? bridge.fixedFeeUsdE18
  const fixedFee = fixedFeeUsdE18 > 0n ? tokenAmountForUsd(lane.from, fixedFeeUsdE18) : 0n
  // Whoever completes the transfer on the destination (relayer fill, CCTP mint, our router's destination swaps)
  // spends gas there; it is paid out of the bridged amount, unless a live compose fee already pays the executor for
  // the swaps on arrival.
  let destinationGasUnits = lane.destinationGasUnits ?? bridge.destinationGasUnits
  if (route.destinationSwaps.length > 0 && !lane.isComposeGasPrepaid) {
    destinationGasUnits += catalogue.pricing.routerOverheadGasUnits
    for (const edge of route.destinationSwaps) destinationGasUnits += edge.venue.gasUnits
  }
  const destinationGasUsd = destinationGasUnits * destination.gasUnitUsdE18
  const destinationGas = destinationGasUsd > 0n ? tokenAmountForUsd(lane.from, destinationGasUsd) : 0n
  const net = bridgedIn - fee - fixedFee - destinationGas
  const delivered = net > 0n ? (net * pow10(lane.to.decimals)) / pow10(lane.from.decimals) : 0n
  return { feePpm, fee, fixedFee, destinationGas, delivered }
}

/**
 * The least amount a route's bridge must be handed to deliver at least `delivered` of its destination token: the
 * inverse of what the bridge step charges, so an Across deposit of at least this leaves the relayer the whole fee
 * the quote priced for an output of `delivered`. Exact: the bridge delivers less for one unit fewer.
 */
export function leastBridgeInput(catalogue: Catalogue, route: CandidateRoute, delivered: bigint): bigint {
  const lane = route.bridge
  if (!lane) throw new RangeError(`route ${route.id} has no bridge`)
  if (delivered <= 0n) return 0n
  const { feePpm, fixedFee, destinationGas } = bridgeCharges(catalogue, route, 0n)
  const { decimals: from } = lane.from
  const { decimals: to } = lane.to
  // The least net amount that rounds to `delivered` in the destination's decimals, then the fees on top of it.
  const net = from >= to ? delivered * pow10(from - to) : ceilDiv(delivered, pow10(to - from))
  const wanted = net + fixedFee + destinationGas
  if (feePpm >= PPM) throw new RangeError(`route ${route.id}: the bridge keeps everything it carries`)
  let amount = ceilDiv(wanted * PPM, PPM - feePpm)
  // The closed form lands within a unit or two of the answer: the fee's own rounding up decides the rest.
  while (bridgeCharges(catalogue, route, amount).delivered < delivered) amount++
  while (amount > 0n && bridgeCharges(catalogue, route, amount - 1n).delivered >= delivered) amount--
  return amount
}

/**
 * Prices a candidate route for `amountIn` atomic units of its input: runs every step in atomic units, itemises what
 * each costs against the snapshot's oracle prices, and estimates the signer's gas and the duration. Swaps are priced
 * by `swapAt`: the snapshot's pools, unless a batch's earlier legs have moved them.
 */
export function simulateRoute(catalogue: Catalogue, route: CandidateRoute, amountIn: bigint, swapAt: SwapAt = swapOut): PricedRoute {
  const steps: StepEstimate[] = []
  const costs: CostItem[] = []
  const source = chainOf(catalogue, route.from.chain)
  let amount = runSwaps(route.sourceSwaps, amountIn, steps, costs, swapAt)
  let sourceGasUnits = catalogue.pricing.routerOverheadGasUnits
  for (const edge of route.sourceSwaps) sourceGasUnits += edge.venue.gasUnits
  let messagingFeeUsdE18 = 0n
  let relayGasAmount = 0n
  let durationP50Sec = source.blockTimeSec
  let durationP95Sec = source.blockTimeSec * 3

  const lane = route.bridge
  if (lane) {
    const { bridge } = lane
    const destination = chainOf(catalogue, lane.to.chain)
    const bridgedIn = amount
    const { fee, fixedFee, destinationGas, delivered } = bridgeCharges(catalogue, route, bridgedIn)
    // CCTP messages are received on the destination by our relayer (no bridge relayer is paid to): its gas is ours.
    if (bridge.protocol === 'cctp-v2') relayGasAmount = destinationGas
    steps.push({
      kind: 'bridge',
      id: bridge.id,
      tool: bridge.name,
      from: lane.from,
      to: lane.to,
      amountIn: bridgedIn,
      amountOut: delivered,
    })
    const feeUsd = usdValue(lane.from, fee)
    const fixedUsd = usdValue(lane.from, fixedFee)
    const gasUsd = usdValue(lane.from, destinationGas)
    costs.push({ kind: 'bridge_fee', label: `${bridge.name} fee`, usdE18: feeUsd })
    if (fixedFee > 0n) costs.push({ kind: 'bridge_fixed_fee', label: `${bridge.name} fixed fee`, usdE18: fixedUsd })
    if (destinationGas > 0n) costs.push({ kind: 'destination_gas', label: `gas on ${destination.name}`, usdE18: gasUsd })
    const rest = usdValue(lane.from, bridgedIn) - usdValue(lane.to, delivered) - feeUsd - fixedUsd - gasUsd
    if (rest !== 0n) costs.push({ kind: 'rounding', label: `${bridge.name} decimal conversion`, usdE18: rest })
    amount = delivered
    sourceGasUnits += bridge.gasUnits
    messagingFeeUsdE18 = route.destinationSwaps.length > 0 ? lane.composeMessagingFeeUsdE18 : lane.messagingFeeUsdE18
    // A lane's own duration (an Across lane's, from Across's fill estimate read live) takes the place of the prior.
    const prior = lane.duration ?? bridge.durationBySource[lane.from.chain] ?? bridge.durationDefault
    durationP50Sec += prior.p50Sec
    durationP95Sec += prior.p95Sec
    if (route.destinationSwaps.length > 0) {
      durationP50Sec += destination.blockTimeSec
      durationP95Sec += destination.blockTimeSec * 3
    }
  }
  amount = runSwaps(route.destinationSwaps, amount, steps, costs, swapAt)

  // Before the transaction is built its calldata is not known: on an Arbitrum-style chain the limit makes room for the
  // L1 gas of the largest (the built transaction's own `gas` is sized for its calldata, buildRouteTransaction.ts).
  const gasLimit = transactionGasLimit(catalogue, source.id, BASE_TX_GAS + sourceGasUnits, L1_FEE_TX_BYTES)
  const sourceCostUsdE18 = (BASE_TX_GAS + sourceGasUnits) * source.gasUnitUsdE18 + source.l1FeeUsdE18 + messagingFeeUsdE18
  return {
    route,
    amountIn,
    amountOut: amount,
    steps,
    costs,
    realCostUsdE18: usdValue(route.from, amountIn) - usdValue(route.to, amount),
    sourceGasUnits: BASE_TX_GAS + sourceGasUnits,
    gasLimit,
    sourceCostUsdE18,
    messagingFeeUsdE18,
    relayGasAmount,
    durationP50Sec,
    durationP95Sec,
  }
}
