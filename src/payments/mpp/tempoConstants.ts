import type { Address } from 'viem'

/**
 * pathUSD, Tempo's predeployed TIP-20 dollar (6 decimals), the currency of the MPP charge (spec: 0.02 pathUSD). The
 * address is the one in shared/reference/mpp.md (mppx's defaults and Tempo's docs); it was not checked against a live
 * chain from here.
 */
export const PATH_USD: Address = '0x20c0000000000000000000000000000000000000'
export const PATH_USD_DECIMALS = 6
/** Tempo mainnet (4217); Moderato, the testnet, is 42431 (mppx defaults; not checked against a live chain either). */
export const TEMPO_MAINNET_CHAIN_ID = 4217
