import * as z from 'zod'

/** API key tiers (DESIGN 7.14). */
export const KEY_TIERS = ['free', 'pro'] as const
export type KeyTier = (typeof KEY_TIERS)[number]

/**
 * How the 429 for requests without a key says to raise the limit. One string, shared: MCP tools, whose callers cannot
 * send a key, replace it with what the operator of the MCP server can configure instead.
 */
export const FREE_KEY_RAISES_LIMIT = 'a free key raises that (POST /api/v1/keys, itself counted here: ask for it once this limit resets).'

/** POST /api/v1/keys (and `swapeazi keys issue`): a new key, shown once. */
export const IssuedApiKey = z
  .object({
    key: z.string().describe('se_<payload>.<HMAC>; shown once, never stored'),
    id: z.string().describe('The key id, for revocation and support'),
    tier: z.enum(KEY_TIERS),
    issuedAt: z.string(),
    notice: z.string(),
  })
  .meta({ id: 'IssuedApiKey' })
export type IssuedApiKey = z.infer<typeof IssuedApiKey>
