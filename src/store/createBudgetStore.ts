import type { Sql } from './sql.ts'

/** What the MCP payer has committed to spend per wallet per UTC day (atomic USDC), shared by every process on the store. */
export type BudgetStore = {
  /**
   * Adds `amount` to the wallet's spend for `day` unless that would pass `limit`: one atomic statement, so concurrent
   * callers can never together exceed the limit. Returns the spend after the reservation, or undefined when refused.
   */
  reserve(wallet: string, day: string, amount: bigint, limit: bigint): Promise<bigint | undefined>
  /** Gives back a reservation whose payment certainly did not happen. */
  release(wallet: string, day: string, amount: bigint): Promise<void>
  spent(wallet: string, day: string): Promise<bigint>
}

export function createBudgetStore(sql: Sql): BudgetStore {
  return {
    async reserve(wallet, day, amount, limit) {
      if (amount > limit) return undefined
      const [row] = await sql.query<{ spent: string }>(
        `insert into payer_spend (wallet, day, spent) values ($1, $2, $3)
         on conflict (wallet, day) do update set spent = payer_spend.spent + excluded.spent
           where payer_spend.spent + excluded.spent <= $4
         returning spent::text as spent`,
        [wallet.toLowerCase(), day, amount.toString(), limit.toString()],
      )
      return row === undefined ? undefined : BigInt(row.spent)
    },
    async release(wallet, day, amount) {
      await sql.query(`update payer_spend set spent = greatest(spent - $3, 0) where wallet = $1 and day = $2`, [
        wallet.toLowerCase(),
        day,
        amount.toString(),
      ])
    },
    async spent(wallet, day) {
      const [row] = await sql.query<{ spent: string }>(`select spent::text as spent from payer_spend where wallet = $1 and day = $2`, [
        wallet.toLowerCase(),
        day,
      ])
      return row === undefined ? 0n : BigInt(row.spent)
    },
  }
}
