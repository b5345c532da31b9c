import { randomBytes } from 'node:crypto'
import { type Hex, stringToHex } from 'viem'

/** Crockford base32: sortable, no I, L, O or U. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * A new swap reference (DESIGN 7.13): `swp_` and a ULID-style id, 10 characters of milliseconds then 16 of
 * randomness, so references sort by creation time. 30 ASCII characters: it fits a bytes32 on chain as it is.
 */
export function newSwapRef(nowMs: number, random: (size: number) => Uint8Array = randomBytes): string {
  let time = ''
  let ms = Math.floor(nowMs)
  for (let k = 0; k < 10; k++) {
    time = ALPHABET[ms % 32] + time
    ms = Math.floor(ms / 32)
  }
  const bytes = random(16)
  let rest = ''
  for (let k = 0; k < 16; k++) rest += ALPHABET[(bytes[k] ?? 0) % 32]
  return `swp_${time}${rest}`
}

/**
 * The reference as the router's bytes32 `ref`: its ASCII, right-padded with zeros (readable in the event). A
 * disbursement's `dsb_` reference (same id scheme) is carried the same way by each of its orders.
 */
export function swapRefToBytes32(ref: string): Hex {
  if (!/^(swp|dsb)_[0-9A-Z]{26}$/.test(ref)) throw new RangeError(`not a swap reference: ${ref}`)
  return stringToHex(ref, { size: 32 })
}
