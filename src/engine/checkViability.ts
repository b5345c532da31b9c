import type { NotViableReason, PricedRoute } from './route.ts'

const BPS = 10_000n
import { exceedsLadder, usdValue } from './swapOut.ts'

/**
 * Whether a priced route can deliver the promised `toAmount` within its bridge's limits. A route whose real cost
 * exceeds the fee it earns delivers less than `toAmount` and is not offered: the service never sells at a loss.
 * `feeBps` (the all-in fee) bounds what the build keeps back from the route (its margin, and a relayer's gas): the
 * deposit built is at least the priced one less that share, so a bridge's minimum is checked against that.
 */
export function checkViability(priced: PricedRoute, toAmount: bigint, feeBps = 0n): NotViableReason | undefined {
  if (exceedsQuotedSize(priced)) return 'above_venue_liquidity'
  if (priced.amountOut <= 0n || toAmount <= 0n) return 'no_output'
  const lane = priced.route.bridge
  if (lane) {
    const bridgeStep = priced.steps.find((step) => step.kind === 'bridge')
    const bridgedUsd = bridgeStep ? usdValue(lane.from, bridgeStep.amountIn) : 0n
    const bridgedIn = bridgeStep?.amountIn ?? 0n
    // The least the built deposit can be: the build runs only the input sized to deliver toAmount.
    const leastBridgedIn = (bridgedIn * (BPS - feeBps)) / BPS
    const leastBridgedUsd = (bridgedUsd * (BPS - feeBps)) / BPS
    if (leastBridgedUsd < lane.bridge.minUsdE18) return 'below_bridge_minimum'
    if (bridgedUsd > lane.bridge.maxUsdE18) return 'above_bridge_maximum'
    // A lane's own deposit limits (an Across lane's, read live), in atomic units of what it carries.
    if (lane.minAmountIn !== undefined && leastBridgedIn < lane.minAmountIn) return 'below_bridge_minimum'
    if (lane.maxAmountIn !== undefined && bridgedIn > lane.maxAmountIn) return 'above_bridge_maximum'
  }
  if (priced.amountOut < toAmount) return 'cost_exceeds_fee'
  return undefined
}

/** Whether a swap step runs more through its venue than the venue was quoted at (steps follow the route's edges). */
function exceedsQuotedSize(priced: PricedRoute): boolean {
  const edges = [...priced.route.sourceSwaps, ...priced.route.destinationSwaps]
  const swaps = priced.steps.filter((step) => step.kind === 'swap')
  return swaps.some((step, index) => {
    const edge = edges[index]
    return edge !== undefined && exceedsLadder(edge, step.amountIn)
  })
}
