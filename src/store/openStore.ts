import { createStore, type Store } from './createStore.ts'
import { migrate } from './migrations.ts'
import { openPgliteSql } from './openPgliteSql.ts'
import { openPostgresSql } from './openPostgresSql.ts'

export type OpenStoreParameters =
  | { driver: 'pglite'; dataDir?: string }
  | { driver: 'postgres'; url: string; schema?: string }

/** Opens the configured driver and migrates it: PostgreSQL when a URL is given, PGlite otherwise (DESIGN 9). */
export async function openStore(parameters: OpenStoreParameters): Promise<Store> {
  const sql = parameters.driver === 'postgres' ? await openPostgresSql(parameters.url, parameters.schema === undefined ? {} : { schema: parameters.schema }) : await openPgliteSql(parameters.dataDir)
  try {
    await migrate(sql)
  } catch (error) {
    await sql.close().catch(() => {})
    throw error
  }
  return createStore(sql)
}
