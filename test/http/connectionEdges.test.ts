import { type Socket, connect } from 'node:net'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../src/http/createApp.ts'
import { defineEndpoint } from '../../src/http/endpoint.ts'
import { ENDPOINTS } from '../../src/http/endpoints.ts'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { lazyMemoryStore, quoteBody, testApp, testDeps } from './testApp.ts'

// Issue 15 item 6, over real sockets: what a client that misbehaves mid-connection gets, and what it costs us. Each
// test speaks raw HTTP/1.1 so it can stop, stall or hang up where a real client library would not let it.

type LogLine = { level: number; event?: string; status?: number; path?: string }
const lines: LogLine[] = []
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as LogLine)
    done()
  },
})
const log = pino({ level: 'info' }, sink)

/** A promise with its resolver. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

/** The slow endpoint's handler says when it has read the body, then waits for the test to release it. */
const slow = { entered: deferred(), release: deferred() }
const slowEndpoint = defineEndpoint({
  method: 'POST',
  path: '/slow',
  handler: () => async (c, input) => {
    await input.bodyText()
    slow.entered.resolve()
    await slow.release.promise
    return c.json({ ok: true })
  },
})

let server: ListeningApp
let slowServer: ListeningApp
let port = 0

// Its own store: keys issued here from 127.0.0.1 count against no other file's.
const store = lazyMemoryStore()

beforeAll(async () => {
  server = await listenOnLoopback(testApp({ log, store }).fetch)
  port = Number(new URL(server.base).port)
  slowServer = await listenOnLoopback(createApp(testDeps({ log }), { endpoints: [slowEndpoint] }).fetch)
})
afterAll(async () => {
  await server.close()
  await slowServer.close()
  await store.sql.close()
})

type Exchange = {
  /** Everything the server sent, as text. */
  received: string
  /** Body bytes this client managed to send before the server answered and closed. */
  sentBodyBytes: number
  /** Milliseconds from connecting until the server closed the connection. */
  closedAfterMs: number
}

/**
 * Sends `head` and then a body of `bodyBytes` in `chunkBytes` chunks, one each `intervalMs`, until it is all sent or
 * the server closes the connection; resolves when the connection is closed (by the server, or after `bodyBytes`).
 */
function slowUpload(
  head: string,
  { bodyBytes, chunkBytes, intervalMs, chunked = false }: { bodyBytes: number; chunkBytes: number; intervalMs: number; chunked?: boolean },
): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now()
    const socket: Socket = connect(port, '127.0.0.1')
    let received = ''
    let sentBodyBytes = 0
    let timer: NodeJS.Timeout | undefined
    const chunk = 'x'.repeat(chunkBytes)
    const sendNext = (): void => {
      if (socket.destroyed || socket.writableEnded) return
      if (sentBodyBytes >= bodyBytes) {
        socket.end(chunked ? '0\r\n\r\n' : '')
        return
      }
      socket.write(chunked ? `${chunkBytes.toString(16)}\r\n${chunk}\r\n` : chunk)
      sentBodyBytes += chunkBytes
      timer = setTimeout(sendNext, intervalMs)
    }
    socket.on('connect', () => {
      socket.write(head)
      timer = setTimeout(sendNext, intervalMs)
    })
    socket.on('data', (data) => {
      received += data.toString('latin1')
    })
    // A reset after the answer is one way the server may close; the answer was read before it.
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ received, sentBodyBytes, closedAfterMs: Date.now() - started })
    })
  })
}

/** One request with no body over its own connection; resolves with the raw answer once the server has sent it. */
function rawRequest(method: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const head = Object.entries({ host: `127.0.0.1:${port}`, connection: 'close', ...headers })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')
    socket.on('connect', () => socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`))
    let received = ''
    socket.on('data', (data) => {
      received += data.toString('latin1')
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
  })
}

const statusOf = (raw: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1])
const headerOf = (raw: string, name: string): string | undefined =>
  new RegExp(`^${name}: (.*)$`, 'im').exec(raw.split('\r\n\r\n')[0] ?? '')?.[1]?.trim()
const bodyOf = (raw: string): Record<string, unknown> => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>

const MIB = 1024 * 1024

/** Waits until a log line with `event` for `path` is written (the access log comes after the handler). */
async function logLine(event: string, path: string): Promise<LogLine> {
  for (let waited = 0; waited < 5000; waited += 20) {
    const line = lines.find((each) => each.event === event && each.path === path)
    if (line) return line
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no ${event} line for ${path}; saw ${JSON.stringify(lines.map((each) => each.event))}`)
}

describe('a client that hangs up', () => {
  it('mid-body is logged at info as request_aborted (499), not as an unhandled 500', async () => {
    const path = '/api/x402/quote?aborted-mid-body'
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.on('connect', resolve))
    socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"fromChain":`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()

    const line = await logLine('request_aborted', '/api/x402/quote')
    expect(line).toMatchObject({ level: 30, status: 499 })
    expect(lines.filter((each) => each.level >= 50 || each.event === 'unhandled_error')).toEqual([])
    expect(lines.filter((each) => each.path === '/api/x402/quote' && each.status === 500)).toEqual([])
  })

  it('while the handler runs is logged at info as request_aborted with the status it was answered', async () => {
    const slowPort = Number(new URL(slowServer.base).port)
    const socket = connect(slowPort, '127.0.0.1')
    await new Promise((resolve) => socket.on('connect', resolve))
    socket.write('POST /slow HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')
    await slow.entered.promise
    socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 50))
    slow.release.resolve()

    expect(await logLine('request_aborted', '/slow')).toMatchObject({ level: 30, status: 200 })
    expect(lines.filter((each) => each.level >= 50)).toEqual([])
  })
})

describe('a body the service refuses is not read', () => {
  // 64 KiB every 25 ms: 10 MiB would take 4 s to send; the answer and the close come after the first chunks.
  const slowly = { chunkBytes: 64 * 1024, intervalMs: 25 }

  it('413 to a declared Content-Length over the limit, with Connection: close, and the connection closed at once', async () => {
    const bodyBytes = 10 * MIB
    const exchange = await slowUpload(
      `POST /api/x402/quote HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${bodyBytes}\r\n\r\n`,
      { bodyBytes, ...slowly },
    )
    expect(statusOf(exchange.received)).toBe(413)
    expect(headerOf(exchange.received, 'connection')).toBe('close')
    expect(bodyOf(exchange.received)['code']).toBe('payload_too_large')
    expect(exchange.sentBodyBytes).toBeLessThan(bodyBytes / 10)
    expect(exchange.closedAfterMs).toBeLessThan(1500)
  })

  it('413 to a chunked body once it passes the limit, and the connection closed without reading the rest', async () => {
    const bodyBytes = 10 * MIB
    const exchange = await slowUpload(
      'POST /api/x402/quote HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
      { bodyBytes, chunked: true, ...slowly },
    )
    expect(statusOf(exchange.received)).toBe(413)
    expect(headerOf(exchange.received, 'connection')).toBe('close')
    expect(exchange.sentBodyBytes).toBeLessThan(bodyBytes / 10)
    expect(exchange.closedAfterMs).toBeLessThan(1500)
  })

  it.each([
    ['GET', '/api/v1/health', { 'content-length': String(100 * MIB) }],
    ['GET', '/api/v1/chains', { 'transfer-encoding': 'chunked' }],
    ['HEAD', '/openapi.json', { 'content-length': String(100 * MIB) }],
  ] as const)(
    '%s %s with a body (%o): 400 invalid_request saying to send none, and the connection closed unread',
    async (method, path, headers) => {
      const bodyBytes = 100 * MIB
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('')
      const exchange = await slowUpload(`${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n`, {
        bodyBytes,
        chunked: 'transfer-encoding' in headers,
        ...slowly,
      })
      expect(statusOf(exchange.received)).toBe(400)
      expect(headerOf(exchange.received, 'connection')).toBe('close')
      expect(headerOf(exchange.received, 'content-type')).toBe('application/problem+json')
      if (method === 'GET') {
        const problem = bodyOf(exchange.received)
        expect(problem).toMatchObject({ code: 'invalid_request', errors: [{ field: '(body)', message: 'must be absent on GET' }] })
        expect(problem['detail']).toMatch(/GET takes no body: send the request again without one/)
      }
      expect(exchange.sentBodyBytes).toBeLessThan(MIB)
      expect(exchange.closedAfterMs).toBeLessThan(1500)
    },
  )

  it('still answers a GET that declares an empty body (Content-Length: 0)', async () => {
    const raw = await rawRequest('GET', '/api/v1/health', { 'content-length': '0' })
    expect(statusOf(raw)).toBe(200)
  })
})

describe('POST /api/v1/keys over a socket, where the host the request was sent to is its Host header', () => {
  const issueFrom = (origin: string): Promise<Response> => fetch(`${server.base}/api/v1/keys`, { method: 'POST', headers: { origin } })

  it("serves the portal's own page on whatever port it was reached, and refuses another site's", async () => {
    expect((await issueFrom(server.base)).status).toBe(201)
    const foreign = await issueFrom('http://elsewhere.example')
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as { code: string }).code).toBe('origin_not_allowed')
  })
})

/** A request path for a declared path: each `{name}` filled with a value its pattern accepts. */
const concrete = (path: string): string => path.replace('{ref}', 'swp_01JABCDEFGHJKMNPQRSTVWXYZ0').replace('{pair}', 'BAS-POL')

describe('every declared path over a socket', () => {
  const allowed = new Map<string, string[]>()
  // A GET path serves HEAD too.
  for (const endpoint of ENDPOINTS)
    allowed.set(endpoint.path, [
      ...(allowed.get(endpoint.path) ?? []),
      ...(endpoint.method === 'GET' ? ['GET', 'HEAD'] : [endpoint.method]),
    ])

  it.each([...allowed.keys()])('%s answers OPTIONS and TRACE with 405 and Allow', async (path) => {
    for (const method of ['OPTIONS', 'TRACE']) {
      const raw = await rawRequest(method, concrete(path))
      expect(statusOf(raw), `${method} ${path}`).toBe(405)
      expect(headerOf(raw, 'allow'), `${method} ${path}`).toBe(allowed.get(path)?.join(', '))
      expect(bodyOf(raw)['code']).toBe('method_not_allowed')
    }
  })

  it('answers a CORS preflight on a parameterised path with 204', async () => {
    const raw = await rawRequest('OPTIONS', concrete('/api/v1/swap/{ref}'), {
      origin: 'https://agent.example',
      'access-control-request-method': 'GET',
    })
    expect(statusOf(raw)).toBe(204)
    expect(headerOf(raw, 'access-control-allow-origin')).toBe('*')
  })

  it('quotes as before after all of that', async () => {
    const response = await fetch(`${server.base}/api/x402/quote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(quoteBody()),
    })
    expect(response.status).toBe(200)
  })
})
