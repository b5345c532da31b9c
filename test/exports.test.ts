import { describe, expect, it } from 'vitest'
import * as engine from '../src/engine/index.ts'

describe('public exports', () => {
  // A change to the engine's public surface shows up here in review.
  it('engine', () => {
    expect(Object.keys(engine).sort()).toMatchInlineSnapshot(`
      [
        "BASE_TX_GAS",
        "CatalogueError",
        "E18",
        "MAX_UINT256",
        "NO_BRIDGE",
        "RANKINGS",
        "bridgeWireName",
        "candidateRoutes",
        "ceilDiv",
        "cellStatus",
        "checkViability",
        "compileCatalogue",
        "corridorPairs",
        "findRoutes",
        "formatAtomic",
        "formatFixedDown",
        "formatFixedUp",
        "isEvmToken",
        "maxAmountIn",
        "maxWholeTokens",
        "numberToFixed",
        "pairNotServed",
        "parseFixed",
        "parseUnitsExact",
        "pow10",
        "quoteAmounts",
        "rankRoutes",
        "simulateRoute",
        "sizeRoute",
        "sizeRouteInput",
        "swapOut",
        "swapPaths",
        "tokenAmountForUsd",
        "totalCostUsdE18",
        "unbuildableSteps",
        "usdValue",
        "viableRange",
        "withGasMargin",
      ]
    `)
  })
})
