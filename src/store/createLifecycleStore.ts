import type { SwapStatus } from '../schemas/swap.ts'
import { isoTimestamp, type Sql } from './sql.ts'
import { type StoredSwap, type SwapChannel, swapCorridorOfRow } from './swapRows.ts'
import { createSubmissionStore, type SubmissionStore } from './createSubmissionStore.ts'

/**
 * Where a swap is in its life (DESIGN 7.29, issue 18): `built` (recorded, nothing seen on chain), `pending` (the
 * source transaction is mined and final), then `done`, `failed` (the source reverted) or `expired` (its deadline
 * passed with no `Swapped` event).
 */
export type LifecycleState = 'built' | 'pending' | 'done' | 'failed' | 'expired'
/** How a `done` swap ended: the wanted token delivered, the bridged token instead (the fallback), or refunded. */
export type LifecycleSubstatus = 'completed' | 'partial' | 'refunded'
export type LegName = 'source' | 'bridge' | 'destination'

/** One leg's transaction: the log that proves it (its block hash, so a reorganisation that moved it shows). */
export type LegPosition = { chain: string; txHash: string; blockNumber: bigint; blockHash: string; logIndex: number }
export type LifecycleLegs = Partial<Record<LegName, LegPosition>>

/** An amount as the chain moved it: the token's address on `chain`, atomic units. */
export type LifecycleAmount = { chain: string; token: string; amount: bigint }

export type LifecycleTransition = {
  state: LifecycleState
  substatus: LifecycleSubstatus | null
  reason: string | null
  /** The legs known when the transition was made. */
  legs: LifecycleLegs
  /** ISO 8601. */
  at: string
}

/** A swap's (or a batch leg's) lifecycle as the store keeps it; a swap no tracker has moved reads as `built`. */
export type LifecycleRecord = {
  /** `swp_…`, or `dsb_….<index>` for a leg of a batch. */
  ref: string
  /** The batch's `dsb_` reference and the leg's index in it (the recipient's position); null for a swap. */
  disbursementRef: string | null
  legIndex: number | null
  state: LifecycleState
  substatus: LifecycleSubstatus | null
  reason: string | null
  legs: LifecycleLegs
  /** What the source transaction pulled from the sender (the router's amountIn), once seen. */
  sent: LifecycleAmount | null
  /** What the recipient got (the destination token, or the bridged token on a fallback), once seen. */
  received: LifecycleAmount | null
  /** The destination block from which the delivery is still to be looked for (tracker bookkeeping). */
  destinationFromBlock: bigint | null
  /** Every transition, oldest first; the first is `built` at the swap's creation. */
  transitions: LifecycleTransition[]
  /** ISO 8601: the last change. */
  updatedAt: string
}

/**
 * A change to a lifecycle. `legs` names the legs to set (null removes one, as after a reorganisation); fields left
 * out keep their value. A change of state or substatus is kept as a transition at `at`.
 */
export type LifecycleUpdate = {
  state: LifecycleState
  substatus?: LifecycleSubstatus | null
  reason?: string | null
  legs?: Partial<Record<LegName, LegPosition | null>>
  sent?: LifecycleAmount | null
  received?: LifecycleAmount | null
  destinationFromBlock?: bigint | null
  at: Date
}

export type LifecycleUpdateReturnType =
  /** The swap is not recorded. */
  | undefined
  /** updated false: its state was not one of `from`, so nothing changed (another replica moved it first). */
  | { updated: boolean; record: LifecycleRecord }

/** A recorded swap with its lifecycle: what a tracker needs to follow it. */
export type TrackedSwap = { swap: StoredSwap; lifecycle: LifecycleRecord }

/** The last block a tracker processed on a chain. */
export type ChainCursor = { block: bigint; blockHash: string; blockTime: Date }

/**
 * Named leases: one holder at a time does the work a name stands for (a chain's scan, a swap's following) until the
 * lease expires; a holder that stops renewing (a dead replica) loses it to the next `tryAcquire`. Times are the
 * database's, so replicas with skewed clocks agree.
 */
export type LeaseStore = {
  /** True when `holder` now holds `name` for `ttlMs`: it was free, expired, or already `holder`'s (then extended). */
  tryAcquire(name: string, holder: string, ttlMs: number): Promise<boolean>
  /** Extends a lease `holder` still holds; false when it expired or another holds it (stop the work then). */
  renew(name: string, holder: string, ttlMs: number): Promise<boolean>
  /** Gives the lease up, if `holder` holds it. */
  release(name: string, holder: string): Promise<void>
}

/** What the tracker and the status reader need from the database. */
export type LifecycleStore = {
  /** The lifecycle of a swap or batch leg; undefined when no swap has that reference. */
  get(ref: string): Promise<LifecycleRecord | undefined>
  /** Every tracked leg of a batch (`dsb_…`), by index. */
  getBatchLegs(disbursementRef: string): Promise<LifecycleRecord[]>
  /** A swap or batch leg with its lifecycle. */
  getTracked(ref: string): Promise<TrackedSwap | undefined>
  /**
   * Swaps still `built` or `pending` whose source chain is one of `chains`, oldest first, after `afterRef`; and those
   * `failed` by a revert that intelligence has not completed yet (their order may still run until its deadline).
   */
  listOpen(parameters: { chains: readonly string[]; limit: number; afterRef?: string }): Promise<TrackedSwap[]>
  /**
   * Moves a lifecycle, atomically, if its state is one of `from` (compare and set: of two replicas making the same
   * move, one does it).
   */
  update(ref: string, update: LifecycleUpdate, from: readonly LifecycleState[]): Promise<LifecycleUpdateReturnType>
  /**
   * The swap whose destination leg is the log at (chain, txHash, logIndex), if any: a plain delivery (a Transfer to
   * the recipient) is claimed by one swap only. Served by migration 13's unique index, which also refuses a second
   * claim in `update` (answered as not updated) when two replicas race past this read.
   */
  destinationClaimedBy(chain: string, txHash: string, logIndex: number): Promise<string | undefined>
  getCursor(chain: string): Promise<ChainCursor | undefined>
  /** Sets a chain's cursor; with `expectedBlock`, only if the cursor is still there (none: only if there is none). */
  setCursor(chain: string, cursor: ChainCursor, expectedBlock?: bigint | null): Promise<boolean>
  leases: LeaseStore
  /** Relay submissions still unmined at their nonce, kept across a restart (migration 15). */
  submissions: SubmissionStore
}

const LEG_NAMES: readonly LegName[] = ['source', 'bridge', 'destination']
const BATCH_LEG = /^(dsb_[0-9A-Z]{26})\.(\d+)$/

/** The lifecycle store over a migrated connection. */
export function createLifecycleStore(sql: Sql): LifecycleStore {
  const readTransitions = async (q: Pick<Sql, 'query'>, refs: readonly string[]): Promise<Map<string, LifecycleTransition[]>> => {
    const byRef = new Map<string, LifecycleTransition[]>()
    if (refs.length === 0) return byRef
    const rows = await q.query<Record<string, unknown>>(
      `select ref, state, substatus, reason, legs, at from swap_transitions where ref = any($1) order by ref, seq`,
      [refs],
    )
    for (const row of rows) {
      const ref = String(row['ref'])
      const list = byRef.get(ref) ?? []
      list.push({
        state: row['state'] as LifecycleState,
        substatus: (row['substatus'] ?? null) as LifecycleSubstatus | null,
        reason: row['reason'] === null ? null : String(row['reason']),
        legs: legsOfJson(row['legs']),
        at: isoTimestamp(row['at']),
      })
      byRef.set(ref, list)
    }
    return byRef
  }

  const readTracked = async (q: Pick<Sql, 'query'>, where: string, params: unknown[]): Promise<TrackedSwap[]> => {
    const rows = await q.query<Record<string, unknown>>(
      `select s.*, l.ref as l_ref, l.state as l_state, l.substatus as l_substatus, l.reason as l_reason, l.legs as l_legs,
              l.sent as l_sent, l.received as l_received, l.destination_from_block::text as l_destination_from_block,
              l.updated_at as l_updated_at
       from swaps s left join swap_lifecycle l on l.ref = s.ref
       ${where}`,
      params,
    )
    const transitions = await readTransitions(
      q,
      rows.filter((row) => row['l_ref'] !== null && row['l_ref'] !== undefined).map((row) => String(row['ref'])),
    )
    return rows.map((row) => {
      const swap = storedSwapOfRow(row)
      return { swap, lifecycle: lifecycleOfRow(row, swap, transitions.get(swap.ref) ?? []) }
    })
  }

  const getTracked = async (ref: string): Promise<TrackedSwap | undefined> => {
    const [tracked] = await readTracked(sql, 'where s.ref = $1', [ref])
    return tracked
  }

  /** update's move, in one transaction; throws the unique violation when the destination log is already claimed. */
  const moveLifecycle = async (
    ref: string,
    update: LifecycleUpdate,
    from: readonly LifecycleState[],
  ): Promise<LifecycleUpdateReturnType> => {
    return sql.transaction(async (tx) => {
      await tx.query(
        `insert into swap_lifecycle (ref, state, legs, updated_at)
         select ref, 'built', '{}'::jsonb, created_at from swaps where ref = $1
         on conflict (ref) do nothing`,
        [ref],
      )
      const [current] = await tx.query<Record<string, unknown>>(
        `select state, substatus, reason, legs, sent, received, destination_from_block::text as destination_from_block
         from swap_lifecycle where ref = $1 for update`,
        [ref],
      )
      if (current === undefined) return undefined
      const state = current['state'] as LifecycleState
      if (!from.includes(state)) {
        const tracked = await readTracked(tx, 'where s.ref = $1', [ref])
        const record = tracked[0]?.lifecycle
        return record === undefined ? undefined : { updated: false, record }
      }
      const legs = legsOfJson(current['legs'])
      for (const name of LEG_NAMES) {
        const leg = update.legs?.[name]
        if (leg === null) delete legs[name]
        else if (leg !== undefined) legs[name] = leg
      }
      const substatus = update.substatus === undefined ? ((current['substatus'] ?? null) as LifecycleSubstatus | null) : update.substatus
      const reason = update.reason === undefined ? (current['reason'] === null ? null : String(current['reason'])) : update.reason
      const keep = (key: 'sent' | 'received'): unknown =>
        update[key] === undefined ? current[key] : update[key] === null ? null : amountToJson(update[key])
      const destinationFromBlock =
        update.destinationFromBlock === undefined
          ? current['destination_from_block']
          : update.destinationFromBlock === null
            ? null
            : update.destinationFromBlock.toString()
      await tx.query(
        `update swap_lifecycle set state = $2, substatus = $3, reason = $4, legs = $5, sent = $6, received = $7,
           destination_from_block = $8, updated_at = $9
         where ref = $1`,
        [
          ref,
          update.state,
          substatus,
          reason,
          JSON.stringify(legsToJson(legs)),
          jsonOrNull(keep('sent')),
          jsonOrNull(keep('received')),
          destinationFromBlock,
          update.at.toISOString(),
        ],
      )
      // An expired swap never ran: the swap's own status says so (not_found), which also takes it out of the swaps
      // still `built` that listOpen reads; the other outcomes are set there by intelligence (completeSwap).
      if (update.state === 'expired' && state !== 'expired')
        await tx.query(`update swaps set status = 'not_found' where ref = $1 and status = 'built'`, [ref])
      if (update.state !== state || substatus !== (current['substatus'] ?? null))
        await tx.query(
          `insert into swap_transitions (ref, seq, state, substatus, reason, legs, at)
           select $1, coalesce(max(seq), 0) + 1, $2, $3, $4, $5, $6 from swap_transitions where ref = $1`,
          [ref, update.state, substatus, reason, JSON.stringify(legsToJson(legs)), update.at.toISOString()],
        )
      const tracked = await readTracked(tx, 'where s.ref = $1', [ref])
      const record = tracked[0]?.lifecycle
      if (record === undefined) throw new Error(`swap ${ref} vanished while its lifecycle was updated`)
      return { updated: true, record }
    })
  }

  return {
    async get(ref) {
      return (await getTracked(ref))?.lifecycle
    },
    getTracked,
    async getBatchLegs(disbursementRef) {
      if (!/^dsb_[0-9A-Z]{26}$/.test(disbursementRef)) return []
      const tracked = await readTracked(sql, `where s.ref like $1`, [`${disbursementRef}.%`])
      return tracked.map((entry) => entry.lifecycle).sort((a, b) => (a.legIndex ?? 0) - (b.legIndex ?? 0))
    },
    async listOpen({ chains, limit, afterRef }) {
      // The swaps no tracker moved yet (swaps.status is `built` until intelligence completes a swap or it expires; no
      // index on it, see createIntelStore), and those a tracker holds open (the partial index), whatever swaps.status
      // says: a swap failed by a reverted transaction is open again when the same order is sent again and runs. A
      // failed one stays listed while swaps.status is built: its failure is final, and observed, only at its deadline.
      return readTracked(
        sql,
        `where s.ref in (select ref from swaps where status = 'built' and from_chain = any($1) and ref > $2
                         union
                         select ref from swap_lifecycle where state in ('built', 'pending') and ref > $2)
           and s.from_chain = any($1) and (l.state is null or l.state in ('built', 'pending', 'failed'))
         order by s.ref limit $3`,
        [chains, afterRef ?? '', limit],
      )
    },
    async update(ref, update, from) {
      try {
        return await moveLifecycle(ref, update, from)
      } catch (error) {
        // Another swap claimed this destination log first (migration 13's unique index): this claim is not recorded.
        if (!isDestinationClaimTaken(error)) throw error
        const record = (await readTracked(sql, 'where s.ref = $1', [ref]))[0]?.lifecycle
        return record === undefined ? undefined : { updated: false, record }
      }
    },
    async destinationClaimedBy(chain, txHash, logIndex) {
      const [row] = await sql.query<{ ref: string }>(
        `select ref from swap_lifecycle
         where legs ? 'destination' and legs->'destination'->>'chain' = $1 and legs->'destination'->>'txHash' = $2
           and legs->'destination'->>'logIndex' = $3::text
         limit 1`,
        [chain, txHash, logIndex],
      )
      return row?.ref
    },
    async getCursor(chain) {
      const [row] = await sql.query<Record<string, unknown>>(
        `select block::text as block, block_hash, block_time from chain_cursors where chain = $1`,
        [chain],
      )
      if (row === undefined) return undefined
      return {
        block: BigInt(String(row['block'])),
        blockHash: String(row['block_hash']),
        blockTime: new Date(isoTimestamp(row['block_time'])),
      }
    },
    async setCursor(chain, cursor, expectedBlock) {
      const values = [chain, cursor.block.toString(), cursor.blockHash, cursor.blockTime.toISOString()]
      if (expectedBlock === undefined) {
        await sql.query(
          `insert into chain_cursors (chain, block, block_hash, block_time, updated_at) values ($1, $2, $3, $4, now())
           on conflict (chain) do update set block = excluded.block, block_hash = excluded.block_hash,
             block_time = excluded.block_time, updated_at = excluded.updated_at`,
          values,
        )
        return true
      }
      if (expectedBlock === null) {
        const rows = await sql.query(
          `insert into chain_cursors (chain, block, block_hash, block_time, updated_at) values ($1, $2, $3, $4, now())
           on conflict (chain) do nothing returning chain`,
          values,
        )
        return rows.length === 1
      }
      const rows = await sql.query(
        `update chain_cursors set block = $2, block_hash = $3, block_time = $4, updated_at = now()
         where chain = $1 and block = $5 returning chain`,
        [...values, expectedBlock.toString()],
      )
      return rows.length === 1
    },
    leases: createLeaseStore(sql),
    submissions: createSubmissionStore(sql),
  }
}

/** Leases by the database's clock; each call is one statement, so two replicas racing for a name get one winner. */
function createLeaseStore(sql: Sql): LeaseStore {
  return {
    async tryAcquire(name, holder, ttlMs) {
      // On a conflict PostgreSQL locks the existing row and re-checks the condition on its latest version, so of two
      // concurrent takers of an expired lease exactly one updates it.
      const rows = await sql.query(
        `insert into leases (name, holder, expires_at) values ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
         on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
         where leases.holder = excluded.holder or leases.expires_at <= clock_timestamp()
         returning holder`,
        [name, holder, Math.max(1, Math.ceil(ttlMs))],
      )
      return rows.length === 1
    },
    async renew(name, holder, ttlMs) {
      const rows = await sql.query(
        `update leases set expires_at = clock_timestamp() + $3 * interval '1 millisecond'
         where name = $1 and holder = $2 and expires_at > clock_timestamp() returning holder`,
        [name, holder, Math.max(1, Math.ceil(ttlMs))],
      )
      return rows.length === 1
    },
    async release(name, holder) {
      await sql.query(`delete from leases where name = $1 and holder = $2`, [name, holder])
    },
  }
}

function storedSwapOfRow(row: Record<string, unknown>): StoredSwap {
  return {
    ...swapCorridorOfRow(row),
    channel: row['channel'] as SwapChannel,
    status: row['status'] as SwapStatus,
    toAmount: String(row['to_amount']),
    toAmountMin: String(row['to_amount_min']),
    fromAddress: String(row['from_address']),
    toAddress: String(row['to_address']),
    quote: row['quote'],
    transactionRequest: row['transaction_request'],
    payment: row['payer'] === null ? null : { payer: String(row['payer']), nonce: String(row['payment_nonce']) },
    keyId: row['key_id'] === null || row['key_id'] === undefined ? null : String(row['key_id']),
  }
}

function lifecycleOfRow(row: Record<string, unknown>, swap: StoredSwap, stored: LifecycleTransition[]): LifecycleRecord {
  const batch = BATCH_LEG.exec(swap.ref)
  const built: LifecycleTransition = { state: 'built', substatus: null, reason: null, legs: {}, at: swap.createdAt }
  const hasRow = row['l_ref'] !== null && row['l_ref'] !== undefined
  const fromBlock = row['l_destination_from_block']
  return {
    ref: swap.ref,
    disbursementRef: batch?.[1] ?? null,
    legIndex: batch?.[2] === undefined ? null : Number(batch[2]),
    state: hasRow ? (row['l_state'] as LifecycleState) : 'built',
    substatus: hasRow ? ((row['l_substatus'] ?? null) as LifecycleSubstatus | null) : null,
    reason: hasRow && row['l_reason'] !== null ? String(row['l_reason']) : null,
    legs: hasRow ? legsOfJson(row['l_legs']) : {},
    sent: hasRow ? amountOfJson(row['l_sent']) : null,
    received: hasRow ? amountOfJson(row['l_received']) : null,
    destinationFromBlock: fromBlock === null || fromBlock === undefined ? null : BigInt(String(fromBlock)),
    transitions: [built, ...stored],
    updatedAt: hasRow ? isoTimestamp(row['l_updated_at']) : swap.createdAt,
  }
}

type JsonLeg = { chain: string; txHash: string; blockNumber: string; blockHash: string; logIndex: number }

function legsToJson(legs: LifecycleLegs): Partial<Record<LegName, JsonLeg>> {
  const json: Partial<Record<LegName, JsonLeg>> = {}
  for (const name of LEG_NAMES) {
    const leg = legs[name]
    if (leg !== undefined) json[name] = { ...leg, blockNumber: leg.blockNumber.toString() }
  }
  return json
}

function legsOfJson(value: unknown): LifecycleLegs {
  const json = (typeof value === 'string' ? JSON.parse(value) : (value ?? {})) as Partial<Record<LegName, JsonLeg>>
  const legs: LifecycleLegs = {}
  for (const name of LEG_NAMES) {
    const leg = json[name]
    if (leg !== undefined) legs[name] = { ...leg, blockNumber: BigInt(leg.blockNumber) }
  }
  return legs
}

function amountToJson(amount: LifecycleAmount): { chain: string; token: string; amount: string } {
  return { chain: amount.chain, token: amount.token, amount: amount.amount.toString() }
}

function amountOfJson(value: unknown): LifecycleAmount | null {
  if (value === null || value === undefined) return null
  const json = (typeof value === 'string' ? JSON.parse(value) : value) as { chain: string; token: string; amount: string }
  return { chain: json.chain, token: json.token, amount: BigInt(json.amount) }
}

/** The error of a second claim on one destination log (migration 13's swap_lifecycle_destination_claim). */
function isDestinationClaimTaken(error: unknown): boolean {
  const { code, constraint, message } = error as { code?: unknown; constraint?: unknown; message?: unknown }
  if (code !== '23505') return false
  return constraint === 'swap_lifecycle_destination_claim' || String(message).includes('swap_lifecycle_destination_claim')
}

function jsonOrNull(value: unknown): string | null {
  if (value === null || value === undefined) return null
  return typeof value === 'string' ? value : JSON.stringify(value)
}
