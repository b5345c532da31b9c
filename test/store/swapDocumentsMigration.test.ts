// Migration 16 on a store that already holds swaps: their quote and transaction, written as jsonb, read back the
// same as json, and the quote's bridge is still queried by `->>` (the intelligence tracker's read).
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createStore } from '../../src/store/createStore.ts'
import { MIGRATIONS, migrate } from '../../src/store/migrations.ts'
import { migrateUpTo, unmigratedStores } from './storeDrivers.ts'

const BEFORE_16 = 15

describe.each(unmigratedStores)('migration 16 on $name', (driver) => {
  it('keeps every swap recorded before it, whole, and the quote still answers ->>', async () => {
    const { sql, cleanup } = await driver.open()
    try {
      await migrateUpTo(sql, BEFORE_16)
      const quote = { bridge: 'cctp', route: { id: 'r1', steps: [{ kind: 'bridge', fee: null }] }, toAmountMin: '994.127838' }
      // Past 2 KB, so jsonb's row was compressed before the migration.
      const transactionRequest = { to: `0x${'ab'.repeat(20)}`, data: `0x${randomBytes(3_000).toString('hex')}`, value: '0x0' }
      const refs = ['swp_01KAMIGRATION16SMALL00000', 'swp_01KAMIGRATION16LARGE00000']
      for (const [i, ref] of refs.entries())
        await sql.query(
          `insert into swaps (ref, channel, status, from_chain, to_chain, from_token, to_token, from_amount, to_amount, to_amount_min,
                              from_address, to_address, quote, transaction_request, created_at, key_id)
           values ($1, 'api_key', 'built', 'ETH', 'BAS', 'USDC', 'USDC', '1000', '999', '994.127838', $2, $2, $3, $4, now(), 'key_1')`,
          [
            ref,
            `0x${'11'.repeat(20)}`,
            JSON.stringify(quote),
            JSON.stringify(i === 0 ? { to: '0x01', data: '0x', value: '0x0' } : transactionRequest),
          ],
        )

      expect(await migrate(sql)).toEqual(MIGRATIONS.filter((m) => m.id > BEFORE_16).map((m) => m.id))
      const types = await sql.query<{ column_name: string; data_type: string }>(
        `select column_name, data_type from information_schema.columns
         where table_name = 'swaps' and column_name in ('quote', 'transaction_request') and table_schema = current_schema()
         order by column_name`,
      )
      expect(types).toEqual([
        { column_name: 'quote', data_type: 'json' },
        { column_name: 'transaction_request', data_type: 'json' },
      ])
      const store = createStore(sql)
      expect(await store.getSwap(refs[0] ?? '')).toMatchObject({ quote, transactionRequest: { to: '0x01', data: '0x', value: '0x0' } })
      expect(await store.getSwap(refs[1] ?? '')).toMatchObject({ quote, transactionRequest })
      expect(await sql.query(`select quote->>'bridge' as bridge from swaps order by ref`)).toEqual([{ bridge: 'cctp' }, { bridge: 'cctp' }])
    } finally {
      await cleanup()
    }
  }, 60_000)
})
