import type { DataDirLock } from './dataDirLock.ts'

/** The one thing both drivers (PGlite, PostgreSQL) offer the store: parameterised SQL, and transactions. */
export type Sql = {
  /** Runs one statement with `$1`-style parameters; rows come back as plain objects. */
  query<Row = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<Row[]>
  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Omit<Sql, 'transaction' | 'close' | 'isExclusive' | 'dataDirLock'>) => Promise<T>): Promise<T>
  close(): Promise<void>
  /** For logs and health: which driver, and where (never a password). */
  describe: string
  /**
   * True when this process is the database's only user (the embedded PGlite, whose data directory has one owner):
   * counters and the key denylist can then be kept exact in memory. False for PostgreSQL, which replicas share.
   */
  isExclusive: boolean
  /** The embedded store's hold on its data directory (dataDirLock.ts); absent in memory and on PostgreSQL. */
  dataDirLock?: DataDirLock
}

/** A timestamp column as ISO 8601: PGlite returns Date objects, node-postgres may return text. */
export const isoTimestamp = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString()

/**
 * How a transaction refuses a statement issued after its work has returned or thrown (an un-awaited statement, or a
 * branch of a `Promise.all` still running when another failed): it would otherwise run outside the transaction, on
 * a pooled connection inside another caller's, or on a transaction the store's thread no longer knows.
 */
export function transactionScope(): { check(): void; end(): void } {
  let isOpen = true
  return {
    check() {
      if (!isOpen) throw new Error('a statement was issued on a transaction that has ended: await every statement inside its work')
    },
    end() {
      isOpen = false
    },
  }
}
