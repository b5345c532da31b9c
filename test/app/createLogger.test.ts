import { Writable } from 'node:stream'
import { createPublicClient, http } from 'viem'
import { describe, expect, it } from 'vitest'
import { createLogger, redactUrls } from '../../src/app/createLogger.ts'

// Issue 15 ("no secret in any log"): RPC providers put their API key in the URL's path or query, and viem's errors
// carry the URL (and the request) in their message, stack and properties.

/** A logger whose lines are collected. */
function collected(): { log: ReturnType<typeof createLogger>; lines: () => string } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk))
      done()
    },
  })
  return { log: createLogger('info', stream), lines: () => chunks.join('') }
}

describe('the logger keeps URLs of errors to scheme and host', () => {
  it('a viem transport error to an RPC with a key in its path: no key, its short message kept', async () => {
    const client = createPublicClient({ transport: http('http://127.0.0.1:1/v2/SECRETAPIKEY123?apikey=QUERYKEY9', { retryCount: 0 }) })
    const error = await client.getBlockNumber().catch((caught: unknown) => caught)
    expect(String((error as Error).message)).toContain('SECRETAPIKEY123')
    const { log, lines } = collected()
    log.warn({ event: 'tracker_scan_failed', chain: 'BAS', err: error }, 'tracker_scan_failed')
    log.error({ event: 'wrapped', err: new Error('the scan failed', { cause: error }) }, 'wrapped')
    log.warn({ event: 'as_text', err: 'read https://user:pass@rpc.example/v3/PATHKEY42 failed' }, 'as_text')
    const text = lines()
    for (const secret of ['SECRETAPIKEY123', 'QUERYKEY9', 'PATHKEY42', 'user:pass']) expect(text).not.toContain(secret)
    const [first, second, third] = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(first.err).toMatchObject({ type: 'HttpRequestError', message: expect.stringContaining('HTTP request failed.') })
    expect(first.err.stack).toMatch(/^HttpRequestError: HTTP request failed\./)
    expect(Object.keys(first.err).sort()).toEqual(['cause', 'message', 'stack', 'type'])
    expect(second.err).toMatchObject({ type: 'Error', message: 'the scan failed', cause: { type: 'HttpRequestError' } })
    expect(third.err).toBe('read https://rpc.example/… failed')
  })

  it('redactUrls cuts path, query and user info and leaves other text alone', () => {
    expect(redactUrls('URL: https://base-mainnet.g.alchemy.com/v2/abc123 and wss://x.io:8546/ws?key=1.')).toBe(
      'URL: https://base-mainnet.g.alchemy.com/… and wss://x.io:8546/…',
    )
    expect(redactUrls('no url here: 0xabc, 1.5 gwei')).toBe('no url here: 0xabc, 1.5 gwei')
  })
})
