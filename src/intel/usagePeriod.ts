export type UsagePeriod = {
  /** The calendar month (UTC) as YYYY-MM: the key counters are kept under. */
  period: string
  /** When the next month starts, in milliseconds since the epoch. */
  resetsAtMs: number
  /** Whole seconds until then, at least 1 (a Retry-After value). */
  secondsToReset: number
  /** The month's length in seconds (a RateLimit-Policy window). */
  lengthSec: number
}

/** The calendar month (UTC) `nowMs` falls in: free quotas and pro metering count per such month (DESIGN 7.17). */
export function usagePeriod(nowMs: number): UsagePeriod {
  const now = new Date(nowMs)
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  const resetsAtMs = Date.UTC(year, month + 1, 1)
  const startsAtMs = Date.UTC(year, month, 1)
  return {
    period: `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}`,
    resetsAtMs,
    secondsToReset: Math.max(1, Math.ceil((resetsAtMs - nowMs) / 1000)),
    lengthSec: (resetsAtMs - startsAtMs) / 1000,
  }
}

/** A YYYY-MM month as given on the command line (`keys usage --month`), or undefined when it is not one. */
export function parseUsagePeriod(text: string): string | undefined {
  return /^[0-9]{4}-(0[1-9]|1[0-2])$/.test(text) ? text : undefined
}
