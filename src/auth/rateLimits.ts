import type { KeyTier } from './apiKey.ts'

/**
 * Requests per minute on /api/v1/* by who is calling (DESIGN 7.16), and how long a source past twice its limit waits
 * for each further refusal (src/service/localLimits.ts).
 */
export type RateLimits = { anonymous: number; free: number; pro: number; holdRefusalsMs: number }

export const DEFAULT_RATE_LIMITS: RateLimits = { anonymous: 30, free: 60, pro: 600, holdRefusalsMs: 1000 }

/** The limits are fixed one-minute windows, aligned to the minute so every replica counts in the same window. */
const RATE_WINDOW_SEC = 60

/** Whose requests one counter counts: an IP (anonymous) or a key, and the policy that applies. */
export type RateSubject = { policy: 'anonymous'; ipHash: string } | { policy: KeyTier; keyId: string }

export type RateDecision = {
  policy: RateSubject['policy']
  /** The source's requests this window, this one included. */
  calls: number
  limit: number
  remaining: number
  /** Seconds until the window ends and the count starts again. */
  resetSec: number
  isAllowed: boolean
}

export const subjectKey = (subject: RateSubject): string =>
  subject.policy === 'anonymous' ? `ip:${subject.ipHash}` : `key:${subject.keyId}`

/** The start of the window `nowMs` falls in, in unix seconds. */
export const windowStartSec = (nowMs: number): number => Math.floor(nowMs / 1000 / RATE_WINDOW_SEC) * RATE_WINDOW_SEC

/** What a window's count means for the request that made it. */
export function decide(limits: RateLimits, subject: RateSubject, calls: number, nowMs: number): RateDecision {
  const limit = limits[subject.policy]
  const resetSec = Math.max(1, windowStartSec(nowMs) + RATE_WINDOW_SEC - Math.floor(nowMs / 1000))
  return { policy: subject.policy, calls, limit, remaining: Math.max(0, limit - calls), resetSec, isAllowed: calls <= limit }
}

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` names the policy, its quota
 * and window (the per-minute window unless given); `RateLimit` the quota left and the seconds until it resets.
 * Structured-field lists of one item.
 */
export function rateLimitHeaders(
  decision: Pick<RateDecision, 'limit' | 'remaining' | 'resetSec'> & { policy: string },
  windowSec: number = RATE_WINDOW_SEC,
): { 'RateLimit-Policy': string; RateLimit: string } {
  const name = `"${decision.policy}"`
  return {
    'RateLimit-Policy': `${name};q=${decision.limit};w=${windowSec}`,
    RateLimit: `${name};r=${decision.remaining};t=${decision.resetSec}`,
  }
}
