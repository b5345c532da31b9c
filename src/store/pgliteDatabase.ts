// One PGlite database as this thread runs it: openPgliteSql's (a database in memory), or the embedded store's own
// thread's (pgliteWorker.ts, a data directory). It takes no lock: openPgliteSql holds the data directory's.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { type Sql, transactionScope } from './sql.ts'

type PgliteModule = typeof import('@electric-sql/pglite')
let loaded: Promise<PgliteModule> | undefined

/**
 * PGlite's code, imported when a database is first opened on this thread, or when the store's thread starts
 * (pgliteWorker.ts imports it before it is asked to open one): a data directory runs on a thread of its own
 * (pgliteThread.ts), so the main thread of `swapeazi serve` never loads it. Its WebAssembly is left to PGlite to
 * load: handed a module compiled here with `WebAssembly.compile` instead, its statements ran about 40% slower
 * (a grouped aggregate over 200,000 rows, alternating: 127 to 137 ms against 173 to 229 ms).
 */
export function loadPglite(): Promise<PgliteModule> {
  loaded ??= import('@electric-sql/pglite')
  return loaded
}

function sqlOf(lib: PgliteModule, db: PGlite, describe: string): Omit<Sql, 'isExclusive' | 'dataDirLock'> {
  const statements = preparedStatements(lib, db)
  return {
    describe,
    async query<Row>(text: string, params: readonly unknown[] = []) {
      if (!PREPARABLE.test(text)) {
        await db._runExclusiveTransaction(() => db._runExclusiveQuery(() => statements.forgetIfSchemaChange(text)))
        return (await db.query<Row>(text, params as unknown[])).rows
      }
      return db._runExclusiveTransaction(() => db._runExclusiveQuery(() => statements.run<Row>(text, params, { inTransaction: false })))
    },
    async transaction(work) {
      // The transaction holds PGlite's transaction lock until it ends, so no other statement runs between its own.
      const scope = transactionScope()
      return db.transaction((tx) =>
        work({
          describe: 'pglite transaction',
          async query<Row>(text: string, params: readonly unknown[] = []) {
            scope.check()
            if (!PREPARABLE.test(text)) {
              await db._runExclusiveQuery(() => statements.forgetIfSchemaChange(text))
              return (await tx.query<Row>(text, params as unknown[])).rows
            }
            return db._runExclusiveQuery(() => statements.run<Row>(text, params, { inTransaction: true }))
          },
        }).finally(scope.end),
      )
    },
    close: () => db.close(),
  }
}

/** Most statements one PGlite session keeps prepared; past it, the least recently used is closed. */
const MAX_PREPARED = 256
/** Statements worth preparing: data statements, whose text repeats with parameters. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i
/** Statements that may change the shape of what a prepared statement returns. */
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i

type PreparedStatement = { name: string; paramTypes: number[] }

/**
 * PGlite's `query` goes through Postgres' main loop six times a statement (parse, describe, bind, describe, execute,
 * sync), and parses and plans the statement every time. Here a data statement is parsed once per session under a
 * name of its own, as a driver's prepared statement is, and each call binds, executes and syncs in one pass, with
 * PGlite's own serializers and result parsers. The caller holds PGlite's locks. A statement that may change the
 * schema closes every prepared one first, so none returns rows of an old shape.
 */
function preparedStatements(
  { parse, protocol }: PgliteModule,
  db: PGlite,
): {
  run<Row>(text: string, params: readonly unknown[], options: { inTransaction: boolean }): Promise<Row[]>
  forgetIfSchemaChange(text: string): Promise<void>
} {
  /** Describe the unnamed portal, execute it, sync: what follows every Bind. */
  const describeExecuteSync = concat([
    protocol.serialize.describe({ type: 'P' }),
    protocol.serialize.execute({}),
    protocol.serialize.sync(),
  ])
  // In order of use, the most recent last.
  const byText = new Map<string, PreparedStatement>()
  let named = 0

  const prepare = async (text: string): Promise<PreparedStatement> => {
    const messages: Uint8Array[] = []
    const oldest = byText.size >= MAX_PREPARED ? byText.entries().next().value : undefined
    if (oldest !== undefined) {
      byText.delete(oldest[0])
      messages.push(protocol.serialize.close({ type: 'S', name: oldest[1].name }))
    }
    named += 1
    const name = `swapeazi_${named}`
    messages.push(protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: 'S', name }), protocol.serialize.sync())
    const described = await db.execProtocolStream(concat(messages), { syncToFs: false })
    return { name, paramTypes: parse.parseDescribeStatementResults(described) }
  }

  return {
    async run<Row>(text: string, params: readonly unknown[], options: { inTransaction: boolean }): Promise<Row[]> {
      if (db.closed) throw new Error('PGlite is closed')
      let statement = byText.get(text)
      if (statement === undefined) statement = await prepare(text)
      else byText.delete(text)
      byText.set(text, statement)
      const { paramTypes } = statement
      const values = params.map((value, i) => {
        if (value === null || value === undefined) return null
        const serializer = db.serializers[paramTypes[i] ?? 0]
        return serializer === undefined ? String(value) : serializer(value)
      })
      const bound = values.every((value) => value === null || typeof value === 'string')
        ? bindExecuteSync(statement.name, values as readonly (string | null)[], describeExecuteSync)
        : concat([protocol.serialize.bind({ statement: statement.name, values }), describeExecuteSync])
      const messages = await db.execProtocolStream(bound, { syncToFs: false }).catch(async (error: unknown) => {
        // 0A000 "cached plan must not change result type": the schema changed under it; the next call prepares it again.
        if ((error as { code?: unknown }).code === '0A000' && byText.get(text) === statement) {
          byText.delete(text)
          await db.execProtocolStream(concat([protocol.serialize.close({ type: 'S', name: statement.name }), protocol.serialize.sync()]), {
            syncToFs: false,
          })
        }
        throw error
      })
      // As PGlite's own query: a statement outside a transaction is synced to the file system when it ends.
      if (!options.inTransaction) await db.syncToFs()
      return (parse.parseResults(messages, db.parsers)[0]?.rows ?? []) as Row[]
    },
    async forgetIfSchemaChange(text: string): Promise<void> {
      if (byText.size === 0 || !SCHEMA_CHANGE.test(text)) return
      const closes = [...byText.values()].map((statement) => protocol.serialize.close({ type: 'S', name: statement.name }))
      byText.clear()
      await db.execProtocolStream(concat([...closes, protocol.serialize.sync()]), { syncToFs: false })
    },
  }
}

const utf8 = new TextEncoder()

/**
 * Bind (every parameter text, the unnamed portal), then describeExecuteSync, in one buffer. PGlite's own `bind`
 * grows a buffer through private fields and copies it twice; a swap insert binds 180 parameters and about 35 KB.
 */
function bindExecuteSync(statement: string, values: readonly (string | null)[], describeExecuteSync: Uint8Array): Uint8Array {
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  let bound = 1 + 4 + 1 + 3 * statement.length + 1 + 2 + 2 + 2 + describeExecuteSync.length
  for (const value of values) bound += 4 + (value === null ? 0 : 3 * value.length)
  const out = new Uint8Array(bound)
  const view = new DataView(out.buffer)
  out[0] = 0x42 // 'B'
  // out[5] = 0: the unnamed portal's empty name.
  let at = 6
  at += utf8.encodeInto(statement, out.subarray(at)).written
  out[at] = 0
  // No format codes (every parameter is text), the parameter count, then each length and text (-1: null).
  view.setInt16(at + 1, 0)
  view.setInt16(at + 3, values.length)
  at += 5
  for (const value of values) {
    if (value === null) {
      view.setInt32(at, -1)
      at += 4
    } else {
      const { written } = utf8.encodeInto(value, out.subarray(at + 4))
      view.setInt32(at, written)
      at += 4 + written
    }
  }
  // No result format codes: every column as text.
  view.setInt16(at, 0)
  at += 2
  view.setInt32(1, at - 1)
  out.set(describeExecuteSync, at)
  return out.subarray(0, at + describeExecuteSync.length)
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/**
 * The database itself, on the calling thread, with no lock taken: openPgliteSql's, or the store's thread's
 * (pgliteWorker.ts), whose main thread holds the lock.
 */
export async function openPgliteDatabase(dataDir: string, template?: Blob): Promise<Omit<Sql, 'isExclusive' | 'dataDirLock'>> {
  const lib = await loadPglite()
  if (dataDir.startsWith('memory://')) {
    const db = new lib.PGlite(template === undefined ? {} : { loadDataDir: template })
    await db.waitReady
    return sqlOf(lib, db, 'pglite (in memory)')
  }
  const isNew = !existsSync(join(dataDir, 'PG_VERSION'))
  const db = new lib.PGlite({
    dataDir,
    ...(isNew && template !== undefined ? { loadDataDir: template } : {}),
  })
  await db.waitReady
  return sqlOf(lib, db, `pglite (${dataDir})`)
}

/** A new in-memory database, `prepare`d (migrated, say), as a template for `openPgliteSql`: its data directory, uncompressed. */
export async function dumpPgliteTemplate(prepare: (sql: Sql) => Promise<unknown>): Promise<Blob> {
  const lib = await loadPglite()
  const db = new lib.PGlite()
  try {
    await db.waitReady
    await prepare({ ...sqlOf(lib, db, 'pglite (template)'), isExclusive: true })
    return await db.dumpDataDir('none')
  } finally {
    await db.close()
  }
}
