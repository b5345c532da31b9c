import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createStore, type Store } from '../../src/store/createStore.ts'
import { MIGRATIONS, migrate, migrationStatements } from '../../src/store/migrations.ts'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import { openPostgresSql } from '../../src/store/openPostgresSql.ts'
import type { Sql } from '../../src/store/sql.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

/** PostgreSQL for the store suite (DESIGN 9): CI sets it; without it only PGlite runs. */
export const TEST_DATABASE_URL: string | undefined = process.env['TEST_DATABASE_URL'] || undefined

export type OpenedStore = {
  store: Store
  sql: Sql
  /** What the first `migrate` of the store applied: every migration from scratch, none on a clone of the template. */
  applied: number[]
  /** Closes the connection and, on PostgreSQL, drops the schema; idempotent. */
  cleanup(): Promise<void>
}

export type StoreDriver = {
  name: string
  /**
   * A migrated store of its own: an in-memory PGlite, or a new schema of the test database, migrated from scratch.
   * PGlite is a clone of the run's migrated template (test/support/pgliteTemplate.ts), initdb and migrations being
   * seconds, unless `fromScratch`.
   */
  open(options?: { fromScratch?: boolean }): Promise<OpenedStore>
}

/** A schema name no other test file or run will pick: `t_` and 16 hex digits. */
export function uniqueSchemaName(): string {
  return `t_${randomBytes(8).toString('hex')}`
}

/** Runs one statement on its own connection (schema setup and teardown outside any store). */
export async function adminQuery<Row extends Record<string, unknown> = Record<string, unknown>>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Row>(text, params)).rows
  } finally {
    await client.end()
  }
}

/** Drops a test schema and everything in it; the name is checked, as it is spliced into the statement. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  if (!/^t_[a-z0-9_]+$/.test(schema)) throw new RangeError(`not a test schema: ${schema}`)
  await adminQuery(url, `drop schema if exists ${schema} cascade`)
}

/** The URL with `search_path` set through libpq's `options` parameter, which node-postgres passes on. */
export function urlWithSearchPath(url: string, schema: string): string {
  const parsed = new URL(url)
  parsed.searchParams.set('options', `-c search_path=${schema}`)
  return parsed.toString()
}

function once(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined
  return () => (running ??= work())
}

async function migrated(sql: Sql, cleanup: () => Promise<void>): Promise<OpenedStore> {
  try {
    const applied = await migrate(sql)
    return { store: createStore(sql), sql, applied, cleanup }
  } catch (error) {
    await cleanup().catch(() => {})
    throw error
  }
}

const pglite: StoreDriver = {
  name: 'pglite (in memory)',
  async open({ fromScratch = false } = {}) {
    const sql = fromScratch ? await openPgliteSql() : await openPgliteSql(undefined, { template: await migratedPgliteTemplate() })
    return migrated(
      sql,
      once(() => sql.close()),
    )
  },
}

function postgres(url: string): StoreDriver {
  return {
    name: 'postgresql',
    async open() {
      const schema = uniqueSchemaName()
      const sql = await openPostgresSql(url, { schema })
      return migrated(
        sql,
        once(async () => {
          await sql.close()
          await dropSchema(url, schema)
        }),
      )
    },
  }
}

/** The drivers the store suite runs on: always in-memory PGlite, and PostgreSQL when TEST_DATABASE_URL is set. */
export function storeDrivers(): StoreDriver[] {
  return TEST_DATABASE_URL === undefined ? [pglite] : [pglite, postgres(TEST_DATABASE_URL)]
}

/** A schema migrated up to `lastId` only, as a store that has not taken the later migrations yet. */
export async function migrateUpTo(sql: Sql, lastId: number): Promise<void> {
  await sql.query(
    'create table if not exists schema_migrations (id integer primary key, name text not null, applied_at timestamptz not null default now())',
  )
  for (const migration of MIGRATIONS.filter((m) => m.id <= lastId)) {
    for (const statement of migrationStatements(migration.sql)) await sql.query(statement)
    await sql.query('insert into schema_migrations (id, name) values ($1, $2)', [migration.id, migration.name])
  }
}

/** Stores with no migration applied, for a test that migrates part of the way (migrateUpTo) and then the rest. */
export const unmigratedStores: { name: string; open(): Promise<{ sql: Sql; cleanup(): Promise<void> }> }[] = [
  {
    name: 'pglite (in memory)',
    async open() {
      const sql = await openPgliteSql()
      return { sql, cleanup: () => sql.close() }
    },
  },
  ...(TEST_DATABASE_URL === undefined
    ? []
    : [
        {
          name: 'postgresql',
          async open() {
            const url = TEST_DATABASE_URL ?? ''
            const schema = uniqueSchemaName()
            const sql = await openPostgresSql(url, { schema })
            return {
              sql,
              async cleanup() {
                await sql.close()
                await dropSchema(url, schema)
              },
            }
          },
        },
      ]),
]
