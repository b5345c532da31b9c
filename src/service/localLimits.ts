import { hashClientIp } from '../auth/clientIpHash.ts'
import { decide, type RateDecision, type RateLimits, type RateSubject, subjectKey, windowStartSec } from '../auth/rateLimits.ts'
import type { ServiceDeps } from './deps.ts'

/**
 * What one process knows about the current minute without asking the store (DESIGN 7.16, issue 15): which sources
 * are already over their limit, so that their further requests are refused with no store write, and how many of each
 * IP's requests were refused for a bad credential (a malformed, forged or revoked key, a payment whose signature or
 * terms fail), which count toward that IP's anonymous limit. Forgotten when the minute ends. A flood of refusals
 * thus costs the store nothing and is answered from memory; past twice its limit a source's refusals are also held
 * for `holdRefusalsMs` before they are answered, so a client that ignores Retry-After cannot take the event loop.
 */
export type LocalLimits = {
  /** The IP's hashed subject: what per-IP counters are keyed by. */
  ipSubject(ip: string): RateSubject & { policy: 'anonymous' }
  /** The refusal for a source already known over its limit this minute, counting this request; undefined otherwise. */
  knownOver(subject: RateSubject, nowMs: number): RateDecision | undefined
  /** Notes what the store counted for `subject`; a source found over its limit is refused locally from then on. */
  noteCount(subject: RateSubject, calls: number, nowMs: number): RateDecision
  /**
   * Counts a refused credential against the IP. Returns the 429 decision once the IP's refusals (or what it was
   * already known to have sent) pass its anonymous limit; undefined while the refusal should be answered as itself.
   */
  noteRefusal(ip: RateSubject & { policy: 'anonymous' }, nowMs: number): RateDecision | undefined
  /**
   * For routes that are not rate limited (the paid swap): the refusal for an IP whose refused credentials this minute
   * already reached its anonymous limit, counting this request as one more; undefined otherwise.
   */
  refusedTooOften(ip: RateSubject & { policy: 'anonymous' }, nowMs: number): RateDecision | undefined
  /** This minute's refused credentials of the IP, which its store count does not include. */
  refusalsOf(ip: RateSubject & { policy: 'anonymous' }, nowMs: number): number
  /** How long to hold the answer to a refused request before sending it: 0 until the source is past twice its limit. */
  holdMs(decision: RateDecision): number
}

/** Per-minute state; `calls` is what the source has sent this minute as far as this process knows. */
type Minute = { windowSec: number; over: Map<string, number>; refusals: Map<string, number> }

export function createLocalLimits(deps: Pick<ServiceDeps, 'keySecret' | 'rateLimits'>): LocalLimits {
  const limits: RateLimits = deps.rateLimits
  let minute: Minute = { windowSec: 0, over: new Map(), refusals: new Map() }
  const current = (nowMs: number): Minute => {
    const windowSec = windowStartSec(nowMs)
    if (windowSec !== minute.windowSec) minute = { windowSec, over: new Map(), refusals: new Map() }
    return minute
  }
  return {
    ipSubject: (ip) => ({ policy: 'anonymous', ipHash: hashClientIp(deps.keySecret, ip) }),
    knownOver(subject, nowMs) {
      const state = current(nowMs)
      const key = subjectKey(subject)
      const calls = state.over.get(key)
      if (calls === undefined) return undefined
      state.over.set(key, calls + 1)
      return decide(limits, subject, calls + 1, nowMs)
    },
    noteCount(subject, calls, nowMs) {
      const decision = decide(limits, subject, calls, nowMs)
      if (!decision.isAllowed) current(nowMs).over.set(subjectKey(subject), calls)
      return decision
    },
    noteRefusal(ip, nowMs) {
      const state = current(nowMs)
      const key = subjectKey(ip)
      const refusals = (state.refusals.get(key) ?? 0) + 1
      state.refusals.set(key, refusals)
      const over = state.over.get(key)
      const calls = over === undefined ? refusals : over + 1
      if (over !== undefined) state.over.set(key, calls)
      const decision = decide(limits, ip, calls, nowMs)
      if (decision.isAllowed) return undefined
      state.over.set(key, calls)
      return decision
    },
    refusedTooOften(ip, nowMs) {
      const state = current(nowMs)
      const key = subjectKey(ip)
      const refusals = state.refusals.get(key) ?? 0
      if (refusals < limits.anonymous) return undefined
      state.refusals.set(key, refusals + 1)
      return decide(limits, ip, refusals + 1, nowMs)
    },
    refusalsOf: (ip, nowMs) => current(nowMs).refusals.get(subjectKey(ip)) ?? 0,
    holdMs: (decision) => (decision.calls > 2 * decision.limit ? limits.holdRefusalsMs : 0),
  }
}
