import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import type { Sql } from '../../src/store/sql.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

// openPgliteSql prepares data statements once per session and runs each call in one pass: these pin that a prepared
// statement answers what an unprepared one would, before and after the schema changes, errors and transactions.
// Both threads a database runs on (the event loop's, and a worker of its own, as a data directory's does) are pinned.
describe.each(['main', 'worker'] as const)('openPgliteSql (%s thread): statements prepared once per session', (thread) => {
  // One database for the file (a worker's start is seconds under tsx); each test starts from a new table.
  let sql: Sql
  beforeAll(async () => {
    sql = await openPgliteSql(undefined, { template: await migratedPgliteTemplate(), thread })
  })
  beforeEach(async () => {
    await sql.query('drop table if exists things')
    await sql.query('create table things (id int primary key, name text not null, doc jsonb, at timestamptz)')
  })
  afterAll(() => sql.close())

  it('answers a repeated statement with its parameters each time, values parsed by their column types', async () => {
    const insert = 'insert into things (id, name, doc, at) values ($1, $2, $3, $4)'
    await sql.query(insert, [1, 'one', JSON.stringify({ a: [1, 2] }), '2026-01-02T03:04:05.000Z'])
    await sql.query(insert, [2, 'Zürich ✓ 𝄞', null, null])
    const select = 'select id, name, doc, at from things where id = $1'
    expect(await sql.query(select, [1])).toEqual([{ id: 1, name: 'one', doc: { a: [1, 2] }, at: new Date('2026-01-02T03:04:05.000Z') }])
    expect(await sql.query(select, [2])).toEqual([{ id: 2, name: 'Zürich ✓ 𝄞', doc: null, at: null }])
    expect(await sql.query(select, [3])).toEqual([])
  })

  it('returns the new shape of `select *` after a column is added', async () => {
    await sql.query('insert into things (id, name) values (1, $1)', ['one'])
    expect(Object.keys((await sql.query('select * from things'))[0] ?? {})).toEqual(['id', 'name', 'doc', 'at'])
    await sql.query('alter table things add column extra text')
    expect(Object.keys((await sql.query('select * from things'))[0] ?? {})).toEqual(['id', 'name', 'doc', 'at', 'extra'])
  })

  it('keeps a statement usable after it failed', async () => {
    const insert = 'insert into things (id, name) values ($1, $2)'
    await sql.query(insert, [1, 'one'])
    await expect(sql.query(insert, [1, 'again'])).rejects.toMatchObject({ code: '23505' })
    await sql.query(insert, [2, 'two'])
    expect(await sql.query('select id, name from things order by id')).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ])
  })

  it('rolls a transaction back whole when one of its prepared statements fails', async () => {
    const insert = 'insert into things (id, name) values ($1, $2)'
    await sql.query(insert, [1, 'one'])
    await expect(
      sql.transaction(async (tx) => {
        await tx.query(insert, [2, 'two'])
        expect(await tx.query('select count(*)::int as n from things')).toEqual([{ n: 2 }])
        await tx.query(insert, [1, 'clash'])
      }),
    ).rejects.toMatchObject({ code: '23505' })
    expect(await sql.query('select id from things order by id')).toEqual([{ id: 1 }])
  })

  it('runs a statement made outside an open transaction only after the transaction ends', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const transaction = sql
      .transaction(async (tx) => {
        await tx.query('insert into things (id, name) values ($1, $2)', [1, 'uncommitted'])
        await held
        throw new Error('roll back')
      })
      .catch((error: unknown) => error)
    await new Promise((resolve) => setTimeout(resolve, 10))
    const outside = sql.query<{ n: number }>('select count(*)::int as n from things')
    release()
    expect(await transaction).toEqual(new Error('roll back'))
    expect(await outside).toEqual([{ n: 0 }])
  })

  it('still answers once more distinct statements have run than it keeps prepared', async () => {
    for (let n = 0; n < 300; n++) expect(await sql.query(`select $1::int + ${n} as sum`, [1])).toEqual([{ sum: n + 1 }])
    expect(await sql.query('select $1::int + 0 as sum', [5])).toEqual([{ sum: 5 }])
  })
})
