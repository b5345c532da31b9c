import type { PaidPostOutcome, Payer } from './payer.ts'

const HOUR_MS = 3_600_000

/**
 * A payer that pays at most `perHour` builds per caller per clock hour (UTC), for /mcp when the operator lets the
 * server's wallet pay there: under the daily budget, one caller cannot spend it all. Counted in this process, taken
 * before the first await so concurrent calls cannot together pass it; a build that certainly was not paid (refused,
 * not sent, over the budget) gives its place back.
 */
export function limitPerCaller(payer: Payer, caller: string, allowance: CallerAllowance): Payer {
  return {
    ...payer,
    async post(path, body): Promise<PaidPostOutcome> {
      const taken = allowance.take(caller)
      if (!taken.ok) return { kind: 'caller_limit', perHour: allowance.perHour, resetsAt: taken.resetsAt }
      const outcome = await payer.post(path, body)
      if (outcome.kind === 'refused' || outcome.kind === 'not_sent' || outcome.kind === 'budget_exhausted') taken.giveBack()
      return outcome
    },
  }
}

export type CallerAllowance = {
  perHour: number
  take(caller: string): { ok: true; giveBack(): void } | { ok: false; resetsAt: Date }
}

/** Counts per caller per clock hour; only the current hour is kept, so memory follows the hour's callers. */
export function createCallerAllowance(perHour: number, clock: () => number): CallerAllowance {
  let hour = -1
  let counts = new Map<string, number>()
  return {
    perHour,
    take(caller) {
      const now = Math.floor(clock() / HOUR_MS)
      if (now !== hour) {
        hour = now
        counts = new Map()
      }
      const used = counts.get(caller) ?? 0
      if (used >= perHour) return { ok: false, resetsAt: new Date((now + 1) * HOUR_MS) }
      counts.set(caller, used + 1)
      const held = counts
      return {
        ok: true,
        giveBack: () => {
          const count = held.get(caller)
          if (count !== undefined && count > 0) held.set(caller, count - 1)
        },
      }
    },
  }
}
