import { resolve } from 'node:path'

// What config.ts reads to choose the store, in a module light enough for `swapeazi serve` to read before the rest of
// the service loads (src/cli/openStoreEarly.ts): nothing here imports a package.

/** SWAPEAZI_DATA_DIR when unset. */
export const DEFAULT_DATA_DIR = './data'

/**
 * The variables that are set: an empty or blank value counts as unset, as `.env` files and host configurations write
 * a variable they leave unset (`SWAPEAZI_BASE_URL=`), so it takes its default instead of failing validation. Spaces
 * and line breaks around a value are dropped (` 127.0.0.1` as SWAPEAZI_HOST was looked up as a host name), except in
 * the HMAC secrets (isByteExact), which are keys byte for byte.
 */
export function setVariables(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const set: Record<string, string> = {}
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && value.trim() !== '') set[name] = isByteExact(name) ? value : value.trim()
  return set
}

/** SWAPEAZI_DATA_DIR as the store opens it: absolute, or `memory://` as it is. */
export function dataDirOf(value: string): string {
  return value.startsWith('memory://') ? value : resolve(value)
}

/**
 * The variables whose value is a secret used as it is, byte for byte (SWAPEAZI_KEY_SECRET, SWAPEAZI_QUOTE_SECRET,
 * SWAPEAZI_MPP_SECRET_KEY: HMAC keys). A secret mounted from a file often ends in a line break, which was part of the
 * key: trimmed, every API key, quote and MPP challenge signed before would stop verifying (review of issue 15).
 */
function isByteExact(name: string): boolean {
  return name.endsWith('_SECRET') || name.endsWith('_SECRET_KEY')
}
