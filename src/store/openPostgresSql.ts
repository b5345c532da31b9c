import type pg from 'pg'
import { type Sql, transactionScope } from './sql.ts'

/** How long the first connection may take before start-up gives up: never a hang on an address that drops packets. */
export const CONNECT_TIMEOUT_MS = 5_000

export type OpenPostgresSqlOptions = {
  maxConnections?: number
  /** Default CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number
  /** A schema to work in (created if missing), so test suites can share one database without meeting. */
  schema?: string
}

/**
 * PostgreSQL for replicas (DESIGN 9): a pool over `DATABASE_URL`. A database that cannot be reached, refuses the
 * credentials or does not exist rejects within the connect timeout with one line that says so and names DATABASE_URL.
 */
export async function openPostgresSql(url: string, options: OpenPostgresSqlOptions = {}): Promise<Sql> {
  const { schema } = options
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new RangeError(`not a plain schema name: ${schema}`)
  // pg is loaded only here: the embedded default never needs it, and loading it cost about 60 ms of every start.
  const { default: driver } = await import('pg')
  const connectionString = withExplicitSslMode(url)
  await probe(driver, connectionString, options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS)
  const pool = new driver.Pool({
    connectionString,
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
      const scope = transactionScope()
      try {
        await client.query('begin')
        const result = await work({
          describe: 'postgresql transaction',
          async query<Row>(text: string, params: readonly unknown[] = []) {
            scope.check()
            return (await client.query(text, params as unknown[])).rows as Row[]
          },
        }).finally(scope.end)
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
 * pg 8 treats `sslmode=prefer`, `require` and `verify-ca` as `verify-full` (the server's certificate and host name are
 * checked), and says so in a multi-line SECURITY WARNING on stderr, ahead of whatever start-up then prints. The URL
 * handed to pg names that mode itself, so the behaviour is the same and start-up failures stay one line (issue 15
 * item 7). With `uselibpqcompat=true` the URL asks for libpq's own semantics and is left as it is.
 */
export function withExplicitSslMode(url: string): string {
  const query = url.indexOf('?')
  if (query < 0) return url
  const params = url.slice(query + 1).split('&')
  if (params.includes('uselibpqcompat=true')) return url
  const aliased = /^sslmode=(prefer|require|verify-ca)$/
  if (!params.some((param) => aliased.test(param))) return url
  return `${url.slice(0, query)}?${params.map((param) => (aliased.test(param) ? 'sslmode=verify-full' : param)).join('&')}`
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

/**
 * One bounded connection before the pool is made. The pool's own connections wait without a limit (requests queue
 * for a free one under load), so the first check cannot rely on them to give up.
 */
async function probe(driver: typeof pg, url: string, timeoutMs: number): Promise<void> {
  const client = new driver.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    throw new Error(unavailable(url, error, timeoutMs), { cause: error })
  } finally {
    await client.end().catch(() => {})
  }
}

/** Why the database at `url` cannot be used, and what to change: one line. */
function unavailable(url: string, error: unknown, timeoutMs: number): string {
  const where = `PostgreSQL at ${endpoint(url)}`
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined
  const message = error instanceof Error ? error.message : String(error)
  switch (code) {
    case 'ECONNREFUSED':
      return `${where} refused the connection (ECONNREFUSED): start PostgreSQL there, or correct the host and port in DATABASE_URL`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${where} cannot be reached: the host does not resolve (${code}): correct the host in DATABASE_URL`
    case '28P01':
    case '28000':
      return `${where} refused the credentials (${code}: ${message}): correct the user and password in DATABASE_URL`
    case '3D000':
      return `${where} has no such database (${code}: ${message}): create it, or correct the database name in DATABASE_URL`
  }
  if (/timeout/i.test(message))
    return `${where} did not answer within ${timeoutMs / 1000} s: check that it runs and is reachable from here, or correct DATABASE_URL`
  return `${where} cannot be used (${code === undefined ? message : `${code}: ${message}`}): check DATABASE_URL`
}

/** `host:port/database` of a PostgreSQL URL, never its credentials. */
function endpoint(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
  } catch {
    return '(unparseable DATABASE_URL)'
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
