import type { BridgeLane, SwapEdge, Token } from './types.ts'

/** What a route does, apart from how much it moves: swaps on the source chain, at most one bridge, swaps after. */
export type CandidateRoute = {
  id: string
  from: Token
  to: Token
  sourceSwaps: readonly SwapEdge[]
  bridge?: BridgeLane
  destinationSwaps: readonly SwapEdge[]
}

export type CostKind = 'dex_fee' | 'price_impact' | 'bridge_fee' | 'bridge_fixed_fee' | 'destination_gas' | 'rounding'

/** One itemised real cost of a route, paid out of the 0.5% fee, in USD (18-decimal fixed point). */
export type CostItem = { kind: CostKind; label: string; usdE18: bigint }

export type StepKind = 'swap' | 'bridge'

/** One step with its estimate: what goes in, what comes out. */
export type StepEstimate = {
  kind: StepKind
  /** Venue id for a swap, bridge id for a bridge. */
  id: string
  tool: string
  from: Token
  to: Token
  amountIn: bigint
  amountOut: bigint
}

export type NotViableReason =
  | 'cost_exceeds_fee'
  | 'below_bridge_minimum'
  | 'above_bridge_maximum'
  /** A swap leg is larger than the largest size its venue was quoted at live (a quote ladder): nothing is known beyond it. */
  | 'above_venue_liquidity'
  | 'no_output'

/** A candidate route priced for one input amount. */
export type PricedRoute = {
  route: CandidateRoute
  amountIn: bigint
  /** What the route delivers when the whole input runs through it. */
  amountOut: bigint
  steps: readonly StepEstimate[]
  costs: readonly CostItem[]
  /** usd(amountIn) − usd(amountOut): bridge, DEX, impact and destination-gas costs the 0.5% has to cover. */
  realCostUsdE18: bigint
  /** Gas of the signer's transaction on the source chain (before the safety margin). */
  sourceGasUnits: bigint
  /**
   * Gas limit for the transaction: sourceGasUnits plus, on an Arbitrum-style chain, the L2 gas of the L1 data of a
   * transaction of up to L1_FEE_TX_BYTES (gas.ts l1GasUnits), with the safety margin. The built transaction's `gas`
   * is sized for its own calldata, which every route of the catalogue keeps within that (test/market/l1DataFee.test.ts).
   */
  gasLimit: bigint
  /** The signer's cost on the source chain: gas, rollup data fee and any bridge messaging fee, in USD. */
  sourceCostUsdE18: bigint
  messagingFeeUsdE18: bigint
  /**
   * Of the destination gas taken from the bridged amount, what our own relayer spends (a CCTP delivery: relayCctp or
   * receiveMessage), in the bridged token's atomic units: nothing on chain pays it to the relayer, so the builder
   * collects it with the fee (0 on other bridges, whose relayers are paid by the bridge).
   */
  relayGasAmount: bigint
  durationP50Sec: number
  durationP95Sec: number
}

/** Route id: the steps in order, readable in logs and stable for a given catalogue. */
export function routeId(sourceSwaps: readonly SwapEdge[], bridge: BridgeLane | undefined, destinationSwaps: readonly SwapEdge[]): string {
  const swap = (edge: SwapEdge): string => `${edge.venue.id}:${edge.from.symbol}>${edge.to.symbol}`
  const parts = sourceSwaps.map(swap)
  if (bridge) parts.push(`${bridge.bridge.id}:${bridge.from.chain}>${bridge.to.chain}`)
  parts.push(...destinationSwaps.map(swap))
  return parts.join('|')
}
