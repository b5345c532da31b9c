import * as z from 'zod'

/**
 * Schema of `manifest/sanctioned-addresses.json`: the Ethereum addresses of a sanctions list snapshot, stored
 * lowercase so screening is one Set lookup whatever case the caller sends.
 */

/** A calendar date `YYYY-MM-DD` that exists (2026-02-30 is rejected). */
const IsoDate = z.iso.date({
  error: (issue) => (issue.input === undefined ? 'is required (an ISO date YYYY-MM-DD)' : 'must be an ISO date YYYY-MM-DD'),
})

/** An EVM address in lowercase hex; checksummed forms are normalised before they reach the file. */
export const LowercaseAddress = z.string().regex(/^0x[0-9a-f]{40}$/, 'must be a lowercase 0x-prefixed 40-hex address')

export const SanctionsList = z.strictObject({
  asOf: IsoDate,
  source: z.string().trim().min(1, 'must name the source of the list'),
  note: z.string().min(1).optional(),
  addresses: z
    .array(LowercaseAddress)
    .min(1, 'must list at least one address')
    .superRefine((addresses, ctx) => {
      const seen = new Set<string>()
      for (const [index, address] of addresses.entries()) {
        if (seen.has(address)) {
          ctx.addIssue({ code: 'custom', message: `duplicate address ${address}`, path: [index] })
          return
        }
        seen.add(address)
      }
    }),
})
export type SanctionsList = z.infer<typeof SanctionsList>
