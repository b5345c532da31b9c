import { type ApiKeyClaims, verifyApiKey } from '../auth/apiKey.ts'
import { type RateDecision, type RateSubject, subjectKey, windowStartSec } from '../auth/rateLimits.ts'
import { FREE_KEY_RAISES_LIMIT } from '../schemas/keys.ts'
import { conflictingKeysError, invalidKeyError, revokedKeyError } from './authenticateApiKey.ts'
import type { ServiceDeps } from './deps.ts'
import type { LocalLimits } from './localLimits.ts'
import { ServiceError } from './serviceError.ts'

/** Verified keys kept per process (a few hundred bytes each). */
const MAX_VERIFIED_KEYS = 10_000

export type AdmitApiRequestParameters = {
  ip: string
  /** The API key the request carries (x-swapeazi-key, or a Bearer token), if any. */
  key: string | undefined
  /** Both headers were sent, with different keys: refused as an invalid key (401 `conflicting`). */
  isConflicting?: boolean
}

export type AdmitApiRequestReturnType = {
  claims?: ApiKeyClaims
  decision: RateDecision
  /** Milliseconds to hold a refusal before answering it (LocalLimits.holdMs); 0 when allowed. */
  holdMs: number
}

export type AdmitApiRequest = (parameters: AdmitApiRequestParameters) => Promise<AdmitApiRequestReturnType>

/**
 * DESIGN 7.15-7.16 for every /api/v1/* request: a key that is sent must be valid (401 `invalid_key` otherwise, even
 * where none is needed, so a broken key never goes unnoticed); then the request is counted against the key's tier,
 * or against the caller's IP when there is no key: in the store on PostgreSQL (one atomic statement, so every replica
 * sees the same number), in memory on the embedded store's one owner. The caller sets the RateLimit headers from the
 * decision and refuses the request with `rateLimitedError` when it is not allowed.
 *
 * Refusals are cheap (issue 15): a source this process already found over its limit this minute is refused from
 * memory, and a malformed, forged or revoked key is refused without a store write and counted toward the IP's
 * anonymous limit, so past it the IP gets 429s instead. Finished windows are pruned once a window per process.
 */
export function createAdmitApiRequest(
  deps: Pick<ServiceDeps, 'keySecret' | 'store' | 'clock' | 'rateLimits' | 'log'>,
  local: LocalLimits,
): AdmitApiRequest {
  let prunedWindow = 0
  const refused = (decision: RateDecision): AdmitApiRequestReturnType => ({ decision, holdMs: local.holdMs(decision) })
  // Keys that verified, by their text: a client sends the same key on every request, and its MAC and claims cannot
  // change (revocation is checked on every request all the same). Bounded; emptied when full.
  const verifiedKeys = new Map<string, ApiKeyClaims>()
  const verify = (key: string): ReturnType<typeof verifyApiKey> => {
    const known = verifiedKeys.get(key)
    if (known !== undefined) return { ok: true, claims: known }
    const verified = verifyApiKey(deps.keySecret, key)
    if (verified.ok) {
      if (verifiedKeys.size >= MAX_VERIFIED_KEYS) verifiedKeys.clear()
      verifiedKeys.set(key, verified.claims)
    }
    return verified
  }
  // Key ids the store answered revoked (PostgreSQL reads the denylist in the counter's statement; the embedded
  // store's owner keeps it in memory). Bounded; emptied when full, when the store is asked again.
  const revokedKeys = new Set<string>()
  return async ({ ip, key, isConflicting = false }) => {
    const nowMs = deps.clock()
    let ipSubjectOnce: ReturnType<LocalLimits['ipSubject']> | undefined
    // The IP's keyed hash only when the IP is what counts: no key, or a refused one.
    const ipSubject = (): ReturnType<LocalLimits['ipSubject']> => (ipSubjectOnce ??= local.ipSubject(ip))
    let claims: ApiKeyClaims | undefined
    if (key !== undefined) {
      const verified = verify(key.trim())
      const error = isConflicting ? conflictingKeysError() : verified.ok ? undefined : invalidKeyError(verified.reason, key)
      if (error !== undefined) {
        const over = local.noteRefusal(ipSubject(), nowMs)
        if (over !== undefined) return refused(over)
        throw error
      }
      claims = verified.ok ? verified.claims : undefined
    }
    if (claims !== undefined && revokedKeys.has(claims.id)) {
      const ipOver = local.noteRefusal(ipSubject(), nowMs)
      if (ipOver !== undefined) return refused(ipOver)
      throw revokedKeyError(claims.id)
    }
    const subject: RateSubject = claims === undefined ? ipSubject() : { policy: claims.tier, keyId: claims.id }
    const over = local.knownOver(subject, nowMs)
    if (over !== undefined) return refused(over)

    const window = windowStartSec(nowMs)
    let calls: number
    if (claims === undefined) calls = (await deps.store.rateLimits.hit(subjectKey(subject), window)) + local.refusalsOf(ipSubject(), nowMs)
    else {
      // The denylist is read in the counter's statement: a keyed request costs one round trip (none on PGlite).
      const hit = await deps.store.rateLimits.hitKey(claims.id, subjectKey(subject), window)
      if (hit.isRevoked) {
        // A revocation is for good: this process refuses the key from memory from now on, with no statement.
        if (revokedKeys.size >= MAX_VERIFIED_KEYS) revokedKeys.clear()
        revokedKeys.add(claims.id)
        const ipOver = local.noteRefusal(ipSubject(), nowMs)
        if (ipOver !== undefined) return refused(ipOver)
        throw revokedKeyError(claims.id)
      }
      calls = hit.calls
    }
    if (window !== prunedWindow) {
      prunedWindow = window
      deps.store.rateLimits
        .prune(Math.floor(nowMs / 1000))
        .catch((error: unknown) => deps.log.warn({ event: 'rate_prune_failed', err: error }, 'rate_prune_failed'))
    }
    const decision = local.noteCount(subject, calls, nowMs)
    return decision.isAllowed ? { ...(claims === undefined ? {} : { claims }), decision, holdMs: 0 } : refused(decision)
  }
}

/** The 429 for a request over its limit: what the limit is and when to come back. */
export function rateLimitedError(decision: RateDecision): ServiceError {
  const who =
    decision.policy === 'anonymous'
      ? `Requests without a key are limited to ${decision.limit} per minute per IP, refused credentials included; ${FREE_KEY_RAISES_LIMIT}`
      : `Your ${decision.policy} key is limited to ${decision.limit} requests per minute.`
  return new ServiceError('rate_limited', `${who} Retry after ${decision.resetSec} s.`, {
    retryAfterSec: decision.resetSec,
    limit: decision.limit,
    policy: decision.policy,
  })
}
