import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
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
  return {
    describe,
    isExclusive: true,
    async query<Row>(text: string, params: readonly unknown[] = []) {
      return (await db.query<Row>(text, params as unknown[])).rows
    },
    async transaction(work) {
      return db.transaction((tx) =>
        work({
          describe: 'pglite transaction',
          async query<Row>(text: string, params: readonly unknown[] = []) {
            return (await tx.query<Row>(text, params as unknown[])).rows
          },
        }),
      )
    },
    close: () => db.close(),
  }
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
