import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import type { Sql } from './sql.ts'

/**
 * The embedded store (DESIGN 9): PostgreSQL compiled to WASM, in-process. `dataDir` keeps the data across restarts;
 * `undefined` or `memory://` keeps it in memory (tests). PGlite has a single connection, so statements are serialised.
 */
export async function openPgliteSql(dataDir?: string): Promise<Sql> {
  const isMemory = dataDir === undefined || dataDir.startsWith('memory://')
  if (!isMemory) mkdirSync(dataDir, { recursive: true })
  const db = isMemory ? new PGlite() : new PGlite(dataDir)
  await db.waitReady
  return {
    describe: isMemory ? 'pglite (in memory)' : `pglite (${dataDir})`,
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
