import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Hono } from 'hono'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LINGER_BYTES, LINGER_MS, limitBody } from '../../src/http/limitBody.ts'
import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { lazyMemoryStore, testApp } from './testApp.ts'

// A client still streaming its body when it is refused (413) reads the answer: the server half-closes after writing
// it and keeps discarding what arrives for a while, instead of closing on unread data, which makes the kernel send a
// reset that can destroy the answer before the client reads it.

const MIB = 1024 * 1024
/**
 * Rounds per case. Without the lingering close every round lost the answer here (EPIPE, nothing read): the 6 MiB body
 * is more than loopback's socket buffers take (2 to 4 MiB on this machine), so the client is still writing when the
 * server closes. A machine whose buffers take the whole body would not show it.
 */
const ROUNDS = 20

let server: ListeningApp
let port = 0
const store = lazyMemoryStore()

beforeAll(async () => {
  server = await listenOnLoopback(testApp({ log: pino({ level: 'silent' }), store }).fetch)
  port = Number(new URL(server.base).port)
})
afterAll(async () => {
  await server.close()
  await store.sql.close()
})

type Outcome = { received: string; error: string | undefined; sentBodyBytes: number }

/**
 * Sends `head` and a body of `bodyBytes` as fast as the socket takes it, and reads the answer only once the body is
 * sent (as a client that sends its request, then reads, does); what came back before the connection ended.
 */
function uploadThenRead(head: string, { bodyBytes, chunked }: { bodyBytes: number; chunked: boolean }): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.pause()
    const chunkBytes = 16 * 1024
    const chunk = Buffer.from(chunked ? `${chunkBytes.toString(16)}\r\n${'x'.repeat(chunkBytes)}\r\n` : 'x'.repeat(chunkBytes))
    let received = ''
    let error: string | undefined
    let sentBodyBytes = 0
    const pump = (): void => {
      while (!socket.destroyed && sentBodyBytes < bodyBytes) {
        sentBodyBytes += chunkBytes
        if (!socket.write(chunk)) return
      }
      if (socket.destroyed) return
      socket.write(chunked ? '0\r\n\r\n' : '', () => socket.resume())
    }
    socket.on('connect', () => {
      socket.write(head)
      pump()
    })
    socket.on('drain', pump)
    socket.on('data', (data) => {
      received += data.toString('latin1')
    })
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      error = failure.code ?? failure.message
    })
    socket.on('close', () => resolve({ received, error, sentBodyBytes }))
  })
}

const statusLine = (raw: string): string => raw.split('\r\n')[0] ?? ''

describe('a refused body still streaming', () => {
  const BODY_BYTES = 6 * MIB
  it.each([
    [
      'a declared Content-Length',
      false,
      `POST /api/x402/quote HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${BODY_BYTES}\r\n\r\n`,
    ],
    [
      'a chunked body',
      true,
      'POST /api/x402/quote HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n',
    ],
  ] as const)('%s, read once it is sent: the client reads the 413 every time', async (_name, chunked, head) => {
    const lost: { status: string; error: string | undefined }[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const outcome = await uploadThenRead(head, { bodyBytes: BODY_BYTES, chunked })
      // A reset (ECONNRESET) is what can destroy the answer before a client reads it: a client on loopback Linux reads
      // what arrived before it, so the test asserts the reset itself is gone as well as the answer being read.
      if (statusLine(outcome.received) !== 'HTTP/1.1 413 Payload Too Large' || outcome.error !== undefined)
        lost.push({ status: statusLine(outcome.received), error: outcome.error })
    }
    expect(lost).toEqual([])
  })

  it('is bounded: a client that reads the 413 but never stops sending, nor closes, is cut after LINGER_MS or LINGER_BYTES', async () => {
    const started = Date.now()
    const outcome = await new Promise<Outcome>((resolve) => {
      // allowHalfOpen: the server's end of stream does not end this side; it keeps sending until it is cut.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
      const chunk = Buffer.alloc(64 * 1024, 'x')
      let received = ''
      let error: string | undefined
      let sentBodyBytes = 0
      const pump = (): void => {
        while (!socket.destroyed && sentBodyBytes < 1024 * MIB) {
          sentBodyBytes += chunk.length
          if (!socket.write(chunk)) return
        }
        if (!socket.destroyed) socket.end()
      }
      socket.on('connect', () => {
        socket.write(`POST /api/x402/quote HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${1024 * MIB}\r\n\r\n`)
        pump()
      })
      socket.on('drain', pump)
      socket.on('data', (data) => {
        received += data.toString('latin1')
      })
      socket.on('error', (failure: NodeJS.ErrnoException) => {
        error = failure.code ?? failure.message
      })
      socket.on('close', () => resolve({ received, error, sentBodyBytes }))
    })
    expect(statusLine(outcome.received)).toBe('HTTP/1.1 413 Payload Too Large')
    expect(Date.now() - started).toBeLessThan(LINGER_MS + 1_500)
    // Cut long before the 1 GiB: LINGER_BYTES, plus what arrives between two counts and the kernel's buffers.
    expect(outcome.sentBodyBytes).toBeLessThan(LINGER_BYTES + 128 * MIB)
  })
})

describe('lingering connections at once', () => {
  /** A cap of 2 stands for LINGER_MAX_SOCKETS: the same code, without opening 65 connections. */
  const MAX_LINGERING = 2
  let capped: ListeningApp
  let cappedPort = 0
  beforeAll(async () => {
    const app = new Hono()
    app.use(
      limitBody(
        16,
        { tooLarge: (c) => c.text('too large', 413), bodyWithoutMethod: (c) => c.text('no body', 400) },
        { maxLingeringSockets: MAX_LINGERING },
      ),
    )
    app.post('/', (c) => c.text('ok'))
    capped = await listenOnLoopback(app.fetch)
    cappedPort = Number(new URL(capped.base).port)
  })
  afterAll(() => capped?.close())

  type Refused = { socket: Socket; isClosed: () => boolean }

  /**
   * A client refused (413) with its body still to send, which keeps its side open: once it has read the answer and
   * the server's end of stream, it goes on sending. A lingering server reads that; one that closed resets it.
   */
  function refusedStillSending(): Promise<Refused> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port: cappedPort, host: '127.0.0.1', allowHalfOpen: true })
      let received = ''
      let isClosed = false
      socket.on('error', () => {})
      socket.on('close', () => {
        isClosed = true
      })
      socket.on('connect', () => socket.write('POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1000000\r\n\r\nxxxx'))
      socket.on('data', (data) => {
        received += data.toString('latin1')
      })
      socket.on('end', () => {
        if (statusLine(received) !== 'HTTP/1.1 413 Payload Too Large') reject(new Error(`answered ${JSON.stringify(received)}`))
        const sending = setInterval(() => {
          if (socket.destroyed) clearInterval(sending)
          else socket.write('x'.repeat(1024))
        }, 10)
        socket.on('close', () => clearInterval(sending))
        resolve({ socket, isClosed: () => isClosed })
      })
    })
  }

  it('at most maxLingeringSockets linger: above it a refused connection is closed at once; a freed place is taken again', async () => {
    const first = await Promise.all(Array.from({ length: MAX_LINGERING }, () => refusedStillSending()))
    const over = await refusedStillSending()
    // Well within LINGER_MS: the lingering ones still read what their clients send, the one over the cap was reset.
    await sleep(300)
    expect(first.map((refused) => refused.isClosed())).toEqual(first.map(() => false))
    expect(over.isClosed()).toBe(true)

    // A client that closes its side frees its place at once.
    first[0]!.socket.destroy()
    await sleep(50)
    const next = await refusedStillSending()
    await sleep(300)
    expect(next.isClosed()).toBe(false)
    for (const refused of [...first, next]) refused.socket.destroy()
  })
})
