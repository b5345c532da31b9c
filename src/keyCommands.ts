import { parseArgs } from 'node:util'
import { buildAppDeps } from './appDeps.ts'
import { KEY_TIERS, type KeyTier, verifyApiKey } from './auth/apiKey.ts'
import type { Config } from './config.ts'
import { issueOperatorKey } from './service/issueApiKey.ts'

export const KEYS_USAGE = `Usage:
  swapeazi keys issue [--tier free|pro]
      Issues a key (default tier pro) in the configured store and prints {key, id, tier, issuedAt}. The key is
      shown once; only its id is kept.
  swapeazi keys revoke KEY_OR_ID
      Adds the key (a full se_ key, or its key_ id) to the denylist; every replica refuses it from then on.`

/** `swapeazi keys issue|revoke`: operator commands over the configured store and key secret. */
export async function runKeyCommand(config: Config, argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv
  const deps = await buildAppDeps({ ...config, logLevel: 'silent' })
  try {
    if (command === 'issue') {
      const { values } = parseArgs({ args: [...rest], options: { tier: { type: 'string', default: 'pro' } }, strict: true })
      const tier = values.tier as KeyTier
      if (!KEY_TIERS.includes(tier)) throw new Error(`--tier must be one of ${KEY_TIERS.join(', ')}`)
      process.stdout.write(`${JSON.stringify(await issueOperatorKey(deps, tier))}\n`)
      return
    }
    if (command === 'revoke') {
      const [target] = rest
      if (target === undefined || rest.length !== 1) throw new Error(`name one key or key id to revoke\n\n${KEYS_USAGE}`)
      let id = target
      if (target.startsWith('se_')) {
        const verified = verifyApiKey(deps.keySecret, target)
        if (!verified.ok) throw new Error('that key was not issued under this service\'s key secret; revoke it by its key_ id')
        id = verified.claims.id
      }
      if (!/^key_[0-9a-f]{24}$/.test(id)) throw new Error('a key id looks like key_ followed by 24 hex characters')
      const isNew = await deps.store.keys.revoke(id, new Date(deps.clock()))
      process.stdout.write(`${JSON.stringify({ id, revoked: true, alreadyRevoked: !isNew })}\n`)
      return
    }
    throw new Error(`unknown keys command "${command ?? ''}"\n\n${KEYS_USAGE}`)
  } finally {
    await deps.store.sql.close()
  }
}
