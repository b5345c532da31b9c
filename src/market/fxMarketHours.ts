/** FX markets close for the weekend at 17:00 New York time on Friday: 21:00 or 22:00 UTC with daylight saving. */
const CLOSE_UTC_HOUR_FRIDAY = 21
/** They reopen at 17:00 New York time on Sunday: 21:00 or 22:00 UTC; the later hour plus one covers both. */
const OPEN_UTC_HOUR_SUNDAY = 23

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/**
 * When FX markets last closed, if they are closed at `nowMs` (unix ms): from Friday 21:00 UTC to Sunday 23:00 UTC,
 * which holds the weekend close in both daylight-saving seasons. Chainlink's FX feeds stop updating then, so the
 * live market keeps their last answer usable through the closure (liveMarket.ts; docs/live-market.md).
 */
export function fxClosedSince(nowMs: number): number | undefined {
  const now = new Date(nowMs)
  const day = now.getUTCDay() // 0 Sunday … 5 Friday, 6 Saturday
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const fridayClose = (daysSinceFriday: number): number => midnight - daysSinceFriday * DAY_MS + CLOSE_UTC_HOUR_FRIDAY * HOUR_MS
  if (day === 5) return now.getUTCHours() >= CLOSE_UTC_HOUR_FRIDAY ? fridayClose(0) : undefined
  if (day === 6) return fridayClose(1)
  if (day === 0) return now.getUTCHours() < OPEN_UTC_HOUR_SUNDAY ? fridayClose(2) : undefined
  return undefined
}

/**
 * When FX markets next close or reopen after `nowMs` (unix ms): the end of the current closure, or the next Friday
 * close. The live market re-checks its FX figures then, since their allowed age changes at both.
 */
export function fxNextChangeMs(nowMs: number): number {
  const closedSince = fxClosedSince(nowMs)
  if (closedSince !== undefined) return closedSince + 2 * DAY_MS + (OPEN_UTC_HOUR_SUNDAY - CLOSE_UTC_HOUR_FRIDAY) * HOUR_MS
  const now = new Date(nowMs)
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const daysToFriday = (5 - now.getUTCDay() + 7) % 7
  const close = midnight + daysToFriday * DAY_MS + CLOSE_UTC_HOUR_FRIDAY * HOUR_MS
  return close > nowMs ? close : close + 7 * DAY_MS
}
