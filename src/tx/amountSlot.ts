import { type Hex, keccak256, stringToHex } from 'viem'

/** A 32-byte value no real amount takes, placed in the amount argument to find where the encoder put it. */
const SENTINEL = BigInt(keccak256(stringToHex('swapeazi.amount-slot.v1')))
const SENTINEL_HEX = SENTINEL.toString(16).padStart(64, '0')
/** Four bytes of selector, then 32-byte words. */
const SELECTOR_BYTES = 4

export type EncodeWithAmountSlotReturnType = { data: Hex; amountOffset: bigint }

/**
 * Encodes a call twice through the same viem encoder: once with a sentinel amount, to learn the byte offset of the
 * amount argument (the executor writes the actual balance there on chain), and once with the estimated amount.
 * Throws unless the sentinel appears exactly once, word-aligned: an encoder that moved or duplicated the amount
 * would otherwise patch the wrong bytes.
 */
export function encodeWithAmountSlot(encode: (amount: bigint) => Hex, amount: bigint): EncodeWithAmountSlotReturnType {
  const probe = encode(SENTINEL).toLowerCase()
  const at = probe.indexOf(SENTINEL_HEX, 2)
  if (at < 0 || probe.indexOf(SENTINEL_HEX, at + 1) >= 0) throw new Error('the amount argument must appear exactly once in the calldata')
  const byteOffset = (at - 2) / 2
  if (!Number.isInteger(byteOffset) || (byteOffset - SELECTOR_BYTES) % 32 !== 0)
    throw new Error(`the amount argument is not word-aligned (byte ${byteOffset})`)
  return { data: encode(amount), amountOffset: BigInt(byteOffset) }
}
