import { isAddressEqual } from 'viem'
import { INERT_OWNER } from '../contracts/deployRouter.ts'
import { isEvmToken } from '../engine/index.ts'
import { buildPaymentRequirements } from '../payments/x402/paymentRequirements.ts'
import type { PaymentRequirements } from '../schemas/x402.ts'
import type { ServiceDeps } from './deps.ts'

/** The paid endpoints (spec 4 rows 4 and 5), in the order the x402 manifest lists them. */
export const PAID_SWAP_PATHS = ['/api/x402/swap', '/api/mpp/swap'] as const

const DESCRIPTION =
  'SwapEazi swap build: an unsigned router transaction for the route asked for (BALANCED, as the free quote answers, unless the body names another ranking in route, or a quoteId to build as quoted; USD 0.02 per call; the 0.5% swap fee is inside the route).'

/**
 * What a payer is told before signing on a service whose x402 payments go to the inert 0x…dEaD (the embedded
 * default, whose settlement can only be the ledger): undefined elsewhere.
 */
export function demonstrationNotice(deps: Pick<ServiceDeps, 'payTo' | 'settler' | 'mpp'>): string | undefined {
  // Settled on chain or by a facilitator, an authorization to 0x…dEaD really moves (burns) the payer's USDC.
  if (deps.settler.mode !== 'ledger' || !isAddressEqual(deps.payTo, INERT_OWNER)) return undefined
  const mpp = deps.mpp === undefined ? '' : ' MPP on /api/mpp/swap is not a demonstration: it takes real pathUSD.'
  return `This service is a demonstration: the x402 payment's payTo ${INERT_OWNER} is an address nobody controls, and the payment is only recorded by this service, never collected; the transactions it builds call a router of its operator's only where one is set (health's routers.inertChains lists the chains without), and nextSteps says first when they must not be signed.${mpp}`
}

/** What a call to a paid endpoint costs, as the 402 challenge and /.well-known/x402.json both offer it. */
export function paymentRequirementsFor(
  deps: Pick<ServiceDeps, 'catalogue' | 'payTo' | 'settler' | 'mpp'>,
  resource: string,
): PaymentRequirements {
  // Spec 2.6: the asset is the manifest's Base USDC entry.
  const usdc = deps.catalogue.tokensByLowerKey.get('BAS:usdc')
  if (!usdc || !isEvmToken(usdc)) throw new Error('the catalogue lists no USDC on Base, the asset every x402 payment is made in')
  const notice = demonstrationNotice(deps)
  return buildPaymentRequirements({
    resource,
    payTo: deps.payTo,
    asset: usdc.address,
    description: notice === undefined ? DESCRIPTION : `${DESCRIPTION} ${notice}`,
  })
}
