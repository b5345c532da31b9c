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
  {
    id: 8,
    name: 'corridor intelligence: the window aggregate, kept in step with observations by a trigger',
    // An intelligence answer aggregated every observation of its corridor over 90 days, so a pair spanning the table
    // sorted the whole table. The window aggregate holds, for one hour-aligned window (intel_window), the counts by
    // outcome and the counts by value of each measure, per pair key (from side, to side: chain or currency codes,
    // which are disjoint), bridge and USD size band; an answer reads it and the raw rows of the window's edges (under
    // an hour at each end) through the indexes (docs/performance.md). Values are counted exactly (1 s, 1 bp), and
    // also in blocks of 16 (level 1), so a percentile reads the blocks and then one block's values.
    // The trigger adds each inserted observation inside the window in the inserting statement; intel_window_move
    // moves the window forward (the rows that enter are added, the rows that leave subtracted, or it is rebuilt
    // when that is less work). Counts that fall to 0 stay, as do their last_seen_at and reason: both are then older
    // than the window's start, and readers ignore such values (src/store/corridorFigures.ts).
    sql: `
      create index observations_observed_at on observations (observed_at)
        include (from_chain, to_chain, from_currency, to_currency, bridge, status, substatus, amount_usd, quoted_duration_sec,
                 settled_duration_sec, realised_slippage_bps, failure_reason);
      create function intel_band(amount_usd numeric) returns smallint language sql immutable parallel safe
        return (case when amount_usd < 100 then 0 when amount_usd < 1000 then 1 when amount_usd < 10000 then 2
                     when amount_usd < 100000 then 3 else 4 end)::smallint;
      create table intel_window (
        id boolean primary key default true check (id),
        since timestamptz,
        until timestamptz
      );
      insert into intel_window default values;
      create table intel_outcomes (
        from_code text not null,
        to_code text not null,
        bridge text not null,
        band smallint not null,
        status text not null,
        substatus text,
        n integer not null,
        last_seen_at timestamptz not null,
        reason_at timestamptz,
        reason text,
        unique nulls not distinct (from_code, to_code, bridge, band, status, substatus)
      );
      create table intel_values (
        from_code text not null,
        to_code text not null,
        level smallint not null,
        bridge text not null,
        measure smallint not null,
        band smallint not null,
        value integer not null,
        n integer not null,
        primary key (from_code, to_code, level, bridge, measure, band, value) include (n)
      );
      create function intel_window_statement(source text, sign integer) returns text language sql immutable
        return format($statement$
          with observed as (
            select from_chain, to_chain, from_currency, to_currency, bridge, intel_band(amount_usd) as band, status, substatus,
                   settled_duration_sec, quoted_duration_sec, realised_slippage_bps, observed_at, failure_reason
            from %1$s
          ),
          outcomes as (
            select from_chain, to_chain, from_currency, to_currency, bridge, band, status, substatus, count(*) as n,
                   max(observed_at) as last_seen_at, max(observed_at) filter (where failure_reason is not null) as reason_at,
                   (array_agg(failure_reason order by observed_at desc, failure_reason desc) filter (where failure_reason is not null))[1] as reason
            from observed
            group by from_chain, to_chain, from_currency, to_currency, bridge, band, status, substatus
          ),
          outcomes_added as (
            insert into intel_outcomes as t (from_code, to_code, bridge, band, status, substatus, n, last_seen_at, reason_at, reason)
            select k.from_code, k.to_code, o.bridge, o.band, o.status, o.substatus, %2$s * sum(o.n), max(o.last_seen_at), max(o.reason_at),
                   (array_agg(o.reason order by o.reason_at desc, o.reason desc) filter (where o.reason is not null))[1]
            from outcomes o
            cross join lateral (values (o.from_chain, o.to_chain), (o.from_chain, o.to_currency), (o.from_currency, o.to_chain),
                                       (o.from_currency, o.to_currency)) k(from_code, to_code)
            group by k.from_code, k.to_code, o.bridge, o.band, o.status, o.substatus
            order by k.from_code, k.to_code, o.bridge, o.band, o.status, o.substatus
            on conflict (from_code, to_code, bridge, band, status, substatus) do update set
              n = t.n + excluded.n,
              last_seen_at = greatest(t.last_seen_at, excluded.last_seen_at),
              reason_at = greatest(t.reason_at, excluded.reason_at),
              reason = case when excluded.reason_at is not null
                             and (t.reason_at is null or (excluded.reason_at, excluded.reason) > (t.reason_at, t.reason))
                            then excluded.reason else t.reason end
          ),
          measured as (
            select from_chain, to_chain, from_currency, to_currency, bridge, m.measure, b.band, m.value, count(*) as n
            from observed
            cross join lateral (values (1, settled_duration_sec, true), (2, quoted_duration_sec, false),
                                       (3, realised_slippage_bps, true)) m(measure, value, is_banded)
            cross join lateral (values (-1), (case when m.is_banded then observed.band end)) b(band)
            where status = 'DONE' and substatus <> 'REFUNDED' and m.value is not null and b.band is not null
            group by from_chain, to_chain, from_currency, to_currency, bridge, m.measure, b.band, m.value
          )
          insert into intel_values as t (from_code, to_code, level, bridge, measure, band, value, n)
          select k.from_code, k.to_code, l.level, v.bridge, v.measure, v.band, case when l.level = 0 then v.value else v.value >> 4 end,
                 %2$s * sum(v.n)
          from measured v
          cross join lateral (values (v.from_chain, v.to_chain), (v.from_chain, v.to_currency), (v.from_currency, v.to_chain),
                                     (v.from_currency, v.to_currency)) k(from_code, to_code)
          cross join (values (0), (1)) l(level)
          group by 1, 2, 3, 4, 5, 6, 7
          order by 1, 2, 3, 4, 5, 6, 7
          on conflict (from_code, to_code, level, bridge, measure, band, value) do update set n = t.n + excluded.n
        $statement$, source, sign);
      create function intel_window_on_insert() returns trigger language plpgsql as $body$
      declare
        window_since timestamptz;
        window_until timestamptz;
      begin
        select since, until into window_since, window_until from intel_window for share;
        if window_since is not null then
          execute intel_window_statement('(select * from added where observed_at >= $1 and observed_at < $2) added_rows', 1)
            using window_since, window_until;
        end if;
        return null;
      end
      $body$;
      create trigger observations_into_window after insert on observations referencing new table as added
        for each statement execute function intel_window_on_insert();
      create function intel_window_move(new_since timestamptz, new_until timestamptz) returns timestamptz language plpgsql as $body$
      declare
        old_since timestamptz;
        old_until timestamptz;
        observed_range constant text := '(select * from observations where observed_at >= $1 and observed_at < $2) observed_rows';
      begin
        -- Most calls find it there already: a plain read, no lock.
        select since, until into old_since, old_until from intel_window;
        if old_until >= new_until then
          return old_until;
        end if;
        select since, until into old_since, old_until from intel_window for update skip locked;
        if not found then
          return null;
        end if;
        if old_until >= new_until then
          return old_until;
        end if;
        if old_since is null or new_since >= old_until
           or (new_until - old_until) + greatest(new_since - old_since, old_since - new_since) >= new_until - new_since then
          delete from intel_outcomes;
          delete from intel_values;
          execute intel_window_statement(observed_range, 1) using new_since, new_until;
        else
          execute intel_window_statement(observed_range, 1) using old_until, new_until;
          if new_since > old_since then
            execute intel_window_statement(observed_range, -1) using old_since, new_since;
          elsif new_since < old_since then
            execute intel_window_statement(observed_range, 1) using new_since, old_since;
          end if;
        end if;
        update intel_window set since = new_since, until = new_until;
        return new_until;
      end
      $body$;
      select intel_window_move(date_trunc('hour', now(), 'UTC') - interval '2160 hours', date_trunc('hour', now(), 'UTC'));
    `,
  },
  {
    id: 9,
    name: 'a paid swap is kept with its payment, so a retry with the same payment gets the same swap',
    // request_key: the normalised request the payment bought (chain:token pairs, atomic amount, lowercase addresses,
    // slippage in 1e-18); result: the SwapResult as it was (or will be) answered. A retry with the same authorization
    // finds both before any screening, building or settling (payForSwap.ts). Rows written before this migration have
    // neither; a retry of those is told which swap the payment bought.
    sql: `
      alter table x402_payments add column request_key text;
      alter table x402_payments add column result jsonb;
    `,
  },
  {
    id: 10,
    name: 'MPP payments: a Tempo transaction hash pays for one swap, claimed with the swap it bought',
    // hash: the Tempo transaction (lowercase), single use across replicas; it is inserted in the transaction that
    // records the swap (createMppPaymentStore.ts), so an unrecorded swap leaves its payment unclaimed. request_key and
    // result let a retry with the same credential and request get the same swap (payForMppSwap.ts).
    sql: `
      create table mpp_payments (
        hash text primary key,
        chain_id integer not null,
        payer text not null,
        amount numeric(78, 0) not null,
        currency text not null,
        recipient text not null,
        challenge_id text not null,
        challenge_expires timestamptz not null,
        swap_ref text not null,
        request_key text not null,
        result jsonb not null,
        claimed_at timestamptz not null
      );
      create index mpp_payments_swap_ref on mpp_payments (swap_ref);
    `,
  },
  {
    id: 11,
    name: 'swap lifecycle: states and their transitions, per-chain cursors, leases',
    // swap_lifecycle: one row per swap (or batch leg, `dsb_….<index>`) once a tracker has seen it move; a swap
    // without a row is still `built`. legs, sent and received are JSON with bigints as decimal strings.
    // destination_from_block: the destination block from which its delivery is still to be looked for.
    // swap_transitions: every change of state or substatus, in order, with its time and the legs known then.
    // chain_cursors: the last block a tracker processed per chain (final at its confirmation depth), with its hash
    // (a different hash there later is a reorganisation) and time (an order whose deadline is before it has expired).
    // leases: who does a piece of work (a chain's scan, a swap's following) until when, by the database's clock.
    sql: `
      create table swap_lifecycle (
        ref text primary key,
        state text not null check (state in ('built', 'pending', 'done', 'failed', 'expired')),
        substatus text check (substatus in ('completed', 'partial', 'refunded')),
        reason text,
        legs jsonb not null,
        sent jsonb,
        received jsonb,
        destination_from_block numeric(78, 0),
        updated_at timestamptz not null
      );
      create index swap_lifecycle_open on swap_lifecycle (state) where state in ('built', 'pending');
      create table swap_transitions (
        ref text not null,
        seq integer not null,
        state text not null,
        substatus text,
        reason text,
        legs jsonb not null,
        at timestamptz not null,
        primary key (ref, seq)
      );
      create table chain_cursors (
        chain text primary key,
        block numeric(78, 0) not null,
        block_hash text not null,
        block_time timestamptz not null,
        updated_at timestamptz not null
      );
      create table leases (
        name text primary key,
        holder text not null,
        expires_at timestamptz not null
      );
    `,
  },
  {
    id: 12,
    name: 'payments whose settlement is in doubt, found without reading every settled one',
    // The lifecycle reconciler (src/lifecycle/reconcilePayments.ts) lists the reserved and unsettled payments oldest
    // first every interval; settled payments, nearly all of them, stay out of the index.
    sql: `
      create index x402_payments_in_doubt on x402_payments (reserved_at) where status <> 'settled';
    `,
  },
  {
    id: 13,
    name: 'a destination log is claimed by one swap only',
    // A swap's destination leg is the log its delivery was matched to (a Transfer to the recipient, our executor's
    // event, a refund, a same-chain swap's own Swapped): two swaps, or two replicas following two swaps to one
    // recipient, must not both claim one log. The lifecycle store's update refuses the second claim (it is then not
    // recorded, and the tracker looks again).
    sql: `
      create unique index swap_lifecycle_destination_claim on swap_lifecycle (
        (legs->'destination'->>'chain'), (legs->'destination'->>'txHash'), (legs->'destination'->>'logIndex')
      ) where legs ? 'destination';
    `,
  },
  {
    id: 14,
    name: "each Across lane's last suggested fees, kept across a restart",
    // The live market writes each Across lane's reads (its query, the sizes read and Across's answers) when it reads
    // the lane, and at start takes back those read within Across's 5-minute maximum age, with their real read time
    // (src/store/createAcrossFeesStore.ts). Keyed by the API read too: another SWAPEAZI_ACROSS_API_URL reads afresh.
    sql: `
      create table across_lane_fees (
        lane text not null,
        api_url text not null,
        figures jsonb not null,
        read_at timestamptz not null,
        primary key (lane, api_url)
      );
    `,
  },
  {
    id: 15,
    name: 'relay submissions still unmined at their nonce, kept across a restart',
    // A CCTP relay or LayerZero compose retry of ours sent and not yet mined, by sender (the relayer key's lease on
    // its chain, which the CCTP relayer and the compose retrier share) and the key's nonce: what went at the nonce (its hashes and what they carried),
    // the last fees and the nonce's fee ceiling, bigints as decimal strings. Written at each send, deleted once the
    // nonce is mined, so a process stopped (or killed) mid-wait knows its submissions at start, and the next from the
    // key takes the nonce over instead of sending the same work again at another (src/store/createSubmissionStore.ts).
    sql: `
      create table relay_submissions (
        sender text not null,
        nonce integer not null,
        submission jsonb not null,
        updated_at timestamptz not null,
        primary key (sender, nonce)
      );
    `,
  },
  {
    id: 16,
    name: "a swap's quote and transaction are kept as the JSON text they were written as, in the row",
    // Both are written once, read whole (a swap's record, its lifecycle) and queried only by `->>` (the quote's
    // bridge), which json answers as jsonb does. jsonb converts each value to its binary form as it is inserted: on
    // PGlite that was about a third of a keyed swap's insert (a row of 3 to 4 KB); json only checks the text. Key
    // order is the written one again (jsonb sorts keys), so a record reads back as it was answered. A row past 2 KB
    // was compressed (pglz) before it was stored; rows now stay as they are up to a page (toast_tuple_target, the
    // most Postgres allows), and only a larger one is compressed or moved out of line, so no swap is refused for size.
    // The cost is disk: about twice the table (docs/performance.md). The type change rewrites the table once, under
    // an exclusive lock for as long as that takes; the rows already there stay compressed, new rows are kept whole.
    sql: `
      alter table swaps alter column quote type json using quote::json, alter column transaction_request type json using transaction_request::json;
      alter table swaps set (toast_tuple_target = 8160);
    `,
  },
]

/**
 * A migration's statements: split at each semicolon outside a dollar-quoted body ($tag$ … $tag$), so a function's
 * body stays whole.
 */
export function migrationStatements(sql: string): string[] {
  const dollarTag = /\$[A-Za-z_]*\$/y
  const statements: string[] = []
  let start = 0
  let openTag: string | undefined
  for (let i = 0; i < sql.length; i++) {
    if (sql[i] === '$') {
      dollarTag.lastIndex = i
      const tag = dollarTag.exec(sql)?.[0]
      if (tag !== undefined && (openTag === undefined || tag === openTag)) {
        openTag = openTag === undefined ? tag : undefined
        i += tag.length - 1
      }
    } else if (sql[i] === ';' && openTag === undefined) {
      statements.push(sql.slice(start, i))
      start = i + 1
    }
  }
  statements.push(sql.slice(start))
  return statements.map((s) => s.trim()).filter((s) => s.length > 0)
}

/** The advisory lock replicas take turns on to migrate. */
const MIGRATION_LOCK = 7402402
/** How long a start waits for another process's migration before it says so and stops. */
export const MIGRATION_LOCK_WAIT_MS = 30_000

export type MigrateOptions = { lockWaitMs?: number }

/**
 * Brings the schema up to date; replicas starting together take turns on an advisory lock. A lock another session
 * holds past `lockWaitMs` (a replica stuck mid-migration, a session that never lets go) stops the start with one line
 * naming that session, never a silent wait without end.
 */
export async function migrate(sql: Sql, options: MigrateOptions = {}): Promise<number[]> {
  const waitMs = options.lockWaitMs ?? MIGRATION_LOCK_WAIT_MS
  return sql.transaction(async (tx) => {
    const until = Date.now() + waitMs
    for (;;) {
      const [row] = await tx.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1::bigint) as ok', [MIGRATION_LOCK])
      if (row?.ok === true) break
      if (Date.now() >= until) {
        const holders = await tx.query<{ pid: number }>(
          "select pid from pg_locks where locktype = 'advisory' and classid = 0 and objid = $1 and granted",
          [MIGRATION_LOCK],
        )
        const who = holders.length > 0 ? `session pid ${holders.map((h) => h.pid).join(', ')}` : 'another session'
        throw new Error(
          `${sql.describe}: ${who} has held the schema migration lock for more than ${waitMs / 1000} s (another replica migrating, or a session that never let go): wait for it, end that session (select pg_terminate_backend(pid)), or check that DATABASE_URL names the database you mean`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    await tx.query(
      `create table if not exists schema_migrations (id integer primary key, name text not null, applied_at timestamptz not null default now())`,
    )
    const done = new Set((await tx.query<{ id: number }>('select id from schema_migrations')).map((row) => row.id))
    const applied: number[] = []
    for (const migration of MIGRATIONS) {
      if (done.has(migration.id)) continue
      for (const statement of migrationStatements(migration.sql)) await tx.query(statement)
      await tx.query('insert into schema_migrations (id, name) values ($1, $2)', [migration.id, migration.name])
      applied.push(migration.id)
    }
    return applied
  })
}
