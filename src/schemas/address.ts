import * as z from 'zod'

/** An EVM address as viem types it: `0x` and 40 hex digits (any case; checksums are checked where they matter). */
export type Address = `0x${string}`
/** Hex data or a hex quantity, as viem types it. */
export type Hex = `0x${string}`

/** A 20-byte address on the wire; its inferred type is viem's `Address`. */
export const AddressSchema = z.templateLiteral(['0x', z.string().regex(/^[0-9a-fA-F]{40}$/)])
/** Hex data or a quantity on the wire; its inferred type is viem's `Hex`. */
export const HexSchema = z.templateLiteral(['0x', z.string().regex(/^[0-9a-fA-F]*$/)])
