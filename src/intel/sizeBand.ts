import { E18, formatFixedDown } from '../engine/index.ts'

/** Lower edges of the size bands, whole USD: a transfer's band is the decade its USD value falls in. */
const BAND_EDGES_USD = [0n, 100n, 1_000n, 10_000n, 100_000n] as const

export type SizeBand = { minUsd: string; maxUsd: string | null }

/**
 * The USD size band of an amount (18-decimal fixed point): under 100, 100 to 1,000, ... 100,000 and over. The
 * historically best bridge for 50 USD need not be the best for 50,000, so the optimal route is ranked within one.
 */
export function sizeBand(amountUsdE18: bigint): SizeBand {
  let index = 0
  BAND_EDGES_USD.forEach((edge, i) => {
    if (amountUsdE18 >= edge * E18) index = i
  })
  const min = BAND_EDGES_USD[index] ?? 0n
  const max = BAND_EDGES_USD[index + 1]
  return { minUsd: min.toString(), maxUsd: max === undefined ? null : max.toString() }
}

/** A USD amount as stored beside each observation: 6 places, rounded down. */
export const formatUsd = (amountUsdE18: bigint): string => formatFixedDown(amountUsdE18, 6)
