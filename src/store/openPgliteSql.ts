import { realpathSync } from 'node:fs'
import { userInfo } from 'node:os'
import { acquireDataDirLock, type DataDirLock } from './dataDirLock.ts'
import { openPgliteDatabase } from './pgliteDatabase.ts'
import { openPgliteInWorker } from './pgliteThread.ts'
import type { Sql } from './sql.ts'

export type OpenPgliteSqlOptions = {
  /**
   * A data directory as `dumpPgliteTemplate` returns it. A database that does not exist yet (in memory, or a data
   * directory without one) starts as a copy of it instead of running initdb, which takes seconds: tests clone one
   * migrated database. An existing database is opened as it is.
   */
  template?: Blob
  /**
   * Where the database runs: `worker`, a thread of its own (pgliteThread.ts), the default for a data directory, so
   * that its start-up and statements leave the event loop free; `main`, the event loop's thread, the default in memory
   * (tests open hundreds of those, and a thread each would cost them its start).
   */
  thread?: 'main' | 'worker'
}

/**
 * The embedded store (DESIGN 9): PostgreSQL compiled to WASM, in-process. `dataDir` keeps the data across restarts;
 * `undefined` or `memory://` keeps it in memory (tests). PGlite has a single connection, so statements are serialised.
 * A data directory has one owner: this process takes its lock (dataDirLock.ts) before opening it, or throws
 * DataDirHeldError naming the live process that holds it, and `close` releases it. A data directory runs on a thread
 * of its own (pgliteThread.ts), a database in memory on the event loop's (see OpenPgliteSqlOptions.thread).
 */
export async function openPgliteSql(dataDir?: string, options: OpenPgliteSqlOptions = {}): Promise<Sql> {
  const begun = dataDir === undefined || Object.keys(options).length > 0 ? undefined : openedEarly.get(dataDir)
  if (begun !== undefined) {
    openedEarly.delete(dataDir as string)
    return begun
  }
  const inMemory = dataDir === undefined || dataDir.startsWith('memory://')
  const thread = options.thread ?? (inMemory ? 'main' : 'worker')
  const lock = inMemory ? undefined : await acquireDataDirLock(dataDir)
  try {
    // PGlite's file system opens no symlink as its root: the directory it names (the lock is taken on it through the link).
    const where = inMemory ? (dataDir ?? 'memory://') : realpathSync(dataDir)
    const opened =
      thread === 'worker' ? await openPgliteInWorker(where, options.template) : await openPgliteDatabase(where, options.template)
    const sql: Sql = { ...opened, isExclusive: true }
    return lock === undefined ? sql : withLock(sql, lock)
  } catch (error) {
    lock?.release()
    throw inMemory ? error : new DataDirOpenError(dataDir, error)
  }
}

function userName(): string {
  try {
    return userInfo().username
  } catch {
    return `uid ${process.geteuid?.() ?? 'unknown'}`
  }
}

/** A locked data directory PGlite could not open (damaged, from another version, or files this user cannot write). */
export class DataDirOpenError extends Error {
  override name = 'DataDirOpenError'
  constructor(
    readonly dataDir: string,
    cause: unknown,
  ) {
    // PGlite's own failures are terse (`Aborted()`), and some are Emscripten errors with an errno and no message.
    const why =
      cause instanceof Error
        ? cause.message
        : typeof cause === 'object' && cause !== null && 'errno' in cause
          ? `file system error, errno ${String(cause.errno)}`
          : String(cause)
    super(
      `SWAPEAZI_DATA_DIR ${dataDir} could not be opened as a PGlite store (${why.split('\n')[0]?.slice(0, 200)}): its files may be damaged, made by another PGlite version, or not all writable by this user (${userName()}); repair that, or set SWAPEAZI_DATA_DIR to another directory (an empty or missing one starts a fresh store)`,
      { cause },
    )
  }
}

/** Opens begun by openPgliteSqlEarly that no openPgliteSql has taken yet, by data directory. */
const openedEarly = new Map<string, Promise<Sql>>()

/**
 * Begins opening the data directory `dataDir` (absolute, as openPgliteSql is called with it) before the caller knows
 * it will: `swapeazi serve` calls it before the rest of the service loads, so that Postgres starts on the store's
 * thread meanwhile. The next `openPgliteSql(dataDir)` takes this open, or its error (a directory another process
 * holds, say), as its own; closeUnclaimedPgliteSql closes it when none does.
 */
export function openPgliteSqlEarly(dataDir: string): void {
  if (openedEarly.has(dataDir)) return
  const opening = openPgliteSql(dataDir)
  // Reported to the openPgliteSql that takes it.
  opening.catch(() => {})
  openedEarly.set(dataDir, opening)
}

/** Closes the opens openPgliteSqlEarly began that nothing took (the command failed first), releasing their locks. */
export async function closeUnclaimedPgliteSql(): Promise<void> {
  const unclaimed = [...openedEarly.values()]
  openedEarly.clear()
  await Promise.all(unclaimed.map((opening) => opening.then((sql) => sql.close()).catch(() => {})))
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
