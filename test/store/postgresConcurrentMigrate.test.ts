import { afterAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/createStore.ts'
import { MIGRATIONS, migrate } from '../../src/store/migrations.ts'
import { openPostgresSql } from '../../src/store/openPostgresSql.ts'
import { openStore } from '../../src/store/openStore.ts'
import type { Sql } from '../../src/store/sql.ts'
import { TEST_DATABASE_URL, adminQuery, dropSchema, uniqueSchemaName, urlWithSearchPath } from './storeDrivers.ts'

const TIMEOUT_MS = 60_000

describe.skipIf(TEST_DATABASE_URL === undefined)('PostgreSQL: replicas migrating one schema at once', () => {
  const url = TEST_DATABASE_URL ?? ''
  const schemas: string[] = []
  const opened: Sql[] = []
  const freshSchema = (): string => {
    const schema = uniqueSchemaName()
    schemas.push(schema)
    return schema
  }
  afterAll(async () => {
    await Promise.allSettled(opened.map((sql) => sql.close()))
    for (const schema of schemas) await dropSchema(url, schema)
  }, TIMEOUT_MS)

  const migrationRows = (schema: string) =>
    adminQuery<{ id: number; name: string }>(url, `select id, name from ${schema}.schema_migrations order by id`)

  it(
    'a migration lock another session holds past the wait stops the start with one line naming that session, not a wait without end',
    async () => {
      const schema = freshSchema()
      await adminQuery(url, `create schema ${schema}`)
      // One connection, so the session-level lock is taken and let go on the same session.
      const holder = await openPostgresSql(url, { maxConnections: 1 })
      const starting = await openPostgresSql(urlWithSearchPath(url, schema))
      opened.push(holder, starting)
      const [session] = await holder.query<{ pid: number }>('select pg_backend_pid() as pid, pg_advisory_lock(7402402)')
      let failure: string
      try {
        const started = Date.now()
        failure = await migrate(starting, { lockWaitMs: 300 }).then(
          () => 'migrated',
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        )
        expect(Date.now() - started).toBeLessThan(5_000)
      } finally {
        await holder.query('select pg_advisory_unlock(7402402)')
      }
      expect(failure).toMatch(
        new RegExp(
          `^postgresql \\(.+\\): session pid ${session?.pid} has held the schema migration lock for more than 0\\.3 s \\(another replica migrating, or a session that never let go\\): wait for it, end that session \\(select pg_terminate_backend\\(pid\\)\\), or check that DATABASE_URL names the database you mean$`,
        ),
      )
      // Once it is let go, the same start migrates.
      expect(await migrate(starting)).toEqual(MIGRATIONS.map((m) => m.id))
    },
    TIMEOUT_MS,
  )

  it(
    'two stores migrating a fresh schema concurrently both succeed, and it is migrated once',
    async () => {
      const schema = freshSchema()
      await adminQuery(url, `create schema ${schema}`)
      // Two pools, as two replicas have: the schema is chosen by the URL, as DATABASE_URL would carry it.
      const a = await openPostgresSql(urlWithSearchPath(url, schema))
      const b = await openPostgresSql(urlWithSearchPath(url, schema))
      opened.push(a, b)
      const results = await Promise.all([migrate(a), migrate(b)])
      // Exactly one of them applied the migrations; the other, after waiting on the lock, found nothing to do.
      expect([...results].sort((x, y) => x.length - y.length)).toEqual([[], MIGRATIONS.map((m) => m.id)])
      expect(await migrationRows(schema)).toEqual(MIGRATIONS.map(({ id, name }) => ({ id, name })))
      const tables = await adminQuery<{ table_name: string }>(
        url,
        `select table_name from information_schema.tables where table_schema = $1 order by table_name`,
        [schema],
      )
      expect(tables.map((row) => row.table_name)).toEqual([
        'across_lane_fees',
        'api_keys',
        'chain_cursors',
        'disbursements',
        'intel_outcomes',
        'intel_values',
        'intel_window',
        'leases',
        'mpp_payments',
        'observations',
        'payer_spend',
        'rate_counters',
        'relay_submissions',
        'revoked_keys',
        'schema_migrations',
        'settings',
        'swap_lifecycle',
        'swap_transitions',
        'swaps',
        'usage_counters',
        'x402_payments',
      ])
    },
    TIMEOUT_MS,
  )

  it(
    'openStore on one fresh schema from several replicas at once: all open, migrated once (repeated to meet the race)',
    async () => {
      for (let round = 0; round < 8; round += 1) {
        const schema = freshSchema()
        const outcomes = await Promise.allSettled([0, 1, 2].map(() => openStore({ driver: 'postgres', url, schema })))
        const stores = outcomes.flatMap((outcome): Store[] => (outcome.status === 'fulfilled' ? [outcome.value] : []))
        opened.push(...stores.map((store) => store.sql))
        const errors = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []))
        expect({ round, errors }).toEqual({ round, errors: [] })
        expect(await migrationRows(schema)).toEqual(MIGRATIONS.map(({ id, name }) => ({ id, name })))
      }
    },
    TIMEOUT_MS,
  )
})
