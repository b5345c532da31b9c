import * as z from 'zod'

/** An EVM address as viem types it: `0x` and 40 hex digits (any case; checksums are checked where they matter). */
export type Address = `0x${string}`
/** Hex data or a hex quantity, as viem types it. */
export type Hex = `0x${string}`

/** The message of a malformed address, wherever one is parsed (requests, payments, configuration, the catalogue). */
const ADDRESS_FORMAT = 'must be 0x followed by 40 hex characters'

/**
 * A 20-byte address on the wire; its inferred type is viem's `Address`, its JSON schema a string with the pattern
 * `^0x[0-9a-fA-F]{40}$`. A string of another form reads "must be 0x followed by 40 hex characters".
 */
export const AddressSchema = z.templateLiteral(['0x', z.string().regex(/^[0-9a-fA-F]{40}$/)], { error: formatError(ADDRESS_FORMAT) })

/** `address` in lowercase, still typed as an address. */
export function lowercaseAddress(address: Address): Address {
  return `0x${address.slice(2).toLowerCase()}`
}

/** Hex data or a quantity on the wire; its inferred type is viem's `Hex`. */
export const HexSchema = z.templateLiteral(['0x', z.string().regex(/^[0-9a-fA-F]*$/)])

/** Exactly `bytes` bytes of hex (a private key, a nonce), typed as viem's `Hex`; `message` names the form. */
export function fixedHexSchema(bytes: number, message: string): z.ZodTemplateLiteral<Hex> {
  return z.templateLiteral(['0x', z.string().regex(new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`))], { error: formatError(message) })
}

/** `message` for a string of the wrong form; zod's own message for anything else (a number, a missing field). */
function formatError(message: string): (issue: { input?: unknown }) => string | undefined {
  return (issue) => (typeof issue.input === 'string' ? message : undefined)
}
