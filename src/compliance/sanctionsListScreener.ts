import type { SanctionsList } from '../schemas/sanctions.ts'
import type { Screener, ScreenResult } from './screener.ts'

/**
 * Screens against a parsed sanctions list: case-insensitive (lowercase, EIP-55 and uppercase hex all match) with
 * one Set lookup; a string that is not an address is simply not listed, since validation happens elsewhere.
 */
export function sanctionsListScreener(list: SanctionsList): Screener {
  const listed = new Set(list.addresses.map((address) => address.toLowerCase()))
  const name = `ofac-sdn@${list.asOf}`
  return {
    async screen(address: string): Promise<ScreenResult> {
      // Trimmed so padding a listed address never slips past the screen if a later step trims it.
      return listed.has(address.trim().toLowerCase()) ? { isListed: true, list: name } : { isListed: false }
    },
  }
}
