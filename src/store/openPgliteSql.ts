import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parse, PGlite, protocol } from '@electric-sql/pglite'
import { acquireDataDirLock, type DataDirLock } from './dataDirLock.ts'
import type { Sql } from './sql.ts'

export type OpenPgliteSqlOptions = {
  /**
   * A data directory as `dumpPgliteTemplate` returns it. A database that does not exist yet (in memory, or a data
   * directory without one) starts as a copy of it instead of running initdb, which takes seconds: tests clone one
   * migrated database. An existing database is opened as it is.
   */
  template?: Blob
}

function sqlOf(db: PGlite, describe: string): Sql {
  const statements = preparedStatements(db)
  return {
    describe,
    isExclusive: true,
    async query<Row>(text: string, params: readonly unknown[] = []) {
      if (!PREPARABLE.test(text)) {
        await db._runExclusiveTransaction(() => db._runExclusiveQuery(() => statements.forgetIfSchemaChange(text)))
        return (await db.query<Row>(text, params as unknown[])).rows
      }
      return db._runExclusiveTransaction(() => db._runExclusiveQuery(() => statements.run<Row>(text, params, { inTransaction: false })))
    },
    async transaction(work) {
      // The transaction holds PGlite's transaction lock until it ends, so no other statement runs between its own.
      return db.transaction((tx) =>
        work({
          describe: 'pglite transaction',
          async query<Row>(text: string, params: readonly unknown[] = []) {
            if (!PREPARABLE.test(text)) {
              await db._runExclusiveQuery(() => statements.forgetIfSchemaChange(text))
              return (await tx.query<Row>(text, params as unknown[])).rows
            }
            return db._runExclusiveQuery(() => statements.run<Row>(text, params, { inTransaction: true }))
          },
        }),
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
function preparedStatements(db: PGlite): {
  run<Row>(text: string, params: readonly unknown[], options: { inTransaction: boolean }): Promise<Row[]>
  forgetIfSchemaChange(text: string): Promise<void>
} {
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
        ? bindExecuteSync(statement.name, values as readonly (string | null)[])
        : concat([protocol.serialize.bind({ statement: statement.name, values }), DESCRIBE_EXECUTE_SYNC])
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

/** Describe the unnamed portal, execute it, sync: what follows every Bind. */
const DESCRIBE_EXECUTE_SYNC = concat([
  protocol.serialize.describe({ type: 'P' }),
  protocol.serialize.execute({}),
  protocol.serialize.sync(),
])
const utf8 = new TextEncoder()

/**
 * Bind (every parameter text, the unnamed portal), then DESCRIBE_EXECUTE_SYNC, in one buffer. PGlite's own `bind`
 * grows a buffer through private fields and copies it twice; a swap insert binds 180 parameters and about 35 KB.
 */
function bindExecuteSync(statement: string, values: readonly (string | null)[]): Uint8Array {
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  let bound = 1 + 4 + 1 + 3 * statement.length + 1 + 2 + 2 + 2 + DESCRIBE_EXECUTE_SYNC.length
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
  out.set(DESCRIBE_EXECUTE_SYNC, at)
  return out.subarray(0, at + DESCRIBE_EXECUTE_SYNC.length)
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
 * The embedded store (DESIGN 9): PostgreSQL compiled to WASM, in-process. `dataDir` keeps the data across restarts;
 * `undefined` or `memory://` keeps it in memory (tests). PGlite has a single connection, so statements are serialised.
 * A data directory has one owner: this process takes its lock (dataDirLock.ts) before opening it, or throws
 * DataDirHeldError naming the live process that holds it, and `close` releases it.
 */
export async function openPgliteSql(dataDir?: string, options: OpenPgliteSqlOptions = {}): Promise<Sql> {
  if (dataDir === undefined || dataDir.startsWith('memory://')) {
    const db = new PGlite(options.template === undefined ? {} : { loadDataDir: options.template })
    await db.waitReady
    return sqlOf(db, 'pglite (in memory)')
  }
  const lock = await acquireDataDirLock(dataDir)
  try {
    const isNew = !existsSync(join(dataDir, 'PG_VERSION'))
    const db = new PGlite({ dataDir, ...(isNew && options.template !== undefined ? { loadDataDir: options.template } : {}) })
    await db.waitReady
    return withLock(sqlOf(db, `pglite (${dataDir})`), lock)
  } catch (error) {
    lock.release()
    throw error
  }
}

function withLock(sql: Sql, lock: DataDirLock): Sql {
  return {
    ...sql,
    dataDirLock: lock,
    async close() {
      try {
        await sql.close()
      } finally {
        lock.release()
      }
    },
  }
}

/** A new in-memory database, `prepare`d (migrated, say), as a template for `openPgliteSql`: its data directory, uncompressed. */
export async function dumpPgliteTemplate(prepare: (sql: Sql) => Promise<unknown>): Promise<Blob> {
  const db = new PGlite()
  try {
    await db.waitReady
    await prepare(sqlOf(db, 'pglite (template)'))
    return await db.dumpDataDir('none')
  } finally {
    await db.close()
  }
}
