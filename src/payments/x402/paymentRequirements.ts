import { type Address, getAddress } from 'viem'
import type { PaymentRequirements } from '../../schemas/x402.ts'

/** Spec 2.6 and 4 rule 9: USD 0.02 in USDC (6 decimals). Fixed, never computed from a float. */
export const AGENT_CALL_FEE_ATOMIC = 20_000n
/** DESIGN 7.6: time for the swap build and a settlement to land before the authorization expires. */
export const MAX_TIMEOUT_SECONDS = 300
/** Base mainnet, where the fee is paid; the chain id of the EIP-712 domain. */
export const BASE_CHAIN_ID = 8453
/** The EIP-712 domain name and version of USDC on Base mainnet ("USDC" on Base Sepolia would not verify). */
export const USDC_BASE_EIP712 = { name: 'USD Coin', version: '2' } as const

export type BuildPaymentRequirementsParameters = {
  /** Absolute URL of the paid endpoint. */
  resource: string
  payTo: Address
  /** USDC on Base, from the manifest. */
  asset: Address
  description: string
}

/** The one payment option every 402 offers: exact, base, 20000 atomic USDC to our payTo. */
export function buildPaymentRequirements(parameters: BuildPaymentRequirementsParameters): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'base',
    maxAmountRequired: AGENT_CALL_FEE_ATOMIC.toString(),
    resource: parameters.resource,
    description: parameters.description,
    mimeType: 'application/json',
    payTo: getAddress(parameters.payTo),
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: getAddress(parameters.asset),
    outputSchema: { input: { type: 'http', method: 'POST', discoverable: true, bodyType: 'json' } },
    extra: { ...USDC_BASE_EIP712 },
  }
}
