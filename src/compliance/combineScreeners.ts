import type { Screener, ScreenResult } from './screener.ts'

/**
 * Joins several screeners (the shipped list, later an on-chain oracle) into one: an address is listed if any of
 * them lists it, and the first hit in the given order is the one reported.
 */
export function combineScreeners(screeners: readonly Screener[]): Screener {
  const all = [...screeners]
  return {
    async screen(address: string): Promise<ScreenResult> {
      // Sequential on purpose: the local list answers first and spares the oracle call on a hit.
      for (const screener of all) {
        const result = await screener.screen(address)
        if (result.isListed) return result
      }
      return { isListed: false }
    },
  }
}
