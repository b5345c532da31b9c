import { type FileHandle, open } from 'node:fs/promises'
import type { Writable } from 'node:stream'
import type { Config } from '../config.ts'
import { withOperatorOperations } from './withOperatorOperations.ts'

export const INTEL_USAGE = `Usage:
  swapeazi intel import FILE.jsonl
      Loads observed transfers into the configured store for corridor intelligence: one JSON object a line (format in
      docs/operations.md), every line checked against the schema and the catalogue. One transaction: the first bad line stops
      the import with its line number and field, and nothing is written. A line whose id is already stored is
      skipped, so re-running an import is harmless. Prints {file, lines, imported, skipped}.`

/** `swapeazi intel import`: operator commands for corridor intelligence over the configured store (through its owner, see withOperatorOperations). */
export async function runIntelCommand(config: Config, argv: readonly string[], out: Writable): Promise<void> {
  const [command, ...rest] = argv
  if (command !== 'import') throw new Error(`unknown intel command "${command ?? ''}"\n\n${INTEL_USAGE}`)
  const [file] = rest
  if (file === undefined || rest.length !== 1) throw new Error(`name one JSONL file to import\n\n${INTEL_USAGE}`)
  let handle: FileHandle
  try {
    handle = await open(file, 'r')
  } catch (error) {
    throw new Error(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
  // A directory opens, and fails only at the first read: said here, whether the service or this process imports.
  const stat = await handle.stat()
  if (!stat.isFile() && !stat.isFIFO()) {
    await handle.close().catch(() => {})
    throw new Error(
      `cannot read ${file}: it is ${stat.isDirectory() ? 'a directory' : 'not a regular file'}; name one JSONL file to import`,
    )
  }
  try {
    const result = await withOperatorOperations(config, (operations) =>
      operations.importObservations(handle.createReadStream({ autoClose: false })),
    )
    out.write(`${JSON.stringify({ file, ...result })}\n`)
  } finally {
    await handle.close().catch(() => {})
  }
}
