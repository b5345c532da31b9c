import type { KeyTier } from '../schemas/keys.ts'
import type { Sql } from './sql.ts'

export type KeyIssuance = {
  id: string
  tier: KeyTier
  issuedAt: Date
  issuedBy: 'self_serve' | 'operator'
  /** A keyed hash of the requester's IP (never the IP itself); null for operator-issued keys. */
  ipHash: string | null
}

export type IssueOutcome = { ok: true } | { ok: false; retryAfterSec: number }

/** What key issuance and revocation need from the database. The keys themselves are never stored. */
export type KeyStore = {
  /**
   * A signing secret by name (`api_key_secret`, `quote_secret`): the one already stored, or `generate()`'s, stored
   * once for all replicas and restarts.
   */
  sharedSecret(name: string, generate: () => string): Promise<string>
  /**
   * Records a self-serve issuance unless the IP already had `limit` keys in the window ending at `issuedAt`; then
   * says when the oldest of them leaves the window. Replicas take turns per IP, so the limit holds across them.
   */
  issueSelfServe(issuance: KeyIssuance, limit: number, windowMs: number): Promise<IssueOutcome>
  /** Records an operator-issued key (no limit). */
  issueByOperator(issuance: KeyIssuance): Promise<void>
  /** Adds a key id to the denylist; false when it was already there. */
  revoke(id: string, at: Date): Promise<boolean>
  isRevoked(id: string): Promise<boolean>
  /** Whether this store issued the key (the portal or `swapeazi keys issue`): a key signed elsewhere was not. */
  isIssued(id: string): Promise<boolean>
}

/**
 * The key store over a migrated connection. On an exclusive connection (the embedded store's one owner) the denylist
 * is read once and then kept in memory, written through on every revoke: revoking is permanent and only this process
 * can write it, so the copy stays exact and a keyed request reads it without a round trip.
 */
export function createKeyStore(sql: Sql): KeyStore {
  let denylist: Promise<Set<string>> | undefined
  const loadDenylist = (): Promise<Set<string>> =>
    (denylist ??= sql.query<{ id: string }>('select id from revoked_keys').then((rows) => new Set(rows.map((row) => row.id))))
  const insert = (q: Pick<Sql, 'query'>, k: KeyIssuance): Promise<unknown> =>
    q.query('insert into api_keys (id, tier, issued_at, issued_by, ip_hash) values ($1, $2, $3, $4, $5)', [
      k.id,
      k.tier,
      k.issuedAt.toISOString(),
      k.issuedBy,
      k.ipHash,
    ])
  return {
    async sharedSecret(name, generate) {
      await sql.query(`insert into settings (name, value) values ($1, $2) on conflict (name) do nothing`, [name, generate()])
      const [row] = await sql.query<{ value: string }>(`select value from settings where name = $1`, [name])
      if (row === undefined) throw new Error(`the secret ${name} could not be stored`)
      return row.value
    },
    issueSelfServe(issuance, limit, windowMs) {
      return sql.transaction(async (tx) => {
        await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`keys:${issuance.ipHash ?? ''}`])
        const since = new Date(issuance.issuedAt.getTime() - windowMs)
        const rows = await tx.query<{ issued_at: unknown }>(
          'select issued_at from api_keys where ip_hash = $1 and issued_at > $2 order by issued_at asc',
          [issuance.ipHash, since.toISOString()],
        )
        if (rows.length >= limit) {
          const oldest = new Date(rows[0]?.issued_at as Date | string).getTime()
          return { ok: false, retryAfterSec: Math.max(1, Math.ceil((oldest + windowMs - issuance.issuedAt.getTime()) / 1000)) }
        }
        await insert(tx, issuance)
        return { ok: true }
      })
    },
    async issueByOperator(issuance) {
      await insert(sql, issuance)
    },
    async revoke(id, at) {
      const rows = await sql.query('insert into revoked_keys (id, revoked_at) values ($1, $2) on conflict (id) do nothing returning id', [
        id,
        at.toISOString(),
      ])
      if (sql.isExclusive) (await loadDenylist()).add(id)
      return rows.length === 1
    },
    async isRevoked(id) {
      if (sql.isExclusive) return (await loadDenylist()).has(id)
      return (await sql.query('select 1 from revoked_keys where id = $1', [id])).length === 1
    },
    async isIssued(id) {
      return (await sql.query('select 1 from api_keys where id = $1', [id])).length === 1
    },
  }
}
