import { readFileSync, statSync } from 'node:fs'

/** The largest catalogue file read (feeds included): the embedded ones are tens of kilobytes. */
export const MAX_CATALOGUE_FILE_BYTES = 16 * 2 ** 20

/**
 * Parses the JSON of a regular file of at most `maxBytes`. What is not a regular file is refused before it is opened:
 * a FIFO would hang the start until something wrote to it, `/dev/zero` would fill the memory. Throws an Error whose
 * message says what is wrong with the file (the caller names the file and the variable to change).
 */
export function readJsonFile(path: string, maxBytes: number, holds: string): unknown {
  const stat = statSync(path)
  if (!stat.isFile()) throw new Error(`is not a regular file (a directory, FIFO or device cannot hold ${holds})`)
  if (stat.size > maxBytes) throw new Error(`is ${stat.size} bytes, more than the ${maxBytes / 2 ** 20} MiB allowed for ${holds}`)
  return JSON.parse(readFileSync(path, 'utf8'))
}
