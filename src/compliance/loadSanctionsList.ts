import { readJsonFile } from '../schemas/readJsonFile.ts'
import { SanctionsList } from '../schemas/sanctions.ts'

/** The shipped list's file name, relative to the manifest directory. */
export const DEFAULT_SANCTIONS_FILE = 'sanctioned-addresses.json'

/** A sanctions list file that cannot be read or does not match the schema; names the file and the field. */
export class SanctionsListError extends Error {
  override name = 'SanctionsListError'
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${field}: ${detail}`, options)
  }
}

/** The largest sanctions list read: OFAC's SDN addresses are a few megabytes. */
const MAX_LIST_BYTES = 64 * 2 ** 20

/**
 * Reads and validates a sanctions list file (default `manifest/sanctioned-addresses.json`). Throws a
 * SanctionsListError naming the file and field at fault, so a malformed list stops the service at start.
 */
export function loadSanctionsList(path: string): SanctionsList {
  let json: unknown
  try {
    // Only a regular file of a list's size: a FIFO would hang the start, /dev/zero fill the memory.
    json = readJsonFile(path, MAX_LIST_BYTES, 'the list')
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw new SanctionsListError(path, '(file)', detail, { cause: error })
  }
  const parsed = SanctionsList.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue?.path
      .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
      .join('')
      .replace(/^\./, '')
    throw new SanctionsListError(path, field || '(root)', issue?.message ?? 'invalid')
  }
  return parsed.data
}
