import type { Sql } from './sql.ts'

/**
 * The schema, one dialect for both drivers (DESIGN 9). Append only: a shipped migration is never edited, so every
 * store, embedded or shared, reaches the same schema by the same steps.
 */
export const MIGRATIONS: readonly { id: number; name: string; sql: string }[] = [
  {
    id: 1,
    name: 'x402 payments and swaps',
    sql: `
      create table x402_payments (
        payer text not null,
        nonce text not null,
        status text not null check (status in ('reserved', 'settled', 'unsettled')),
        value numeric(78, 0) not null,
        asset text not null,
        pay_to text not null,
        valid_after numeric(78, 0) not null,
        valid_before numeric(78, 0) not null,
        signature text not null,
        settlement_mode text not null,
        swap_ref text not null,
        transaction text,
        error text,
        reserved_at timestamptz not null,
        settled_at timestamptz,
        primary key (payer, nonce)
      );
      create table swaps (
        ref text primary key,
        channel text not null,
        status text not null,
        from_chain text not null,
        to_chain text not null,
        from_token text not null,
        to_token text not null,
        from_amount text not null,
        to_amount text not null,
        to_amount_min text not null,
        from_address text not null,
        to_address text not null,
        quote jsonb not null,
        transaction_request jsonb not null,
        payer text,
        payment_nonce text,
        created_at timestamptz not null,
        foreign key (payer, payment_nonce) references x402_payments (payer, nonce)
      );
      create index swaps_from_address_created on swaps (from_address, created_at);
    `,
  },
  {
    id: 2,
    name: 'api keys: issuance, revocation, the signing secret',
    sql: `
      create table settings (
        name text primary key,
        value text not null
      );
      create table api_keys (
        id text primary key,
        tier text not null check (tier in ('free', 'pro')),
        issued_at timestamptz not null,
        issued_by text not null check (issued_by in ('self_serve', 'operator')),
        ip_hash text
      );
      create index api_keys_ip_hash_issued_at on api_keys (ip_hash, issued_at);
      create table revoked_keys (
        id text primary key,
        revoked_at timestamptz not null
      );
    `,
  },
  {
    id: 3,
    name: 'rate limit counters; keyed swaps name their key',
    sql: `
      create table rate_counters (
        subject text not null,
        window_start bigint not null,
        calls integer not null,
        primary key (subject, window_start)
      );
      alter table swaps add column key_id text;
    `,
  },
  {
    id: 4,
    name: 'corridor intelligence: observations and monthly usage counters',
    sql: `
      create table observations (
        id text primary key,
        observed_at timestamptz not null,
        from_chain text not null,
        to_chain text not null,
        from_token text not null,
        to_token text not null,
        from_currency text not null,
        to_currency text not null,
        bridge text not null,
        amount numeric not null check (amount > 0),
        amount_usd numeric not null check (amount_usd >= 0),
        quoted_duration_sec integer check (quoted_duration_sec >= 0),
        settled_duration_sec integer check (settled_duration_sec >= 0),
        realised_slippage_bps integer,
        status text not null check (status in ('DONE', 'FAILED', 'PENDING', 'NOT_FOUND')),
        substatus text,
        failure_reason text,
        source text not null check (source in ('import', 'tracker'))
      );
      create index observations_chains on observations (from_chain, to_chain, observed_at)
        include (to_currency, bridge, status, substatus, amount_usd, quoted_duration_sec, settled_duration_sec, realised_slippage_bps, failure_reason);
      create index observations_currencies on observations (from_currency, to_currency, observed_at)
        include (to_chain, bridge, status, substatus, amount_usd, quoted_duration_sec, settled_duration_sec, realised_slippage_bps, failure_reason);
      create table usage_counters (
        subject text not null,
        period text not null,
        calls integer not null,
        primary key (subject, period)
      );
    `,
  },
  {
    id: 5,
    name: 'batch disbursements',
    sql: `
      create table disbursements (
        ref text primary key,
        from_chain text not null,
        from_token text not null,
        from_address text not null,
        items jsonb not null,
        totals jsonb not null,
        transaction_request jsonb not null,
        key_id text not null,
        created_at timestamptz not null
      );
    `,
  },
  {
    id: 6,
    name: "the MCP payer's daily spend",
    sql: `
      create table payer_spend (
        wallet text not null,
        day text not null,
        spent numeric(78, 0) not null,
        primary key (wallet, day)
      );
    `,
  },
  {
    id: 7,
    name: 'swaps name their payment without a foreign key; the unqueried address index goes',
    // Both writers produce the (payer, payment_nonce) link from the payment row they claim in the same statement or
    // transaction, so the key guarded nothing, and its check cost a quarter of the paid path's store time on PGlite.
    // Indexes come with the queries that need them. Migration 1 created both as it shipped; this removes them.
    sql: `
      alter table swaps drop constraint if exists swaps_payer_payment_nonce_fkey;
      drop index if exists swaps_from_address_created;
    `,
  },
]

/** Brings the schema up to date; replicas starting together take turns on an advisory lock. */
export async function migrate(sql: Sql): Promise<number[]> {
  return sql.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(7402402)`)
    await tx.query(
      `create table if not exists schema_migrations (id integer primary key, name text not null, applied_at timestamptz not null default now())`,
    )
    const done = new Set((await tx.query<{ id: number }>('select id from schema_migrations')).map((row) => row.id))
    const applied: number[] = []
    for (const migration of MIGRATIONS) {
      if (done.has(migration.id)) continue
      for (const statement of migration.sql
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s.length > 0))
        await tx.query(statement)
      await tx.query('insert into schema_migrations (id, name) values ($1, $2)', [migration.id, migration.name])
      applied.push(migration.id)
    }
    return applied
  })
}
