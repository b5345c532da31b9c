import { type Address, concatHex, type Hex, numberToHex, padHex } from 'viem'

/** The CCTP domains the relayer tests burn on and relay to. */
export const BASE_DOMAIN = 6
export const POLYGON_DOMAIN = 7

/**
 * A CCTP v2 message from Base to Polygon that anyone may receive (no destination caller): a 148-byte header (domain
 * at 8, nonce at 12) and a 228-byte burn body (recipient at 36, amount at 68).
 */
export function cctpBurnMessage(
  nonce: number,
  { amount = 1_000n, recipient = '0x00000000000000000000000000000000000000ab' }: { amount?: bigint; recipient?: Address } = {},
): Hex {
  const header = concatHex([
    padHex('0x01', { size: 4 }),
    padHex(numberToHex(BASE_DOMAIN), { size: 4 }),
    padHex(numberToHex(POLYGON_DOMAIN), { size: 4 }),
    padHex(numberToHex(nonce), { size: 32 }),
    padHex('0x', { size: 96 }),
    padHex('0x', { size: 8 }),
  ])
  const body = concatHex([
    padHex('0x', { size: 36 }),
    padHex(recipient),
    padHex(numberToHex(amount), { size: 32 }),
    padHex('0x', { size: 128 }),
  ])
  return concatHex([header, body])
}
