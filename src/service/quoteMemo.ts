/** Answers kept per second at most. A key is at most 1 KiB (typically about 200 bytes) and an answer 1.3 to 3 KB, so at most about 16 MB. */
const QUOTE_MEMO_MAX_ENTRIES = 4096

/** Longest request text kept as a key. QuoteParams fit in about 300 bytes; padded bodies are answered, not kept. */
const QUOTE_MEMO_MAX_KEY_LENGTH = 1024

export type QuoteMemoOptions = {
  maxEntries?: number
  maxKeyLength?: number
  /** What the answers depend on besides the request and the second: the memo empties when it changes (the market). */
  version?: () => unknown
}

export type QuoteMemo = {
  /**
   * The text `compute` gives for the request text `key`. Within one clock second the same key is answered from the
   * memo; a `compute` that throws keeps nothing, and neither does one that ran across a second boundary.
   */
  answer(key: string, compute: (key: string) => string): string
}

/**
 * The free quote is a pure function of the request, the market (`version`: the live market's catalogue, replaced
 * after each refresh; the snapshot's is fixed for an app's life) and the second it is
 * signed in: the expiry, and so the signed quoteId, has one-second resolution. Identical requests within one second
 * therefore get byte-identical answers whether recomputed or not; this memo gives the first one's text to the rest
 * instead of parsing, routing, signing and serialising again. Agents polling a quote, or a burst of identical
 * requests, cost one computation a second. Each new second starts empty, so nothing is ever stale, and memory is
 * bounded by `maxEntries` answers to keys of at most `maxKeyLength` characters.
 */
export function createQuoteMemo(clock: () => number, options: QuoteMemoOptions = {}): QuoteMemo {
  const maxEntries = options.maxEntries ?? QUOTE_MEMO_MAX_ENTRIES
  const maxKeyLength = options.maxKeyLength ?? QUOTE_MEMO_MAX_KEY_LENGTH
  const version = options.version ?? (() => undefined)
  let second = Number.NaN
  let keptFor: unknown
  let answers = new Map<string, string>()
  return {
    answer(key, compute) {
      const now = Math.floor(clock() / 1000)
      const market = version()
      if (now !== second || market !== keptFor) {
        second = now
        keptFor = market
        answers = new Map()
      }
      const known = answers.get(key)
      if (known !== undefined) return known
      const text = compute(key)
      // Signed in another second than the one it would be filed under: give it out, keep nothing.
      if (key.length <= maxKeyLength && answers.size < maxEntries && Math.floor(clock() / 1000) === second && version() === keptFor)
        answers.set(key, text)
      return text
    },
  }
}
