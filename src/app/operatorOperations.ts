import type { Readable } from 'node:stream'
import { createInterface } from 'node:readline'
import { verifyApiKey } from '../auth/apiKey.ts'
import { importObservations } from '../intel/importObservations.ts'
import { parseUsagePeriod, usagePeriod } from '../intel/usagePeriod.ts'
import { INTEL_KEY_SUBJECT_PREFIX, intelKeySubject } from '../intel/usageSubjects.ts'
import type { IssuedApiKey, KeyTier } from '../schemas/keys.ts'
import type { ImportedObservations, KeyUsage, KeyUsageRequest, RevokedKey } from '../schemas/operator.ts'
import { issueOperatorKey } from '../service/issueApiKey.ts'
import type { ServerDeps } from './createServer.ts'

/**
 * What `swapeazi keys` and `swapeazi intel` do to a store: run here on a store this process opened, or by the
 * process that holds a PGlite data directory, on its own live store, through its operator endpoint
 * (startOperatorEndpoint.ts), so that its in-memory state (the key denylist) sees the change at once.
 */
export type OperatorOperations = {
  issueKey(tier: KeyTier): Promise<IssuedApiKey>
  /** `key`: a whole se_ key or its key_ id. */
  revokeKey(key: string): Promise<RevokedKey>
  keyUsage(request: KeyUsageRequest): Promise<KeyUsage>
  /** `input`: a JSONL file's bytes (docs/operations.md#the-import-format). */
  importObservations(input: Readable): Promise<ImportedObservations>
}

/** A refusal of an operator command: its message is the whole answer (exit 1, `swapeazi: <message>`). */
export class OperatorCommandError extends Error {
  override name = 'OperatorCommandError'
}

export type OperatorOperationsDeps = Pick<ServerDeps, 'store' | 'keySecret' | 'clock' | 'catalogue' | 'log'>

/** The operator commands over `deps`, in this process. */
export function operatorOperations(deps: OperatorOperationsDeps): OperatorOperations {
  return {
    async issueKey(tier) {
      const issued = await issueOperatorKey(deps, tier)
      deps.log.info({ event: 'key_issued', key_id: issued.id, tier, issued_by: 'operator' }, 'key_issued')
      return issued
    },
    async revokeKey(key) {
      const id = keyIdOf(deps.keySecret, key, 'revoke')
      const isNew = await deps.store.keys.revoke(id, new Date(deps.clock()))
      const wasIssued = await deps.store.keys.isIssued(id)
      deps.log.info({ event: 'key_revoked', key_id: id, already_revoked: !isNew, was_issued: wasIssued }, 'key_revoked')
      const note = `this store never issued ${id}: check the id for a typo (it is on the denylist all the same, so a key signed with it elsewhere is refused too)`
      return { id, revoked: true, alreadyRevoked: !isNew, wasIssued, ...(wasIssued ? {} : { note }) }
    },
    async keyUsage(request) {
      const month = request.month === undefined ? usagePeriod(deps.clock()).period : parseUsagePeriod(request.month)
      if (month === undefined)
        throw new OperatorCommandError(`--month takes a calendar month as YYYY-MM, such as 2026-11; got "${request.month}"`)
      const id = request.key === undefined ? undefined : keyIdOf(deps.keySecret, request.key, 'name')
      const rows = await deps.store.intel.usage(month, id === undefined ? INTEL_KEY_SUBJECT_PREFIX : intelKeySubject(id))
      const keys = rows
        .filter((row) => id === undefined || row.subject === intelKeySubject(id))
        .map((row) => ({ id: row.subject.slice(INTEL_KEY_SUBJECT_PREFIX.length), intelligenceCalls: row.calls }))
      if (id !== undefined && keys.length === 0) keys.push({ id, intelligenceCalls: 0 })
      return { month, keys }
    },
    async importObservations(input) {
      const result = await importObservations(deps, linesOf(input))
      deps.log.info({ event: 'observations_imported', lines: result.lines, imported: result.inserted }, 'observations_imported')
      return { lines: result.lines, imported: result.inserted, skipped: result.skipped }
    },
  }
}

/**
 * The lines of `input`, read from when the first is asked for: a readline interface reads as soon as it is made,
 * and drops the lines that come before anything iterates it.
 */
async function* linesOf(input: Readable): AsyncGenerator<string> {
  yield* createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
}

/** A key id from a full se_ key (verified under this service's secret) or a key_ id; `verb` words the error. */
function keyIdOf(secret: Uint8Array, target: string, verb: string): string {
  let id = target
  if (target.startsWith('se_')) {
    const verified = verifyApiKey(secret, target)
    if (!verified.ok) throw new OperatorCommandError(`that key was not issued under this service's key secret; ${verb} it by its key_ id`)
    id = verified.claims.id
  }
  if (!/^key_[0-9a-f]{24}$/.test(id)) throw new OperatorCommandError('a key id looks like key_ followed by 24 hex characters')
  return id
}
