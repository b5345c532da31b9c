import { parseArgs } from 'node:util'
import type { Writable } from 'node:stream'
import { buildAppDeps } from '../app/buildAppDeps.ts'
import { KEY_TIERS, type KeyTier, verifyApiKey } from '../auth/apiKey.ts'
import type { Config } from '../config.ts'
import { issueOperatorKey } from '../service/issueApiKey.ts'
import { parseUsagePeriod, usagePeriod } from '../intel/usagePeriod.ts'
import { INTEL_KEY_SUBJECT_PREFIX, intelKeySubject } from '../intel/usageSubjects.ts'

export const KEYS_USAGE = `Usage:
  swapeazi keys issue [--tier free|pro]
      Issues a key (default tier pro) in the configured store and prints {key, id, tier, issuedAt}. The key is
      shown once; only its id is kept.
  swapeazi keys revoke KEY_OR_ID
      Adds the key (a full se_ key, or its key_ id) to the denylist; every replica refuses it from then on.
  swapeazi keys usage [KEY_OR_ID] [--month YYYY-MM]
      Prints the metered pro corridor-intelligence calls of a calendar month (UTC; default this month): every key
      with calls, or the one key named, as {month, keys: [{id, intelligenceCalls}]}.`

/** A key id from a full se_ key (verified under this service's secret) or a key_ id; `verb` words the error. */
function keyIdOf(secret: Uint8Array, target: string, verb: string): string {
  let id = target
  if (target.startsWith('se_')) {
    const verified = verifyApiKey(secret, target)
    if (!verified.ok) throw new Error(`that key was not issued under this service's key secret; ${verb} it by its key_ id`)
    id = verified.claims.id
  }
  if (!/^key_[0-9a-f]{24}$/.test(id)) throw new Error('a key id looks like key_ followed by 24 hex characters')
  return id
}

/** `swapeazi keys issue|revoke|usage`: operator commands over the configured store and key secret. */
export async function runKeyCommand(config: Config, argv: readonly string[], out: Writable): Promise<void> {
  const [command, ...rest] = argv
  const deps = await buildAppDeps({ ...config, logLevel: 'silent' })
  try {
    if (command === 'issue') {
      const { values } = parseArgs({ args: [...rest], options: { tier: { type: 'string', default: 'pro' } }, strict: true })
      const tier = values.tier as KeyTier
      if (!KEY_TIERS.includes(tier)) throw new Error(`--tier must be one of ${KEY_TIERS.join(', ')}`)
      out.write(`${JSON.stringify(await issueOperatorKey(deps, tier))}\n`)
      return
    }
    if (command === 'revoke') {
      const [target] = rest
      if (target === undefined || rest.length !== 1) throw new Error(`name one key or key id to revoke\n\n${KEYS_USAGE}`)
      const id = keyIdOf(deps.keySecret, target, 'revoke')
      const isNew = await deps.store.keys.revoke(id, new Date(deps.clock()))
      out.write(`${JSON.stringify({ id, revoked: true, alreadyRevoked: !isNew })}\n`)
      return
    }
    if (command === 'usage') {
      const { values, positionals } = parseArgs({
        args: [...rest],
        options: { month: { type: 'string' } },
        allowPositionals: true,
        strict: true,
      })
      const month = values.month === undefined ? usagePeriod(deps.clock()).period : parseUsagePeriod(values.month)
      if (month === undefined) throw new Error(`--month takes a calendar month as YYYY-MM, such as 2026-11; got "${values.month}"`)
      if (positionals.length > 1) throw new Error(`name at most one key or key id\n\n${KEYS_USAGE}`)
      const [target] = positionals
      const id = target === undefined ? undefined : keyIdOf(deps.keySecret, target, 'name')
      const rows = await deps.store.intel.usage(month, id === undefined ? INTEL_KEY_SUBJECT_PREFIX : intelKeySubject(id))
      const keys = rows
        .filter((row) => id === undefined || row.subject === intelKeySubject(id))
        .map((row) => ({ id: row.subject.slice(INTEL_KEY_SUBJECT_PREFIX.length), intelligenceCalls: row.calls }))
      if (id !== undefined && keys.length === 0) keys.push({ id, intelligenceCalls: 0 })
      out.write(`${JSON.stringify({ month, keys })}\n`)
      return
    }
    throw new Error(`unknown keys command "${command ?? ''}"\n\n${KEYS_USAGE}`)
  } finally {
    await deps.store.sql.close()
  }
}
