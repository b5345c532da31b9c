// What the main thread and the embedded store's thread (pgliteWorker.ts) send each other: the open, then one request
// per statement or transaction step, each answered by its id. Rows, parameters and errors cross by structured clone (Date, bigint,
// Uint8Array and plain objects survive it).

export type StoreRequest =
  /**
   * The first request, answered once the database is open; `template`: a data directory as dumpPgliteTemplate
   * returns it, for a database that does not exist yet.
   */
  | { id: number; op: 'open'; dataDir: string; template?: ArrayBuffer }
  | { id: number; op: 'query'; text: string; params: readonly unknown[] }
  | { id: number; op: 'begin' | 'commit' | 'rollback'; tx: number }
  | { id: number; op: 'txquery'; tx: number; text: string; params: readonly unknown[] }
  | { id: number; op: 'close' }

export type StoreResponse = { id: number; rows: unknown[] } | { id: number; error: SerializedError }

/** An error as it crosses: its message, name and own fields (a database error's `code`, `detail`, `constraint`...). */
export type SerializedError = { message: string; name: string; fields: Record<string, unknown> }

export function serializableError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { message: String(error), name: 'Error', fields: {} }
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(error)) {
    if (key === 'message' || key === 'stack' || typeof value === 'function') continue
    // Only what structured clone carries as it is; anything else as text.
    fields[key] = value === null || ['string', 'number', 'bigint', 'boolean', 'undefined'].includes(typeof value) ? value : String(value)
  }
  return { message: error.message, name: error.name, fields }
}

/** The error again on the main thread, with the store's thread's fields; its stack is the main thread's caller's. */
export function revivedError(serialized: SerializedError): Error {
  const error = Object.assign(new Error(serialized.message), serialized.fields)
  if (serialized.name !== 'Error') Object.defineProperty(error, 'name', { value: serialized.name, configurable: true, writable: true })
  return error
}
