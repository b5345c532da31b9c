import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { RequestError } from '@hono/node-server'
import type { Logger } from 'pino'
import type { ErrorCode } from '../schemas/problem.ts'
import { PROBLEM_CONTENT_TYPE, problemBody, STATUS_BY_CODE } from './problem.ts'

/** What Node's HTTP parser or its timeouts refused, before any handler saw a request. */
type ClientError = Error & { code?: string }

/** The problem for a request Node refused itself: too slow, headers too large, or not HTTP/1.1 as it must be written. */
function problemOf(error: ClientError): { code: ErrorCode; detail: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        code: 'request_timeout',
        detail:
          'The request was not received in time: its headers must arrive within SWAPEAZI_HEADERS_TIMEOUT_MS and the whole request within SWAPEAZI_REQUEST_TIMEOUT_MS. Send it again at once, in one piece.',
      }
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'headers_too_large',
        detail: "The request's headers are larger than this server reads (16 KiB in all). Send it again with fewer or shorter headers.",
      }
    default:
      return {
        code: 'invalid_request',
        detail: `This is not a well-formed HTTP/1.1 request (${error.code ?? 'unparseable'}): check the request line, the headers' syntax and the body's framing (Content-Length or chunked, never both).`,
      }
  }
}

/**
 * Answers what Node's own parser and timeouts refuse (a `clientError`) as every other error is answered: a problem
 * with a stable code, `X-Request-Id`, `nosniff` and `no-store`, then the connection closed. Node's default writes a
 * bare status line. A peer that is gone (reset) gets nothing; neither does a connection whose response has begun.
 */
export function answerClientError(log: Logger): (error: ClientError, socket: Duplex) => void {
  return (error, socket) => {
    const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent === true) {
      socket.destroy()
      return
    }
    const { code, detail } = problemOf(error)
    writeProblemToSocket(socket, code, detail, log, error.code ?? error.message)
  }
}

/**
 * A problem written straight onto a connection no response object stands for (Node's parser refused the request,
 * or a CONNECT took the socket), with `X-Request-Id`, `nosniff` and `no-store`, then the connection closed.
 */
export function writeProblemToSocket(socket: Duplex, code: ErrorCode, detail: string, log: Logger, reason: string): void {
  const requestId = randomUUID()
  const status = STATUS_BY_CODE[code]
  const body = JSON.stringify(problemBody(code, detail, { requestId }))
  log.info({ event: 'client_error', request_id: requestId, status, reason }, 'client_error')
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      `content-type: ${PROBLEM_CONTENT_TYPE}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      'x-content-type-options: nosniff\r\n' +
      'cache-control: no-store\r\n' +
      'connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  )
}

/**
 * node-server's own refusals, of a request it cannot turn into a web Request (no `Host`, an invalid one, a backslash
 * in the path, `OPTIONS *`): the same problem as above, where node-server answers a bare 400. Anything else that
 * reaches here (a handler that threw before answering, which the app's own error handler should make impossible) is
 * our fault: 500 `internal_error`.
 */
export function answerRequestError(log: Logger): (error: unknown) => Response {
  return (error) => {
    const requestId = randomUUID()
    const isClients = error instanceof RequestError
    const reason = error instanceof Error ? error.message : String(error)
    const problem = isClients
      ? problemBody(
          'invalid_request',
          `This request cannot be read (${reason}): send a Host header naming the service, and a path that starts with / and holds no backslash.`,
          { requestId },
        )
      : problemBody(
          'internal_error',
          `The service failed to answer; nothing was charged. Retry, and quote this requestId (${requestId}) if it fails again.`,
          { requestId },
        )
    if (isClients) log.info({ event: 'client_error', request_id: requestId, status: 400, reason }, 'client_error')
    else log.error({ event: 'unhandled_error', request_id: requestId, err: error }, 'unhandled_error')
    return new Response(JSON.stringify(problem), {
      status: problem.status,
      headers: {
        'content-type': PROBLEM_CONTENT_TYPE,
        'x-request-id': requestId,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
        ...(isClients ? { connection: 'close' } : {}),
      },
    })
  }
}
