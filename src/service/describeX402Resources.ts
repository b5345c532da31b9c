import type { X402Manifest } from '../schemas/x402.ts'
import type { ServiceDeps } from './deps.ts'
import { PAID_SWAP_PATHS, paymentRequirementsFor } from './paymentRequirementsFor.ts'

/** DESIGN 7.19: `/.well-known/x402.json`, the paid endpoints with the same requirements their 402 carries. */
export function describeX402Resources(deps: Pick<ServiceDeps, 'catalogue' | 'payTo'>, publicUrl: string): X402Manifest {
  return {
    x402Version: 1,
    resources: PAID_SWAP_PATHS.map((path) => {
      const resource = `${publicUrl}${path}`
      return { resource, method: 'POST', accepts: [paymentRequirementsFor(deps, resource)] }
    }),
  }
}
