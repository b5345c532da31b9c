import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { requestHeader } from './requestHeader.ts'
import { setResponseHeader } from './setResponseHeader.ts'

export type LimitBodyRefusals = {
  /** The answer to a body over the limit (413). */
  tooLarge(c: Context): Response
  /** The answer to a body on GET or HEAD (400). */
  bodyWithoutMethod(c: Context): Response
}

/** How long a refused request's connection is drained after its answer before it is destroyed. */
export const LINGER_MS = 2_000
/** How much of a refused body is drained (read and discarded) after its answer before the connection is destroyed. */
export const LINGER_BYTES = 8 * 1024 * 1024
/**
 * How many refused connections linger at once, by default. Each holds a socket for up to LINGER_MS: above this many,
 * a refused connection is closed at once (its client may then lose the answer, as every client did before the linger).
 */
export const LINGER_MAX_SOCKETS = 64
/** How often one sweep counts every lingering connection's bytes against LINGER_BYTES, and its age against LINGER_MS. */
const LINGER_SWEEP_MS = 50

type Lingering = { socket: Socket; fromBytes: number; startedMs: number; stop(): void }

/** Lingers the connections of refused requests, at most `maxSockets` at once; see linger. */
type Lingerer = { linger(incoming: IncomingMessage): void }

/**
 * A lingering close for a connection whose body was refused. Node destroys a `Connection: close` socket as soon as the
 * answer is written (`destroySoon`); a client still sending its body then has data arriving at a closed socket, and
 * the kernel answers it with a reset, which can destroy the answer before the client reads it (a client that reads
 * only once it has sent its body always loses it). Instead the write side is ended after the answer (the client reads
 * the answer, then end of stream) and what still arrives is read and discarded until the client closes its side, or
 * for LINGER_MS, or LINGER_BYTES, whichever comes first; then the socket is destroyed. One sweep, running only while a
 * connection lingers, checks them all, so many refusals at once cost one timer, and no more than `maxSockets` linger.
 */
function createLingerer(maxSockets: number): Lingerer {
  const lingering = new Set<Lingering>()
  let sweeper: NodeJS.Timeout | undefined
  // Node's parser reads the socket natively and drops a refused body unseen (no data events): the bytes read off the
  // socket are counted instead, at each sweep, so LINGER_BYTES and LINGER_MS are exceeded by at most a sweep's worth.
  const sweep = (): void => {
    const nowMs = Date.now()
    for (const entry of lingering)
      if (entry.socket.bytesRead - entry.fromBytes > LINGER_BYTES || nowMs - entry.startedMs >= LINGER_MS) entry.stop()
  }
  const add = (entry: Lingering): void => {
    lingering.add(entry)
    if (sweeper !== undefined) return
    sweeper = setInterval(sweep, LINGER_SWEEP_MS)
    sweeper.unref()
  }
  const remove = (entry: Lingering): void => {
    lingering.delete(entry)
    if (lingering.size > 0 || sweeper === undefined) return
    clearInterval(sweeper)
    sweeper = undefined
  }
  return {
    linger(incoming) {
      const socket: Socket = incoming.socket
      // The refused body is discarded, never buffered: the request stream, which nobody reads now, is kept flowing
      // (the server pauses the socket while it is not, and a stream that read part of the body pauses it when it stops).
      const drain = (): void => {
        incoming.resume()
        socket.resume()
      }
      const closeAtOnce = socket.destroySoon
      let entry: Lingering | undefined
      socket.destroySoon = function lingeringClose(): void {
        if (entry !== undefined) {
          drain()
          return
        }
        // Too many lingering already: this one is closed as Node closes it, so that they hold a bounded number of sockets.
        if (lingering.size >= maxSockets) {
          closeAtOnce.call(socket)
          return
        }
        drain()
        const current: Lingering = {
          socket,
          fromBytes: socket.bytesRead,
          startedMs: Date.now(),
          stop: () => {
            remove(current)
            incoming.off('pause', drain)
            socket.destroy()
          },
        }
        entry = current
        add(current)
        incoming.on('pause', drain)
        socket.once('end', current.stop)
        socket.once('close', current.stop)
        socket.end()
      }
    },
  }
}

/** Answers a refusal and closes the connection after it, so the body that was refused is never read. */
function refuseAndClose(c: Context, answer: (c: Context) => Response, lingerer: Lingerer): Response {
  // Node's server ends the socket once a response with `Connection: close` is written; otherwise it would read the
  // rest of the body to reuse the connection (a GET's without any bound). It ends it lingering: see createLingerer.
  setResponseHeader(c, 'connection', 'close')
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming
  if (incoming?.socket !== undefined && incoming.socket !== null) lingerer.linger(incoming)
  return answer(c)
}

export type LimitBodyOptions = {
  /** How many refused connections linger at once (LINGER_MAX_SOCKETS); above it, one is closed at once. */
  maxLingeringSockets?: number
}

/**
 * DESIGN 6 body limits. A declared Content-Length is checked from the header alone, which keeps
 * @hono/node-server's direct body read (no web stream per request); a chunked body without one is counted while it
 * streams, through Hono's bodyLimit. GET and HEAD take no body: one declared (a Content-Length above 0, or a
 * Transfer-Encoding) is refused before anything reads it. Both refusals close the connection, lingering: what the
 * client still sends is drained for at most LINGER_MS and LINGER_BYTES so that it reads the answer, on at most
 * LINGER_MAX_SOCKETS connections at once.
 */
export function limitBody(maxBytes: number, refusals: LimitBodyRefusals, options: LimitBodyOptions = {}): MiddlewareHandler {
  const lingerer = createLingerer(options.maxLingeringSockets ?? LINGER_MAX_SOCKETS)
  const tooLarge = (c: Context): Response => refuseAndClose(c, refusals.tooLarge, lingerer)
  const streaming = bodyLimit({ maxSize: maxBytes, onError: tooLarge })
  return async function limitBodyMiddleware(c, next) {
    const declared = requestHeader(c, 'content-length')
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      if (Number(declared ?? 0) > 0 || requestHeader(c, 'transfer-encoding') !== undefined)
        return refuseAndClose(c, refusals.bodyWithoutMethod, lingerer)
      return next()
    }
    if (declared === undefined) return streaming(c, next)
    if (Number(declared) > maxBytes) return tooLarge(c)
    return next()
  }
}
