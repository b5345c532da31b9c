import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { quoteBody } from '../http/testApp.ts'
import { expectProblem, type Served, sendAndWait, serveInProcess } from '../support/serveInProcess.ts'

const HEADERS_TIMEOUT_MS = 400
const REQUEST_TIMEOUT_MS = 800
/** Node checks the timeouts on an interval (serve sets it to at most a quarter of the header timeout) and the machine is shared. */
const SLACK_MS = 1_500

describe('swapeazi serve bounds a slow client (SWAPEAZI_HEADERS_TIMEOUT_MS, SWAPEAZI_REQUEST_TIMEOUT_MS)', () => {
  let served: Served

  beforeAll(async () => {
    served = await serveInProcess({
      SWAPEAZI_HOST: '127.0.0.1',
      SWAPEAZI_PORT: '0',
      SWAPEAZI_DATA_DIR: 'memory://',
      SWAPEAZI_LOG_LEVEL: 'info',
      SWAPEAZI_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      SWAPEAZI_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    })
  }, 90_000)

  afterAll(async () => {
    expect(await served.stop()).toBe(0)
    expect(served.stderr.text).toContain('"event":"stopped"')
  }, 30_000)

  it('cuts a half-sent body with 408 once the request timeout has passed', async () => {
    const body = JSON.stringify(quoteBody())
    const { answer, closedAfterMs } = await sendAndWait(
      served.port,
      `POST /api/x402/quote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    )
    expectProblem(answer, 408, 'request_timeout')
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50)
    expect(closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS)
  }, 30_000)

  it('cuts headers that never end with 408 once the header timeout has passed', async () => {
    const { answer, closedAfterMs } = await sendAndWait(served.port, 'GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
    expectProblem(answer, 408, 'request_timeout')
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50)
    expect(closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS)
  }, 30_000)

  it.each([
    ['a header line without a colon', 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'],
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n'],
    ['no Host header (node-server refuses it)', 'GET /api/v1/health HTTP/1.1\r\n\r\n'],
    ['a Host that is not a host (node-server)', 'GET /api/v1/health HTTP/1.1\r\nHost: a@b\r\n\r\n'],
    ['a backslash in the path (node-server)', 'GET /api\\v1/health HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['OPTIONS * (node-server)', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'Content-Length and chunked together',
      'POST /api/x402/quote HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
    ],
  ])(
    'answers %s with a 400 problem and closes',
    async (_name, text) => {
      const { answer } = await sendAndWait(served.port, text)
      expectProblem(answer, 400, 'invalid_request')
    },
    30_000,
  )

  it('answers headers over 16 KiB with a 431 problem and closes', async () => {
    const { answer } = await sendAndWait(served.port, `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expectProblem(answer, 431, 'headers_too_large')
    expect(served.stderr.text).toContain('"event":"client_error"')
  }, 30_000)

  it('still answers a whole request sent in time', async () => {
    const response = await fetch(`http://127.0.0.1:${served.port}/api/x402/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(quoteBody()),
    })
    expect(response.status).toBe(200)
  }, 30_000)
})
