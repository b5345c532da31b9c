import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import type { Sql } from '../../src/store/sql.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { type OpenedStore, storeDrivers } from './storeDrivers.ts'

// Review of issue 15: a statement issued on a transaction after its work ended (an un-awaited statement, or a branch
// of a Promise.all still running when another failed) crashed the store's thread for good, where every later
// statement then failed; in the event loop's thread it ran outside the transaction, and on PostgreSQL on a pooled
// connection another caller may hold. Each backend refuses it now and goes on serving.
type Backend = { name: string; open(): Promise<{ sql: Sql; close(): Promise<void> }> }

const backends: Backend[] = [
  {
    name: "pglite on the store's thread",
    open: async () => {
      const sql = await openPgliteSql(undefined, { template: await migratedPgliteTemplate(), thread: 'worker' })
      return { sql, close: () => sql.close() }
    },
  },
  ...storeDrivers().map((driver) => ({
    name: driver.name,
    open: async () => {
      const opened: OpenedStore = await driver.open()
      return { sql: opened.sql, close: opened.cleanup }
    },
  })),
]

describe.each(backends)('a statement on a transaction that has ended: $name', (backend) => {
  let opened: Awaited<ReturnType<Backend['open']>> | undefined
  afterAll(() => opened?.close())

  it('is refused with what to do, runs nowhere, and the store goes on serving', async () => {
    opened = await backend.open()
    const { sql } = opened
    await sql.query('create table late_things (n int)')
    let late: Promise<unknown> | undefined
    await sql.transaction(async (tx) => {
      await tx.query('insert into late_things values (1)')
      late = (async () => {
        await sleep(20)
        return tx.query('insert into late_things values (2)')
      })()
      late.catch(() => {})
    })
    await expect(late).rejects.toThrow(/transaction that has ended: await every statement/)
    // The late insert ran neither in the committed transaction nor outside it.
    expect(await sql.query('select n from late_things order by n')).toEqual([{ n: 1 }])

    // A Promise.all whose first branch fails: the transaction rolls back, the other branch's next statement is refused.
    let second: Promise<unknown> | undefined
    await expect(
      sql.transaction(async (tx) => {
        second = (async () => {
          await tx.query('insert into late_things values (3)')
          await sleep(30)
          return tx.query('insert into late_things values (4)')
        })()
        second.catch(() => {})
        await Promise.all([Promise.reject(new Error('first branch failed')), second])
      }),
    ).rejects.toThrow('first branch failed')
    await expect(second).rejects.toThrow(/transaction that has ended/)
    expect(await sql.query('select n from late_things order by n')).toEqual([{ n: 1 }])
    await sql.query('drop table late_things')
  }, 60_000)
})
