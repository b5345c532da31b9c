// What `swapeazi serve` answers before the app sees a request (review of issue 15, round 3): pipelined requests past
// MAX_PIPELINED_REQUESTS, Expect headers, CONNECT, a second Host header, and `Connection: close` on answers given during shutdown.
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_PIPELINED_REQUESTS } from '../../src/http/guardConnections.ts'
import { quoteBody } from '../http/testApp.ts'
import { expectProblem, type Served, sendAndWait, serveInProcess } from '../support/serveInProcess.ts'

const ENV = { SWAPEAZI_HOST: '127.0.0.1', SWAPEAZI_PORT: '0', SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_LOG_LEVEL: 'info' }
const OPENAPI = 'GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
const QUOTE_BODY = JSON.stringify({
  fromChain: 'BAS',
  toChain: 'POL',
  fromToken: 'USDC',
  toToken: 'USDC',
  fromAmount: '1000',
  fromAddress: '0x1111111111111111111111111111111111111111',
})

/** The status lines of the answers in a raw HTTP/1.1 stream (a JSON body holds none). */
const statusLines = (answer: string): string[] => answer.match(/HTTP\/1\.1 \d{3} [^\r]*\r\n/g) ?? []

describe('swapeazi serve guards its connections', () => {
  let served: Served

  beforeAll(async () => {
    served = await serveInProcess(ENV)
  }, 90_000)

  afterAll(async () => {
    expect(await served.stop()).toBe(0)
  }, 30_000)

  it('with SWAPEAZI_PORT=0, names itself by the port the system picked, not port 0', async () => {
    const origin = `http://127.0.0.1:${served.port}`
    const openapi = (await (await fetch(`${origin}/openapi.json`)).json()) as { servers: { url: string }[] }
    expect(openapi.servers).toEqual([{ url: origin }])
    const challenge = await fetch(`${origin}/api/x402/swap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(quoteBody()),
    })
    expect(challenge.status).toBe(402)
    expect(((await challenge.json()) as { accepts: { resource: string }[] }).accepts[0]?.resource).toBe(`${origin}/api/x402/swap`)
    expect(served.stderr.text).toContain(`"public_url":"${origin}"`)
  }, 30_000)

  it('answers a few pipelined requests in order and keeps the connection', async () => {
    const socket = connect(served.port, '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      answer += chunk
    })
    socket.write(OPENAPI.repeat(10))
    for (let waited = 0; statusLines(answer).length < 10 && waited < 20_000; waited += 20) await sleep(20)
    expect(statusLines(answer)).toEqual(Array(10).fill('HTTP/1.1 200 OK\r\n'))
    expect(socket.destroyed).toBe(false)
    socket.destroy()
  }, 30_000)

  it(`closes a connection that pipelines more than ${MAX_PIPELINED_REQUESTS} requests, without answering past them`, async () => {
    // Closed with the client's requests unread by it: a reset, or an end.
    const answer = await new Promise<string>((resolve) => {
      let text = ''
      const socket = connect(served.port, '127.0.0.1', () => socket.write(OPENAPI.repeat(2_000)))
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => {
        text += chunk
      })
      socket.on('error', () => {})
      socket.on('close', () => resolve(text))
    })
    expect(statusLines(answer).length).toBeLessThanOrEqual(MAX_PIPELINED_REQUESTS)
    expect(served.stderr.text).toContain('"event":"pipeline_overflow"')
    // The server still answers everyone else.
    expect((await fetch(`http://127.0.0.1:${served.port}/openapi.json`)).status).toBe(200)
  }, 30_000)

  it('answers an Expect other than 100-continue with a 417 problem and closes', async () => {
    const { answer } = await sendAndWait(served.port, 'GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\n\r\n')
    expectProblem(answer, 417, 'expectation_failed')
  }, 30_000)

  it('refuses a body over the limit before it sends 100 Continue', async () => {
    const { answer } = await sendAndWait(
      served.port,
      'POST /api/x402/quote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n',
    )
    expect(answer).not.toContain('100 Continue')
    expectProblem(answer, 413, 'payload_too_large')
  }, 30_000)

  it('sends 100 Continue for a body within the limit, then answers it', async () => {
    const body = JSON.stringify(quoteBody())
    const answer = await new Promise<string>((resolve, reject) => {
      let text = ''
      const socket = connect(served.port, '127.0.0.1', () =>
        socket.write(
          `POST /api/x402/quote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        ),
      )
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => {
        const isFirst = text === ''
        text += chunk
        if (isFirst && text.startsWith('HTTP/1.1 100 Continue')) socket.write(body)
      })
      socket.on('error', reject)
      socket.on('close', () => resolve(text))
    })
    expect(statusLines(answer)).toEqual(['HTTP/1.1 100 Continue\r\n', 'HTTP/1.1 200 OK\r\n'])
  }, 30_000)

  it('answers CONNECT with a 400 problem and closes', async () => {
    const { answer } = await sendAndWait(served.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    expectProblem(answer, 400, 'invalid_request')
  }, 30_000)

  it('answers a request with two Host headers 400 and closes (RFC 9112 3.2): which name it was for is unknown', async () => {
    for (const second of ['Host: evil.example', 'HOST: 127.0.0.1']) {
      const { answer } = await sendAndWait(
        served.port,
        `POST /api/v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\n${second}\r\nContent-Length: 0\r\n\r\n`,
      )
      expectProblem(answer, 400, 'invalid_request')
      expect(answer).toContain('more than one Host header')
    }
    const { answer } = await sendAndWait(served.port, OPENAPI)
    expect(statusLines(answer)).toEqual(['HTTP/1.1 200 OK\r\n'])
  }, 30_000)

  it('refuses a body sent with a transfer coding other than chunked (400, closed), and serves chunked alone', async () => {
    const chunked = (codings: string) =>
      `POST /api/x402/quote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: ${codings}\r\n\r\n${QUOTE_BODY.length.toString(16)}\r\n${QUOTE_BODY}\r\n0\r\n\r\n`
    for (const codings of ['gzip, chunked', 'deflate,chunked']) {
      const { answer } = await sendAndWait(served.port, chunked(codings))
      expectProblem(answer, 400, 'invalid_request')
      expect(answer).toContain('decodes none but chunked')
    }
    const { answer } = await sendAndWait(served.port, chunked('chunked').replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'))
    expect(statusLines(answer)).toEqual(['HTTP/1.1 200 OK\r\n'])
  }, 30_000)
})

describe('swapeazi serve lets go of the answers of closed connections', () => {
  it('counts nothing in flight at shutdown after overflowing pipelines and pipelines their clients dropped', async () => {
    const served = await serveInProcess(ENV)
    const burst = (requests: number, dropAfterWrite: boolean) =>
      new Promise<void>((resolve) => {
        const socket = connect(served.port, '127.0.0.1', () => {
          socket.write('GET /api/v1/chains HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(requests))
          if (dropAfterWrite) socket.destroy()
        })
        socket.on('data', () => {})
        socket.on('error', () => {})
        socket.on('close', () => resolve())
      })
    for (let round = 0; round < 5; round++)
      await Promise.all([
        ...Array.from({ length: 10 }, () => burst(MAX_PIPELINED_REQUESTS + 1, false)),
        ...Array.from({ length: 10 }, () => burst(5, true)),
      ])
    await sleep(200)
    expect(await served.stop()).toBe(0)
    const shutdown = /"event":"shutdown",[^}]*"in_flight":(\d+)/.exec(served.stderr.text)
    expect(shutdown?.[1]).toBe('0')
    expect(served.stderr.text).not.toContain('"event":"shutdown_cut"')
  }, 60_000)

  it('sees every header line: a Transfer-Encoding or second Host behind 2,000 empty lines is still refused', async () => {
    const served = await serveInProcess(ENV)
    try {
      const filler = 'a:\r\n'.repeat(2_100)
      const body = await sendAndWait(
        served.port,
        `GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n${filler}Transfer-Encoding: chunked\r\n\r\n5\r\nGET /\r\n0\r\n\r\n`,
      )
      expectProblem(body.answer, 400, 'invalid_request')
      const hosts = await sendAndWait(served.port, `GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n${filler}Host: evil\r\n\r\n`)
      expectProblem(hosts.answer, 400, 'invalid_request')
    } finally {
      expect(await served.stop()).toBe(0)
    }
  }, 60_000)
})

describe('swapeazi serve during shutdown', () => {
  it('answers a kept-alive connection whose next request reached it as it stopped (not a reset), then closes it', async () => {
    const served = await serveInProcess(ENV)
    const HEALTH = 'GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
    const sockets = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const socket = connect(served.port, '127.0.0.1', () => {
              socket.setEncoding('utf8')
              // One request answered: the connection is kept alive, and idle to Node.
              socket.once('data', () => resolve(socket))
              socket.write(HEALTH)
            })
          }),
      ),
    )
    await sleep(100)
    const answers = sockets.map(
      (socket) =>
        new Promise<{ text: string; error?: string }>((resolve) => {
          let text = ''
          socket.on('data', (chunk: string) => {
            text += chunk
          })
          socket.on('error', (error: NodeJS.ErrnoException) => resolve({ text, error: error.code ?? error.message }))
          socket.on('close', () => resolve({ text }))
        }),
    )
    // The next requests and the stop in one turn of the event loop: none of them has been read when the drain begins.
    for (const socket of sockets) socket.write(HEALTH)
    const exited = served.stop()
    for (const answer of await Promise.all(answers)) {
      expect(answer.error).toBeUndefined()
      expect(statusLines(answer.text)).toEqual(['HTTP/1.1 200 OK\r\n'])
      expect(answer.text.toLowerCase()).toContain('connection: close')
    }
    expect(await exited).toBe(0)
  }, 60_000)

  it('finishes a request under way and says Connection: close on its answer', async () => {
    const served = await serveInProcess(ENV)
    const body = JSON.stringify(quoteBody())
    let answer = ''
    const socket = connect(served.port, '127.0.0.1')
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      answer += chunk
    })
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    await new Promise<void>((resolve) =>
      socket.write(
        `POST /api/x402/quote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
        () => resolve(),
      ),
    )
    for (let waited = 0; !served.stderr.text.includes('"event":"request"') && waited < 500; waited += 20) await sleep(20)
    const exited = served.stop()
    for (let waited = 0; !served.stderr.text.includes('"event":"shutdown"') && waited < 10_000; waited += 20) await sleep(20)
    socket.write(body.slice(10))
    await closed
    expect(statusLines(answer)).toEqual(['HTTP/1.1 200 OK\r\n'])
    expect(answer.toLowerCase()).toContain('connection: close')
    expect(await exited).toBe(0)
  }, 60_000)
})
