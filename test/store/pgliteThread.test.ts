import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import { openPgliteInWorker } from '../../src/store/pgliteThread.ts'
import type { Sql } from '../../src/store/sql.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

// What crosses between the main thread and the embedded store's own thread (pgliteThread.ts): values, errors,
// transactions and the thread's end, as the store code sees them on the main thread.
describe('the embedded store on a thread of its own', () => {
  // One database for the file (a worker's start is seconds under tsx); each test starts from a new table.
  let sql: Sql
  beforeAll(async () => {
    sql = await openPgliteSql(undefined, { template: await migratedPgliteTemplate(), thread: 'worker' })
  })
  beforeEach(async () => {
    await sql.query('drop table if exists things')
    await sql.query('create table things (id int primary key, amount numeric(78, 0), big int8, bytes bytea, at timestamptz, doc jsonb)')
  })
  afterAll(() => sql.close())

  it('carries parameters and rows of every kind the store uses', async () => {
    const at = new Date('2026-12-02T10:11:12.345Z')
    const amount = (2n ** 256n - 1n).toString()
    await sql.query('insert into things values ($1, $2, $3, $4, $5, $6)', [
      1,
      amount,
      2n ** 62n,
      new Uint8Array([0, 1, 255]),
      at,
      { a: [1, 'b'] },
    ])
    const [row] = await sql.query<Record<string, unknown>>('select * from things where id = $1', [1])
    expect(row?.['amount']).toBe(amount)
    expect(row?.['big']).toBe(2n ** 62n)
    expect(row?.['bytes']).toEqual(new Uint8Array([0, 1, 255]))
    expect(row?.['at']).toEqual(at)
    expect(row?.['doc']).toEqual({ a: [1, 'b'] })
  })

  it("rejects with the database error's own fields, and stays usable", async () => {
    await sql.query('insert into things (id) values (1)')
    const error = await sql.query('insert into things (id) values (1)').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({ code: '23505', constraint: 'things_pkey' })
    expect((error as Error).message).toMatch(/duplicate key/)
    expect(await sql.query('select count(*)::int as n from things')).toEqual([{ n: 1 }])
  })

  it('commits a transaction whole, rolls a failed one back whole, and keeps outside statements out of it', async () => {
    const committed = await sql.transaction(async (tx) => {
      await tx.query('insert into things (id) values (1)')
      await tx.query('insert into things (id) values (2)')
      return 'done'
    })
    expect(committed).toBe('done')
    const failed = sql.transaction(async (tx) => {
      await tx.query('insert into things (id) values (3)')
      throw new Error('the work failed')
    })
    await expect(failed).rejects.toThrow('the work failed')
    // Posted while a transaction is open: it runs after the transaction ends, so it sees the row the
    // transaction wrote.
    let outside: Promise<unknown[]> | undefined
    await sql.transaction(async (tx) => {
      await tx.query('insert into things (id) values (4)')
      outside = sql.query('select id from things order by id')
      await new Promise((resolve) => setTimeout(resolve, 50))
      await tx.query('insert into things (id) values (5)')
    })
    expect(await outside).toEqual([{ id: 1 }, { id: 2 }, { id: 4 }, { id: 5 }])
  })

  it('answers many statements posted at once, each its own', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, n) => sql.query<{ n: number }>('select $1::int * 2 as n', [n])))
    expect(answers.map((rows) => rows[0]?.n)).toEqual(Array.from({ length: 200 }, (_, n) => n * 2))
  })
})

describe('opening a data directory on its own thread', () => {
  const root = mkdtempSync(join(tmpdir(), 'swapeazi-pglite-thread-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('keeps what it wrote across a close and reopen, and refuses statements once closed', async () => {
    const dataDir = join(root, 'data')
    const first = await openPgliteSql(dataDir, { template: await migratedPgliteTemplate() })
    expect(first.describe).toBe(`pglite (${dataDir})`)
    await first.query('create table kept (id int primary key)')
    await first.query('insert into kept values (7)')
    await first.close()
    await expect(first.query('select 1')).rejects.toThrow('PGlite is closed')
    await first.close()
    const second = await openPgliteSql(dataDir)
    try {
      expect(await second.query('select id from kept')).toEqual([{ id: 7 }])
    } finally {
      await second.close()
    }
  })

  it("rejects with the thread's error when the directory cannot hold a database", async () => {
    const file = join(root, 'a-file')
    writeFileSync(file, 'not a directory')
    await expect(openPgliteInWorker(join(file, 'data'))).rejects.toThrow(/ENOTDIR|not a directory|EEXIST|ENOENT/i)
  })
})
