import { type KeyTier, newKeyId, signApiKey } from '../auth/apiKey.ts'
import { hashClientIp } from '../auth/clientIpHash.ts'
import type { IssuedApiKey } from '../schemas/keys.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

/** DESIGN 7.14 and spec 8: self-serve keys per IP per rolling 24 hours. */
export const SELF_SERVE_KEYS_PER_IP = 3
export const SELF_SERVE_WINDOW_MS = 24 * 60 * 60 * 1000

const NOTICE =
  'Store this key now: it is shown once and SwapEazi keeps no copy. Send it as x-swapeazi-key on /api/v1/* (Authorization: Bearer for pro intelligence).'

function issued(deps: Pick<ServiceDeps, 'keySecret'>, id: string, tier: KeyTier, issuedAt: Date): IssuedApiKey {
  const key = signApiKey(deps.keySecret, { v: 1, id, tier, iat: Math.floor(issuedAt.getTime() / 1000) })
  return { key, id, tier, issuedAt: issuedAt.toISOString(), notice: NOTICE }
}

/** The self-serve issuance limit as an IETF RateLimit policy: its 429 names it. */
export const KEY_ISSUANCE_POLICY = 'key-issuance'

/** Issues a free key to a caller at most 3 times per IP per rolling 24 hours; then 429 with the wait in seconds. */
export async function issueSelfServeKey(
  deps: Pick<ServiceDeps, 'keySecret' | 'store' | 'clock' | 'log'>,
  ip: string,
): Promise<IssuedApiKey> {
  const id = newKeyId()
  const issuedAt = new Date(deps.clock())
  const outcome = await deps.store.keys.issueSelfServe(
    { id, tier: 'free', issuedAt, issuedBy: 'self_serve', ipHash: hashClientIp(deps.keySecret, ip) },
    SELF_SERVE_KEYS_PER_IP,
    SELF_SERVE_WINDOW_MS,
  )
  if (!outcome.ok)
    throw new ServiceError(
      'rate_limited',
      `This address has had ${SELF_SERVE_KEYS_PER_IP} keys in the last 24 hours. Use one of them, or retry after ${outcome.retryAfterSec} s.`,
      {
        retryAfterSec: outcome.retryAfterSec,
        limit: SELF_SERVE_KEYS_PER_IP,
        policy: KEY_ISSUANCE_POLICY,
        windowSec: SELF_SERVE_WINDOW_MS / 1000,
      },
    )
  deps.log.info({ event: 'key_issued', key_id: id, tier: 'free', issued_by: 'self_serve' }, 'key_issued')
  return issued(deps, id, 'free', issuedAt)
}

/** Issues a key of any tier for an operator (`swapeazi keys issue`), with no limit. */
export async function issueOperatorKey(deps: Pick<ServiceDeps, 'keySecret' | 'store' | 'clock'>, tier: KeyTier): Promise<IssuedApiKey> {
  const id = newKeyId()
  const issuedAt = new Date(deps.clock())
  await deps.store.keys.issueByOperator({ id, tier, issuedAt, issuedBy: 'operator', ipHash: null })
  return issued(deps, id, tier, issuedAt)
}
