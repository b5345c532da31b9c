import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/**
 * DESIGN 7.18: the sender, and the recipient when another address receives, are screened before anything is built
 * or paid for. A hit is 403 `address_screened`; the answer names no list.
 */
export async function screenSwapAddresses(
  deps: Pick<ServiceDeps, 'screener' | 'log'>,
  addresses: { fromAddress: string; toAddress?: string | undefined },
): Promise<void> {
  const roles: [string, string][] = [['fromAddress', addresses.fromAddress]]
  if (addresses.toAddress !== undefined && addresses.toAddress.toLowerCase() !== addresses.fromAddress.toLowerCase())
    roles.push(['toAddress', addresses.toAddress])
  for (const [field, address] of roles) {
    const result = await deps.screener.screen(address)
    if (result.isListed) {
      deps.log.warn({ event: 'address_screened', field, address: address.toLowerCase(), list: result.list }, 'address_screened')
      throw new ServiceError(
        'address_screened',
        `The ${field} cannot be served: it failed compliance screening. No swap was built and nothing was charged.`,
        { field },
      )
    }
  }
}
