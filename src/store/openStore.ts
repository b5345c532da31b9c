import { createStore, type Store } from './createStore.ts'
import { migrate } from './migrations.ts'
import { openPgliteSql } from './openPgliteSql.ts'
import { openPostgresSql } from './openPostgresSql.ts'

export type OpenStoreParameters =
  /** `template`: see OpenPgliteSqlOptions (tests). */
  { driver: 'pglite'; dataDir?: string; template?: Blob } | { driver: 'postgres'; url: string; schema?: string }

/** Opens the configured driver and migrates it: PostgreSQL when a URL is given, PGlite otherwise (DESIGN 9). */
export async function openStore(parameters: OpenStoreParameters): Promise<Store> {
  const sql =
    parameters.driver === 'postgres'
      ? await openPostgresSql(parameters.url, parameters.schema === undefined ? {} : { schema: parameters.schema })
      : await openPgliteSql(parameters.dataDir, parameters.template === undefined ? {} : { template: parameters.template })
  try {
    await migrate(sql)
  } catch (error) {
    await sql.close().catch(() => {})
    throw error
  }
  return createStore(sql)
}
