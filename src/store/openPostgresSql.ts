import pg from 'pg'
import type { Sql } from './sql.ts'

export type OpenPostgresSqlOptions = {
  maxConnections?: number
  /** A schema to work in (created if missing), so test suites can share one database without meeting. */
  schema?: string
}

/** PostgreSQL for replicas (DESIGN 9): a pool over `DATABASE_URL`. */
export async function openPostgresSql(url: string, options: OpenPostgresSqlOptions = {}): Promise<Sql> {
  const { schema } = options
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new RangeError(`not a plain schema name: ${schema}`)
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
  })
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {})
  if (schema !== undefined) await createSchema(pool, schema)
  await pool.query('select 1')
  return {
    describe: `postgresql (${redactUrl(url)})`,
    isExclusive: false,
    async query<Row>(text: string, params: readonly unknown[] = []) {
      return (await pool.query(text, params as unknown[])).rows as Row[]
    },
    async transaction(work) {
      const client = await pool.connect()
      try {
        await client.query('begin')
        const result = await work({
          describe: 'postgresql transaction',
          async query<Row>(text: string, params: readonly unknown[] = []) {
            return (await client.query(text, params as unknown[])).rows as Row[]
          },
        })
        await client.query('commit')
        return result
      } catch (error) {
        await client.query('rollback').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
    close: () => pool.end(),
  }
}

/**
 * `create schema if not exists` is not safe under concurrency: two sessions can both find it missing and one then
 * fails on the catalogue's unique index. Replicas opening a new schema together take turns on an advisory lock.
 */
async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('begin')
    await client.query('select pg_advisory_xact_lock(7402401)')
    await client.query(`create schema if not exists ${schema}`)
    await client.query('commit')
  } catch (error) {
    await client.query('rollback').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

/** The URL without its password, for logs. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparseable url)'
  }
}
