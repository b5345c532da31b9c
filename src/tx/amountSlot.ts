import { type Hex, keccak256, stringToHex } from 'viem'

/** A 32-byte value no real amount takes, placed in the amount argument to find where the encoder put it. */
const SENTINEL = BigInt(keccak256(stringToHex('swapeazi.amount-slot.v1')))
const SENTINEL_HEX = SENTINEL.toString(16).padStart(64, '0')
/** Four bytes of selector, then 32-byte words. */
const SELECTOR_BYTES = 4

export type EncodeWithAmountSlotReturnType = { data: Hex; amountOffset: bigint }

/**
 * Encodes a call through the viem encoder with a sentinel amount, to learn the byte offset of the amount argument
 * (the executor writes the actual balance there on chain), then puts the estimated amount in that word. Throws
 * unless the sentinel appears exactly once, word-aligned: an encoder that moved or duplicated the amount would
 * otherwise patch the wrong bytes.
 */
export function encodeWithAmountSlot(encode: (amount: bigint) => Hex, amount: bigint): EncodeWithAmountSlotReturnType {
  const probe = encode(SENTINEL)
  const lower = probe.toLowerCase()
  const at = lower.indexOf(SENTINEL_HEX, 2)
  if (at < 0 || lower.indexOf(SENTINEL_HEX, at + 1) >= 0) throw new Error('the amount argument must appear exactly once in the calldata')
  const byteOffset = (at - 2) / 2
  if (!Number.isInteger(byteOffset) || (byteOffset - SELECTOR_BYTES) % 32 !== 0)
    throw new Error(`the amount argument is not word-aligned (byte ${byteOffset})`)
  return { data: withAmountAt(probe, at, amount) ?? encode(amount), amountOffset: BigInt(byteOffset) }
}

/**
 * The probe with `amount` in the sentinel's word: what encoding `amount` gives, without encoding the call again. A
 * static integer argument is its value as one big-endian 32-byte word and nothing else in the call depends on it, and
 * an argument type that took the sentinel takes every amount from 0 to it. Undefined outside that range, where the
 * encoder itself must answer (and refuse what the type cannot hold).
 */
function withAmountAt(probe: Hex, at: number, amount: bigint): Hex | undefined {
  if (amount < 0n || amount > SENTINEL) return undefined
  return `${probe.slice(0, at)}${amount.toString(16).padStart(64, '0')}${probe.slice(at + 64)}` as Hex
}
