import { ceilDiv } from './decimal.ts'
import type { Catalogue } from './types.ts'

/** Intrinsic gas of any transaction. */
export const BASE_TX_GAS = 21_000n

/** A gas estimate with the catalogue's safety margin (`pricing.gasMarginPercent`), rounded up. */
export const withGasMargin = (catalogue: Pick<Catalogue, 'pricing'>, gasUnits: bigint): bigint =>
  ceilDiv(gasUnits * (100n + catalogue.pricing.gasMarginPercent), 100n)
