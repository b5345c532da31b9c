import type { ChainCode } from '../schemas/catalogue.ts'
import { ceilDiv } from './decimal.ts'
import type { Catalogue, ChainInfo, L1GasPrices } from './types.ts'

/** Intrinsic gas of any transaction. */
export const BASE_TX_GAS = 21_000n

/**
 * The most gas one transaction may ask for: 2^24, Ethereum's cap per transaction since Fusaka (EIP-7825; a node
 * refuses a transaction whose gas limit is above it). Held on every chain: none of the catalogue's takes less, and a
 * batch above it on a chain that takes more is rare enough to split (the other chains' own caps were not checked
 * against their live nodes here).
 */
export const MAX_TRANSACTION_GAS = 16_777_216n

/** A gas estimate with the catalogue's safety margin (`pricing.gasMarginPercent`), rounded up. */
export const withGasMargin = (catalogue: Pick<Catalogue, 'pricing'>, gasUnits: bigint): bigint =>
  ceilDiv(gasUnits * (100n + catalogue.pricing.gasMarginPercent), 100n)

/**
 * The size, in bytes of the unsigned RLP-encoded transaction, a rollup's L1 data fee is priced for: at least our
 * largest router transaction (src/market/feedCatalogue.ts reads the live fee for it; test/market/l1DataFee.test.ts
 * builds every route of the catalogue against it). The longest the builder makes is a route with two swaps, a bridge
 * and a destination order of two swaps through Balancer (3,524 bytes of calldata with the catalogue of 2026-11), plus
 * at most about 230 bytes of the transaction's other fields: 3,751, and some room for the catalogue to grow. The
 * snapshot's `l1FeeUsd` is the fee of a transaction this size.
 */
export const L1_FEE_TX_BYTES = 4_096

/**
 * What a signed EIP-1559 transaction adds to its calldata, in bytes, at its widest: the type byte, the list's
 * header (4), chain id, nonce and gas (9 each), the two fee caps and the value (33 each), `to` (21), the calldata's
 * header (4), an empty access list (1), the y parity (1) and r and s (33 each): 224, rounded up to 256.
 */
export const TX_ENVELOPE_BYTES = 256

/**
 * The chains that charge the L1 data fee inside the gas limit, as L2 gas (Arbitrum: the poster's L1 cost in wei
 * divided by the block's base fee, docs/live-market.md), and the least base fee the snapshot assumes there when the
 * live market has not read the chain's own (ArbGasInfo `getMinimumGasPrice`): 0.01 gwei, Arbitrum One's floor from
 * March 2024 (ArbOS 20) until ArbOS 51 raised it to 0.02 gwei. A floor assumed lower than the chain's only makes the
 * limit larger. The OP-stack chains (Base, Optimism, Celo) charge their L1 fee apart from the gas limit.
 */
export const L1_GAS_IN_LIMIT: Readonly<Partial<Record<ChainCode, { minBaseFeeWei: bigint }>>> = {
  ARB: { minBaseFeeWei: 10_000_000n },
}

/**
 * The L2 gas an Arbitrum-style chain charges for posting a transaction of `calldataBytes` bytes of calldata to L1,
 * before the margin: its L1 cost in wei (the per-transaction price, plus the per-byte price times the calldata and
 * TX_ENVELOPE_BYTES; Arbitrum charges the compressed size, never more than this) divided by the chain's minimum base
 * fee, rounded up. The L2 gas is the L1 cost divided by the base fee of the block it is mined in, which can fall but
 * never below the minimum: so this is the most the chain can charge for it. 0 on a chain that charges its L1 fee
 * outside the gas limit, or has none.
 */
export function l1GasUnits(chain: Pick<ChainInfo, 'l1GasPrices'>, calldataBytes: number): bigint {
  const prices: L1GasPrices | undefined = chain.l1GasPrices
  if (prices === undefined) return 0n
  const costWei = prices.perTxWei + prices.perByteWei * BigInt(calldataBytes + TX_ENVELOPE_BYTES)
  return ceilDiv(costWei, prices.minBaseFeeWei)
}

/**
 * The gas limit of a transaction the user signs on `chain`: its execution gas (intrinsic gas included) plus, on an
 * Arbitrum-style chain, the L2 gas of its L1 data (l1GasUnits for `calldataBytes`), with the catalogue's margin.
 * Elsewhere it is `withGasMargin(executionGasUnits)`.
 */
export function transactionGasLimit(
  catalogue: Pick<Catalogue, 'pricing' | 'chains'>,
  chain: ChainCode,
  executionGasUnits: bigint,
  calldataBytes: number,
): bigint {
  const info = catalogue.chains.get(chain)
  if (info === undefined) throw new RangeError(`chain ${chain} is not in the catalogue`)
  return withGasMargin(catalogue, executionGasUnits + l1GasUnits(info, calldataBytes))
}

/** The bytes of a transaction's calldata given as hex. */
export const calldataBytesOf = (data: `0x${string}`): number => (data.length - 2) / 2
