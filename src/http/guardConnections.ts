// What node:http does with a connection before (or instead of) handing the app a request: pipelined requests the
// client never reads, `Expect` headers, CONNECT, a second Host header, a transfer coding other than chunked, and the keep-alive of answers given during shutdown. Each refusal is
// a problem with a stable code, as every other answer is (src/http/answerClientError.ts writes them).
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import { writeProblemToSocket } from './answerClientError.ts'
import { BODY_TOO_LARGE_DETAIL, MAX_BODY_BYTES } from './createApp.ts'
import { PROBLEM_CONTENT_TYPE, problemBody, STATUS_BY_CODE } from './problem.ts'
import { randomUUID } from 'node:crypto'
import type { ErrorCode } from '../schemas/problem.ts'

/**
 * Most requests one connection may have in flight or answered but unread at once. Node reads a connection's
 * pipelined requests as they come and only stops reading once its answers back up, by which time one socket read
 * (about 2,800 small GETs) has each been handed to the app and answered into memory: an attacker who never reads
 * held gigabytes with a dozen connections (review of issue 15). No client needs more than a few in flight on one
 * connection; past this the connection is closed and the answers it never read are dropped.
 */
export const MAX_PIPELINED_REQUESTS = 32

export type ConnectionGuards = {
  /** The app's listener behind the pipelining bound and the shutdown's `Connection: close`. */
  listener: RequestListener
  /** From now on every answer closes its connection after it, those already under way included. */
  closeAfterAnswers(): void
}

/**
 * Wraps the app's request listener and answers, on `server`, what Node would otherwise answer bare or not at all:
 * `Expect: 100-continue` with a body over the limit is refused (413) before Node sends `100 Continue`, any other
 * `Expect` is 417 `expectation_failed`, and CONNECT is 400 (this is not a proxy).
 */
export function guardConnections(server: Server, listener: RequestListener, log: Logger): ConnectionGuards {
  const unanswered = new WeakMap<Duplex, number>()
  const open = new Set<ServerResponse>()
  const releaseOnClose = closesQueuedResponses()
  let isClosing = false

  const guarded: RequestListener = (request, response) => {
    const socket = request.socket
    releaseOnClose(socket, response)
    if (socket.destroyed) return
    const count = (unanswered.get(socket) ?? 0) + 1
    if (count > MAX_PIPELINED_REQUESTS) {
      log.info(
        { event: 'pipeline_overflow', limit: MAX_PIPELINED_REQUESTS, remote: socket.remoteAddress },
        'pipeline_overflow: a connection sent more requests than it read answers; closed',
      )
      socket.destroy()
      return
    }
    unanswered.set(socket, count)
    open.add(response)
    response.once('close', () => {
      open.delete(response)
      unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1)
    })
    if (isClosing) response.shouldKeepAlive = false
    if (hasSeveralHosts(request.rawHeaders)) {
      // RFC 9112 3.2: a request with more than one Host line is 400. Node keeps the first, and a proxy in front may
      // have read another: which name the request was for (the key portal's Origin check compares it) is unknown.
      answer(
        response,
        log,
        'invalid_request',
        'This request has more than one Host header: send exactly one, naming the service (RFC 9112, section 3.2).',
      )
      return
    }
    const codings = unservedTransferCodings(request.headers['transfer-encoding'])
    if (codings !== undefined) {
      // RFC 9112 6.1: a body sent with a coding the server does not decode cannot be read as sent. Node decodes
      // chunked and passes any other coding's bytes through as they are: `gzip, chunked` was read as if its body were
      // plain (and a proxy in front that decodes gzip reads another body than ours). RFC 9112 suggests 501; this
      // service answers no 5xx for what a client sent, so it is 400, and says what to send instead.
      answer(
        response,
        log,
        'invalid_request',
        `This request's body is sent with the transfer coding ${JSON.stringify(codings)}, and this service decodes none but chunked: send the body uncompressed, with Content-Length or Transfer-Encoding: chunked alone.`,
      )
      return
    }
    listener(request, response)
  }

  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers['content-length'])
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      answer(response, log, 'payload_too_large', BODY_TOO_LARGE_DETAIL, { limitBytes: MAX_BODY_BYTES })
      return
    }
    response.writeContinue()
    guarded(request, response)
  })
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    answer(
      response,
      log,
      'expectation_failed',
      `This service meets no Expect header but 100-continue (this one asks ${JSON.stringify(request.headers.expect ?? '')}): send the request again without it.`,
    )
  })
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    writeProblemToSocket(
      socket,
      'invalid_request',
      'CONNECT is not served: this is an HTTP API, not a proxy. Send GET or POST to a path of the service (GET /openapi.json lists them).',
      log,
      'CONNECT',
    )
  })

  return {
    listener: guarded,
    closeAfterAnswers() {
      isClosing = true
      // Answers not yet begun say `Connection: close` and Node closes after them; begun ones cannot say it any more.
      for (const response of open) if (!response.headersSent) response.shouldKeepAlive = false
    },
  }
}

/**
 * Node emits `close` on the answer a connection is writing when the connection closes, but not on the pipelined
 * answers queued behind it: those stayed open for ever, each holding its request and its buffered answer, and were
 * counted in flight at shutdown (3,000 overflowing connections held half a gigabyte; review of issue 15). Each
 * response is remembered with its connection; once the connection has closed (and Node has closed the answer it
 * was writing), every answer still open gets its `close`, so whatever waits on it lets go.
 */
function closesQueuedResponses(): (socket: Duplex, response: ServerResponse) => void {
  const bySocket = new WeakMap<Duplex, Set<ServerResponse>>()
  return (socket, response) => {
    let responses = bySocket.get(socket)
    if (responses === undefined) {
      const queued = new Set<ServerResponse>()
      responses = queued
      bySocket.set(socket, queued)
      socket.once('close', () =>
        setImmediate(() => {
          for (const left of queued) left.emit('close')
          queued.clear()
        }),
      )
    }
    const tracked = responses
    tracked.add(response)
    response.once('close', () => tracked.delete(response))
    // A request read after its connection had already closed (the rest of a pipelined burst): released the same way.
    if (socket.destroyed)
      setImmediate(() => {
        if (tracked.delete(response)) response.emit('close')
      })
  }
}

/**
 * The transfer codings of a Transfer-Encoding header (Node joins repeated lines with ", ") other than chunked, as
 * sent; undefined when there is none (no header, or chunked alone). Node's parser has already refused a header whose
 * last coding is not chunked.
 */
function unservedTransferCodings(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const others = header
    .split(',')
    .map((coding) => coding.trim())
    // Empty list elements are ignored (RFC 9110 5.6.1).
    .filter((coding) => coding !== '' && coding.toLowerCase() !== 'chunked')
  return others.length === 0 ? undefined : others.join(', ')
}

/** Whether the raw header lines (name, value, name, value…) name Host more than once. */
function hasSeveralHosts(rawHeaders: readonly string[]): boolean {
  let hosts = 0
  for (let k = 0; k < rawHeaders.length; k += 2) {
    const name = rawHeaders[k]
    if (name !== undefined && name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) return true
  }
  return false
}

/** A problem written on Node's response (outside the app), then the connection closed. */
function answer(response: ServerResponse, log: Logger, code: ErrorCode, detail: string, extra: Record<string, unknown> = {}): void {
  const requestId = randomUUID()
  const status = STATUS_BY_CODE[code]
  const body = JSON.stringify(problemBody(code, detail, { ...extra, requestId }))
  log.info({ event: 'client_error', request_id: requestId, status, reason: code }, 'client_error')
  response.shouldKeepAlive = false
  response.writeHead(status, {
    'content-type': PROBLEM_CONTENT_TYPE,
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    connection: 'close',
  })
  response.end(body)
}
