import { describe, expect, it } from 'vitest'
import * as engine from '../src/engine/index.ts'

describe('public exports', () => {
  // A change to the engine's public surface shows up here in review.
  it('engine', () => {
    expect(Object.keys(engine).sort()).toMatchInlineSnapshot(`
      [
        "ACROSS_FILL_WINDOW_SEC",
        "BASE_TX_GAS",
        "CatalogueError",
        "E18",
        "L1_FEE_TX_BYTES",
        "L1_GAS_IN_LIMIT",
        "MAX_TRANSACTION_GAS",
        "MAX_UINT256",
        "NO_BRIDGE",
        "PoolInflows",
        "RANKINGS",
        "TX_ENVELOPE_BYTES",
        "bridgeWireName",
        "calldataBytesOf",
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
        "l1GasUnits",
        "leastBridgeInput",
        "maxAmountIn",
        "maxWholeTokens",
        "numberToFixed",
        "pairNotServed",
        "parseFixed",
        "parseUnitsExact",
        "pow10",
        "quotableRange",
        "quoteAmounts",
        "rankRoutes",
        "simulateRoute",
        "sizeRoute",
        "sizeRouteInput",
        "smallestQuotableAmount",
        "swapOut",
        "swapPaths",
        "tokenAmountForUsd",
        "totalCostUsdE18",
        "transactionGasLimit",
        "unbuildableSteps",
        "usdValue",
        "viableRange",
        "withGasMargin",
      ]
    `)
  })
})
