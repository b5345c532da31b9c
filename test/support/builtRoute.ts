import {
  type BuildRouteTransactionParameters,
  type BuildRouteTransactionReturnType,
  buildRouteTransaction,
} from '../../src/tx/buildRouteTransaction.ts'

/** buildRouteTransaction for a route the test expects to build: a refusal fails the test with its reason and step. */
export function builtRoute(parameters: BuildRouteTransactionParameters): BuildRouteTransactionReturnType {
  const result = buildRouteTransaction(parameters)
  if (!result.ok) throw new Error(`route refused: ${result.reason} at ${result.step}: ${result.detail}`)
  return result
}
