import * as z from 'zod'
import { KEY_TIERS } from './keys.ts'

// The operator endpoint (src/app/startOperatorEndpoint.ts): what `swapeazi keys` and `swapeazi intel` send to the
// process that holds a PGlite data directory, and what it answers. The answers are what the commands print.

/** POST /keys/issue */
export const IssueKeyRequest = z.object({ tier: z.enum(KEY_TIERS) })
export type IssueKeyRequest = z.infer<typeof IssueKeyRequest>

/** POST /keys/revoke: a whole se_ key or its key_ id. */
// No least length: an empty key gets the command's own words (a key id looks like …), as without a service.
export const RevokeKeyRequest = z.object({ key: z.string().max(1_000) })
export type RevokeKeyRequest = z.infer<typeof RevokeKeyRequest>

/** `swapeazi keys revoke`: the key id, now on the denylist. */
export const RevokedKey = z.object({
  id: z.string(),
  revoked: z.literal(true),
  alreadyRevoked: z.boolean(),
  /** False for an id this store never issued (a typo, or a key signed elsewhere): revoked all the same, with a note. */
  wasIssued: z.boolean(),
  note: z.string().optional(),
})
export type RevokedKey = z.infer<typeof RevokedKey>

/** POST /keys/usage: a YYYY-MM month (default this month) and one key or key id (default every key). */
export const KeyUsageRequest = z.object({ month: z.string().max(100).optional(), key: z.string().min(1).max(1_000).optional() })
export type KeyUsageRequest = z.infer<typeof KeyUsageRequest>

/** `swapeazi keys usage`: metered pro corridor-intelligence calls in a calendar month. */
export const KeyUsage = z.object({
  month: z.string(),
  keys: z.array(z.object({ id: z.string(), intelligenceCalls: z.number().int().nonnegative() })),
})
export type KeyUsage = z.infer<typeof KeyUsage>

/** POST /intel/import (the body is the JSONL file): what was imported. */
export const ImportedObservations = z.object({
  lines: z.number().int().nonnegative(),
  imported: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
})
export type ImportedObservations = z.infer<typeof ImportedObservations>

/** Any refusal or failure: the line the command prints after `swapeazi: `. */
export const OperatorRefusal = z.object({ detail: z.string() })
export type OperatorRefusal = z.infer<typeof OperatorRefusal>
