import type { Sql } from './sql.ts'

/** How long counters of finished windows are kept before a prune removes them. */
const KEEP_FINISHED_WINDOWS_SEC = 60 * 60

/**
 * Request counters for the per-minute limits of DESIGN 7.16: in the store, shared by every replica, on PostgreSQL;
 * in memory on the embedded store, whose one owning process sees every request (createMemoryRateLimitStore).
 */
export type RateLimitStore = {
  /**
   * Counts one request of `subject` in the fixed window starting at `windowStartSec` and returns the count so far,
   * this request included. One atomic statement, so concurrent replicas never lose a count.
   */
  hit(subject: string, windowStartSec: number): Promise<number>
  /**
   * `hit` for a key's counter, and in the same statement whether the key is on the revocation denylist: one round
   * trip for a keyed request. A revoked key's request is counted against that key, which no one can use any more.
   */
  hitKey(keyId: string, subject: string, windowStartSec: number): Promise<{ calls: number; isRevoked: boolean }>
  /** Deletes the counters of windows that started more than an hour before `nowSec`. */
  prune(nowSec: number): Promise<void>
}

export function createRateLimitStore(sql: Sql): RateLimitStore {
  return {
    async hit(subject, windowStartSec) {
      const [row] = await sql.query<{ calls: number }>(
        `insert into rate_counters (subject, window_start, calls) values ($1, $2, 1)
         on conflict (subject, window_start) do update set calls = rate_counters.calls + 1
         returning calls`,
        [subject, windowStartSec],
      )
      if (row === undefined) throw new Error('the rate counter was not returned')
      return Number(row.calls)
    },
    async hitKey(keyId, subject, windowStartSec) {
      const [row] = await sql.query<{ calls: number; revoked: boolean }>(
        `with hit as (
           insert into rate_counters (subject, window_start, calls) values ($1, $2, 1)
           on conflict (subject, window_start) do update set calls = rate_counters.calls + 1
           returning calls
         )
         select hit.calls, exists (select 1 from revoked_keys where id = $3) as revoked from hit`,
        [subject, windowStartSec, keyId],
      )
      if (row === undefined) throw new Error('the rate counter was not returned')
      return { calls: Number(row.calls), isRevoked: row.revoked === true }
    },
    async prune(nowSec) {
      await sql.query('delete from rate_counters where window_start < $1', [nowSec - KEEP_FINISHED_WINDOWS_SEC])
    },
  }
}

/**
 * The counters of an embedded store, kept in the memory of the one process that owns its data directory: exact, as
 * every request passes through this process, and free of the store round trip. A restart starts the current minute's
 * counts again (the monthly quotas and daily budgets stay in the store). `isRevoked` is the key store's denylist.
 */
export function createMemoryRateLimitStore(isRevoked: (keyId: string) => Promise<boolean>): RateLimitStore {
  /** Counts by window start, then by subject. */
  const windows = new Map<number, Map<string, number>>()
  const count = (subject: string, windowStartSec: number): number => {
    let counts = windows.get(windowStartSec)
    if (counts === undefined) windows.set(windowStartSec, (counts = new Map()))
    const calls = (counts.get(subject) ?? 0) + 1
    counts.set(subject, calls)
    return calls
  }
  return {
    async hit(subject, windowStartSec) {
      return count(subject, windowStartSec)
    },
    async hitKey(keyId, subject, windowStartSec) {
      const calls = count(subject, windowStartSec)
      return { calls, isRevoked: await isRevoked(keyId) }
    },
    async prune(nowSec) {
      for (const windowStartSec of windows.keys()) if (windowStartSec < nowSec - KEEP_FINISHED_WINDOWS_SEC) windows.delete(windowStartSec)
    },
  }
}
