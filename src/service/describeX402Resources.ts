import { requirementsV2Of } from '../payments/x402/v2.ts'
import type { X402Manifest } from '../schemas/x402.ts'
import type { ServiceDeps } from './deps.ts'
import { PAID_SWAP_PATHS, paymentRequirementsFor } from './paymentRequirementsFor.ts'

/**
 * DESIGN 7.19: `/.well-known/x402.json`, the paid endpoints with the same requirements their 402 carries: the v1
 * body's `accepts` and, as an extension, the v2 PAYMENT-REQUIRED header's (`acceptsV2`).
 */
export function describeX402Resources(deps: Pick<ServiceDeps, 'catalogue' | 'payTo' | 'settler' | 'mpp'>, publicUrl: string): X402Manifest {
  return {
    x402Version: 1,
    resources: PAID_SWAP_PATHS.map((path) => {
      const resource = `${publicUrl}${path}`
      const requirements = paymentRequirementsFor(deps, resource)
      return { resource, method: 'POST', accepts: [requirements], acceptsV2: [requirementsV2Of(requirements)] }
    }),
  }
}
