import type { Catalogue } from '../engine/index.ts'
import { ObservationLine } from '../schemas/intelligence.ts'
import type { Observation } from '../store/createIntelStore.ts'
import type { Store } from '../store/createStore.ts'
import { observationFromLine } from './observationFromLine.ts'

/** Lines validated before each multi-row insert. */
const BATCH_LINES = 1_000

/** A line that is not a valid observation: where, which field, and why. The import it stops has written nothing. */
export class ObservationImportError extends Error {
  override name = 'ObservationImportError'
  constructor(
    readonly line: number,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`line ${line}: ${field} ${reason}; nothing was imported`)
  }
}

export type ImportObservationsReturnType = { lines: number; inserted: number; skipped: number }

/** Parses one line, or throws ObservationImportError naming its first bad field. */
function parseLine(catalogue: Catalogue, text: string, lineNumber: number): Observation {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new ObservationImportError(lineNumber, '(line)', 'is not valid JSON')
  }
  const parsed = ObservationLine.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new ObservationImportError(
      lineNumber,
      issue === undefined || issue.path.length === 0 ? '(line)' : issue.path.map(String).join('.'),
      issue?.message ?? 'is invalid',
    )
  }
  const observed = observationFromLine(catalogue, parsed.data)
  if (!observed.ok) throw new ObservationImportError(lineNumber, observed.field, observed.message)
  return observed.observation
}

/**
 * `swapeazi intel import`: reads JSONL observations (blank lines ignored), validates every line with the
 * ObservationLine schema and the catalogue, and stores them in one transaction. The first bad line stops the
 * import with its number and field, and nothing is written; a line whose id is already stored is skipped.
 */
export async function importObservations(
  deps: { store: Pick<Store, 'intel'>; catalogue: Catalogue },
  lines: Iterable<string> | AsyncIterable<string>,
): Promise<ImportObservationsReturnType> {
  let lineNumber = 0
  async function* batches(): AsyncGenerator<Observation[]> {
    let batch: Observation[] = []
    for await (const text of lines) {
      lineNumber += 1
      if (text.trim() === '') continue
      batch.push(parseLine(deps.catalogue, text, lineNumber))
      if (batch.length === BATCH_LINES) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }
  const { inserted, skipped } = await deps.store.intel.importObservations(batches())
  return { lines: lineNumber, inserted, skipped }
}
