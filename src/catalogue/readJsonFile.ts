import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs'

/** The largest catalogue file read (feeds included): the embedded ones are tens of kilobytes. */
export const MAX_CATALOGUE_FILE_BYTES = 16 * 2 ** 20

/**
 * Parses the JSON of a regular file of at most `maxBytes`. What is not a regular file is refused before a byte is
 * read: a FIFO would hang the start until something wrote to it, `/dev/zero` would fill the memory. The file is
 * opened without blocking (a FIFO with no writer opens at once) and checked on the descriptor it is read from, so it
 * cannot be swapped between the check and the read. Throws an Error whose message says what is wrong with the file
 * (the caller names the file and the variable to change).
 */
export function readJsonFile(path: string, maxBytes: number, holds: string): unknown {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new Error(`is not a regular file (a directory, FIFO or device cannot hold ${holds})`)
    if (stat.size > maxBytes) throw new Error(`is ${stat.size} bytes, more than the ${maxBytes / 2 ** 20} MiB allowed for ${holds}`)
    return JSON.parse(readFileSync(fd, 'utf8'))
  } finally {
    closeSync(fd)
  }
}
