export { ACROSS_FILL_WINDOW_SEC } from './acrossFillWindow.ts'
export { bridgeWireName, NO_BRIDGE } from './bridgeWireName.ts'
export { candidateRoutes, swapPaths, type UnbuildableStep, unbuildableSteps } from './candidateRoutes.ts'
export { checkViability } from './checkViability.ts'
export { type CatalogueFiles, CatalogueError, compileCatalogue } from './compileCatalogue.ts'
export { type CellStatus, cellStatus, type NotServed, pairNotServed } from './cellStatus.ts'
export { type TokenPair, corridorPairs } from './corridorPairs.ts'
export {
  ceilDiv,
  E18,
  formatAtomic,
  formatFixedDown,
  formatFixedUp,
  numberToFixed,
  parseFixed,
  type ParseUnitsExactResult,
  parseUnitsExact,
  pow10,
} from './decimal.ts'
export {
  BASE_TX_GAS,
  MAX_TRANSACTION_GAS,
  calldataBytesOf,
  L1_FEE_TX_BYTES,
  L1_GAS_IN_LIMIT,
  l1GasUnits,
  TX_ENVELOPE_BYTES,
  transactionGasLimit,
  withGasMargin,
} from './gas.ts'
export { type FindRoutesParameters, type FindRoutesReturnType, findRoutes, type Rejection } from './findRoutes.ts'
export { isEvmToken } from './isEvmToken.ts'
export { MAX_UINT256, maxAmountIn, maxWholeTokens } from './maxAmountIn.ts'
export { type QuoteAmounts, quoteAmounts, smallestQuotableAmount } from './quoteAmounts.ts'
export { RANKINGS, type RankedRoutes, type Ranking, rankRoutes, totalCostUsdE18 } from './rankRoutes.ts'
export type { CandidateRoute, CostItem, CostKind, NotViableReason, PricedRoute, StepEstimate } from './route.ts'
export { type LaneOverdrawn, PoolInflows } from './poolInflows.ts'
export { leastBridgeInput, type SwapAt, simulateRoute } from './simulateRoute.ts'
export { type SizedRoute, sizeRoute } from './sizeRoute.ts'
export { sizeRouteInput } from './sizeRouteInput.ts'
export { swapOut, tokenAmountForUsd, usdValue } from './swapOut.ts'
export type {
  Bridge,
  BridgeLane,
  Catalogue,
  CatalogueToken,
  ChainInfo,
  DurationPrior,
  L1GasPrices,
  ListedToken,
  MarketGaps,
  PricedOn,
  SwapEdge,
  Token,
  Venue,
} from './types.ts'
export { quotableRange, type ViableRange, viableRange } from './viableRange.ts'
