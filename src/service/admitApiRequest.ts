import type { ApiKeyClaims } from '../auth/apiKey.ts'
import { hashClientIp } from '../auth/clientIpHash.ts'
import { decide, type RateDecision, type RateSubject, subjectKey, windowStartSec } from '../auth/rateLimits.ts'
import { revokedKeyError, verifyKeySignature } from './authenticateApiKey.ts'
import type { ServiceDeps } from './deps.ts'
import { ServiceError } from './serviceError.ts'

export type AdmitApiRequestParameters = {
  ip: string
  /** The API key the request carries (x-swapeazi-key, or a Bearer token), if any. */
  key: string | undefined
}

export type AdmitApiRequestReturnType = { claims?: ApiKeyClaims; decision: RateDecision }

export type AdmitApiRequest = (parameters: AdmitApiRequestParameters) => Promise<AdmitApiRequestReturnType>

/**
 * DESIGN 7.15-7.16 for every /api/v1/* request: a key that is sent must be valid (401 `invalid_key` otherwise, even
 * where none is needed, so a broken key never goes unnoticed); then the request is counted in the store against the
 * key's tier, or against the caller's IP when there is no key. The count is one atomic statement, so every replica
 * on the store sees the same number. The caller sets the RateLimit headers from the decision and refuses the request
 * with `rateLimitedError` when it is not allowed. Finished windows are pruned once a window per process.
 */
export function createAdmitApiRequest(deps: Pick<ServiceDeps, 'keySecret' | 'store' | 'clock' | 'rateLimits' | 'log'>): AdmitApiRequest {
  let prunedWindow = 0
  return async ({ ip, key }) => {
    const claims = key === undefined ? undefined : verifyKeySignature(deps, key)
    const subject: RateSubject =
      claims === undefined ? { policy: 'anonymous', ipHash: hashClientIp(deps.keySecret, ip) } : { policy: claims.tier, keyId: claims.id }
    const nowMs = deps.clock()
    const window = windowStartSec(nowMs)
    let calls: number
    if (claims === undefined) calls = await deps.store.rateLimits.hit(subjectKey(subject), window)
    else {
      // The denylist is read in the counter's statement: a keyed request costs one round trip.
      const hit = await deps.store.rateLimits.hitKey(claims.id, subjectKey(subject), window)
      if (hit.isRevoked) throw revokedKeyError(claims.id)
      calls = hit.calls
    }
    if (window !== prunedWindow) {
      prunedWindow = window
      deps.store.rateLimits
        .prune(Math.floor(nowMs / 1000))
        .catch((error: unknown) => deps.log.warn({ event: 'rate_prune_failed', err: error }, 'rate_prune_failed'))
    }
    return { ...(claims === undefined ? {} : { claims }), decision: decide(deps.rateLimits, subject, calls, nowMs) }
  }
}

/** The 429 for a request over its limit: what the limit is and when to come back. */
export function rateLimitedError(decision: RateDecision): ServiceError {
  const who =
    decision.policy === 'anonymous'
      ? `Requests without a key are limited to ${decision.limit} per minute per IP; a free key (POST /api/v1/keys) raises that.`
      : `Your ${decision.policy} key is limited to ${decision.limit} requests per minute.`
  return new ServiceError('rate_limited', `${who} Retry after ${decision.resetSec} s.`, {
    retryAfterSec: decision.resetSec,
    limit: decision.limit,
    policy: decision.policy,
  })
}
