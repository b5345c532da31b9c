import { parseArgs } from 'node:util'
import type { Writable } from 'node:stream'
import { KEY_TIERS, type KeyTier } from '../auth/apiKey.ts'
import type { Config } from '../config.ts'
import { withOperatorOperations } from './withOperatorOperations.ts'

export const KEYS_USAGE = `Usage:
  swapeazi keys issue [--tier free|pro]
      Issues a key (default tier pro) in the configured store and prints {key, id, tier, issuedAt, notice}. The key is
      shown once; only its id is kept.
  swapeazi keys revoke KEY_OR_ID
      Adds the key (a full se_ key, or its key_ id) to the denylist; every replica refuses it from then on.
  swapeazi keys usage [KEY_OR_ID] [--month YYYY-MM]
      Prints the metered pro corridor-intelligence calls of a calendar month (UTC; default this month): every key
      with calls, or the one key named, as {month, keys: [{id, intelligenceCalls}]}.`

/** `swapeazi keys issue|revoke|usage`: operator commands over the configured store (through its owner, see withOperatorOperations). */
export async function runKeyCommand(config: Config, argv: readonly string[], out: Writable): Promise<void> {
  const [command, ...rest] = argv
  const print = (result: unknown): void => {
    out.write(`${JSON.stringify(result)}\n`)
  }
  if (command === 'issue') {
    const { values } = parseArgs({ args: [...rest], options: { tier: { type: 'string', default: 'pro' } }, strict: true })
    const tier = values.tier as KeyTier
    if (!KEY_TIERS.includes(tier)) throw new Error(`--tier must be one of ${KEY_TIERS.join(', ')}`)
    print(await withOperatorOperations(config, (operations) => operations.issueKey(tier)))
    return
  }
  if (command === 'revoke') {
    const [target] = rest
    if (target === undefined || rest.length !== 1) throw new Error(`name one key or key id to revoke\n\n${KEYS_USAGE}`)
    print(await withOperatorOperations(config, (operations) => operations.revokeKey(target)))
    return
  }
  if (command === 'usage') {
    const { values, positionals } = parseArgs({
      args: [...rest],
      options: { month: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    })
    if (positionals.length > 1) throw new Error(`name at most one key or key id\n\n${KEYS_USAGE}`)
    const [key] = positionals
    const request = { ...(values.month === undefined ? {} : { month: values.month }), ...(key === undefined ? {} : { key }) }
    print(await withOperatorOperations(config, (operations) => operations.keyUsage(request)))
    return
  }
  throw new Error(`unknown keys command "${command ?? ''}"\n\n${KEYS_USAGE}`)
}
