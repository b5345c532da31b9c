import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'

// Reading the JSON files the schemas here validate (the catalogue, its feeds, the sanctions list): shared by
// src/catalogue, src/compliance and src/app; the first two may import src/schemas but not each other
// (.dependency-cruiser.cjs).

/** The largest catalogue file read (feeds included): the embedded ones are tens of kilobytes. */
export const MAX_CATALOGUE_FILE_BYTES = 16 * 2 ** 20

const CHUNK_BYTES = 64 * 1024

/**
 * Parses the JSON of a regular file of at most `maxBytes`. What is not a regular file is refused before a byte is
 * read: a FIFO would hang the start until something wrote to it, `/dev/zero` would fill the memory. The file is
 * opened without blocking (a FIFO with no writer opens at once) and checked on the descriptor it is read from, so it
 * cannot be swapped between the check and the read; and it is read to at most one byte past the limit, whatever
 * its size said (a /proc file says 0, and a file may grow). Throws an Error whose message says what is wrong with the
 * file (the caller names the file and the variable to change).
 */
export function readJsonFile(path: string, maxBytes: number, holds: string): unknown {
  const tooLarge = (size: string) => new Error(`is ${size} bytes, more than the ${maxBytes / 2 ** 20} MiB allowed for ${holds}`)
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new Error(`is not a regular file (a directory, FIFO or device cannot hold ${holds})`)
    if (stat.size > maxBytes) throw tooLarge(String(stat.size))
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, null)
      if (read === 0) break
      total += read
      if (total > maxBytes) throw tooLarge(`over ${maxBytes}`)
      chunks.push(read === CHUNK_BYTES ? chunk : chunk.subarray(0, read))
    }
    return parseJson(Buffer.concat(chunks, total).toString('utf8'))
  } finally {
    closeSync(fd)
  }
}

/**
 * JSON.parse, whose refusal is said without quoting the text: the message goes into the one line start-up prints
 * (and logs), and a variable pointed at the wrong file (a secrets file, /proc/self/environ) must not put its first
 * bytes there.
 */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    const at = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1]
    const where = at === undefined ? (text.trim() === '' ? ' (it is empty)' : '') : ` (at character ${at})`
    throw new Error(`is not valid JSON${where}: check that it is the file meant`)
  }
}
