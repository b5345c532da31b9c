import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DataDirHeldError } from '../../src/store/dataDirLock.ts'
import { createStore, type PaymentReservation, type SwapRecord } from '../../src/store/createStore.ts'
import { MIGRATIONS, migrate } from '../../src/store/migrations.ts'
import { openPgliteSql } from '../../src/store/openPgliteSql.ts'
import { openStore } from '../../src/store/openStore.ts'

const OPEN_TIMEOUT_MS = 120_000

const reservation: PaymentReservation = {
  payer: '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01',
  nonce: '0x00000000000000000000000000000000000000000000000000000000DEADBEEF',
  value: 20_000n,
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x2222222222222222222222222222222222222222',
  validAfter: 1_795_000_000n,
  validBefore: 2n ** 64n - 1n,
  signature: '0x1234',
  settlementMode: 'ledger',
  swapRef: 'swp_restart',
  reservedAt: new Date('2026-11-20T12:00:00.123Z'),
}

const swap: SwapRecord = {
  ref: 'swp_restart',
  channel: 'x402',
  status: 'built',
  fromChain: 'ETH',
  toChain: 'ETH',
  fromToken: 'USDC',
  toToken: 'USDT',
  fromAmount: '1000',
  toAmount: '999.5',
  toAmountMin: '994.5',
  fromAddress: '0x1111111111111111111111111111111111111111',
  toAddress: '0x1111111111111111111111111111111111111111',
  quote: { id: 'q_restart', legs: [1, 2, 3] },
  transactionRequest: { to: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e', data: '0x00', value: '0' },
  createdAt: new Date('2026-11-20T12:00:01.000Z'),
}

describe('PGlite on a data directory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'swapeazi-pglite-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it(
    'keeps payments, swaps and the migration record across a close and reopen',
    async () => {
      const first = await openPgliteSql(dataDir)
      let appliedAt: unknown[]
      try {
        // One owner: the directory is refused while it is open, and free again once closed (below).
        await expect(openStore({ driver: 'pglite', dataDir })).rejects.toThrow(DataDirHeldError)
        expect(await migrate(first)).toEqual(MIGRATIONS.map((m) => m.id))
        const store = createStore(first)
        expect(await store.reservePayment(reservation)).toBe(true)
        await store.recordPaidSwap(
          {
            payer: reservation.payer,
            nonce: reservation.nonce,
            transaction: 'ledger:swp_restart',
            settledAt: new Date('2026-11-20T12:00:02.000Z'),
          },
          swap,
        )
        appliedAt = (await first.query<{ applied_at: unknown }>('select applied_at from schema_migrations order by id')).map(
          (row) => row.applied_at,
        )
      } finally {
        await first.close()
      }
      expect(readdirSync(dataDir).length).toBeGreaterThan(0)

      const reopened = await openStore({ driver: 'pglite', dataDir })
      try {
        // openStore migrated on open; nothing was left to apply, and the migration rows are the first open's.
        expect(await migrate(reopened.sql)).toEqual([])
        const rows = await reopened.sql.query<{ id: number; applied_at: unknown }>(
          'select id, applied_at from schema_migrations order by id',
        )
        expect(rows.map((row) => row.id)).toEqual(MIGRATIONS.map((m) => m.id))
        expect(rows.map((row) => row.applied_at)).toEqual(appliedAt)

        expect(await reopened.getPayment(reservation.payer, reservation.nonce)).toEqual({
          payer: reservation.payer.toLowerCase(),
          nonce: reservation.nonce.toLowerCase(),
          value: 20_000n,
          asset: reservation.asset.toLowerCase(),
          payTo: reservation.payTo,
          validAfter: 1_795_000_000n,
          validBefore: 18_446_744_073_709_551_615n,
          signature: '0x1234',
          settlementMode: 'ledger',
          swapRef: 'swp_restart',
          status: 'settled',
          transaction: 'ledger:swp_restart',
          error: null,
          reservedAt: '2026-11-20T12:00:00.123Z',
          settledAt: '2026-11-20T12:00:02.000Z',
          requestKey: null,
          result: null,
        })
        expect(await reopened.getSwap('swp_restart')).toEqual({
          ...swap,
          payment: { payer: reservation.payer.toLowerCase(), nonce: reservation.nonce.toLowerCase() },
          keyId: null,
          createdAt: '2026-11-20T12:00:01.000Z',
        })
        // Still single use after the restart.
        expect(await reopened.reservePayment({ ...reservation, swapRef: 'swp_other' })).toBe(false)
      } finally {
        await reopened.sql.close()
      }
    },
    OPEN_TIMEOUT_MS,
  )
})
