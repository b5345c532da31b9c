import { randomBytes, timingSafeEqual } from 'node:crypto'
import { chmodSync, createReadStream, createWriteStream, lstatSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { finished, pipeline } from 'node:stream/promises'
import type { Logger } from 'pino'
import type * as z from 'zod'
import { ObservationImportError } from '../intel/importObservations.ts'
import { IssueKeyRequest, KeyUsageRequest, RevokeKeyRequest } from '../schemas/operator.ts'
import { type DataDirLock, OPERATOR_SOCKET_FILE } from '../store/dataDirLock.ts'
import { OperatorCommandError, type OperatorOperations, type OperatorOperationsDeps, operatorOperations } from './operatorOperations.ts'

/** The socket's name in the data directory. */
export { OPERATOR_SOCKET_FILE }
/** The longest Unix socket path every platform binds (sun_path: 108 bytes on Linux, 104 on macOS, with the NUL). */
const MAX_SOCKET_PATH_BYTES = 103
const MAX_JSON_BODY_BYTES = 64 * 1024
/** A command's connection idle this long (a client stopped mid-upload) is closed. */
const IDLE_MS = 60_000
/** At shutdown, how long commands in flight get before their connections are closed. */
const CLOSE_GRACE_MS = 5_000
/** An import's upload, spooled in the data directory while it arrives: `.import-` and random hex. */
const SPOOL_PREFIX = '.import-'

export type OperatorEndpoint = {
  /** Where it listens (also in the lock file). */
  socket: string
  /** Stops listening, lets the commands in flight finish, removes the socket and its mention in the lock file. */
  close(): Promise<void>
}

/**
 * The operator endpoint of the process that holds `deps.store`'s data directory (issue 15 item 1); undefined for a
 * store in memory or on PostgreSQL, which every process opens itself. HTTP over a Unix socket, mode 0600, in the data directory (or, when
 * that path is too long for a socket, in a private directory under the OS temp dir), recorded in the lock file.
 * `swapeazi keys` and `swapeazi intel` find it there and have this process run them on its own live store, so a
 * revoked key is refused by this process before the command reports success. Each request carries the lock's token,
 * which only the lock file's readers (its owner) know.
 */
export async function startOperatorEndpoint(deps: OperatorOperationsDeps): Promise<OperatorEndpoint | undefined> {
  const lock = deps.store.sql.dataDirLock
  if (lock === undefined) return undefined
  try {
    return await listenOnSocket(operatorOperations(deps), lock, deps.log)
  } catch (error) {
    throw new Error(
      `the operator endpoint for SWAPEAZI_DATA_DIR ${lock.dataDir} could not be started (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    )
  }
}

async function listenOnSocket(operations: OperatorOperations, lock: DataDirLock, log: Logger): Promise<OperatorEndpoint> {
  const token = Buffer.from(lock.holder().token)
  const server = createServer({ headersTimeout: 10_000, requestTimeout: 0 }, (request, response) => {
    handle(operations, token, lock.dataDir, request, response).catch(async (error: unknown) => {
      log.error({ event: 'operator_command_failed', err: error }, 'operator_command_failed')
      await answer(request, response, 500, {
        detail: `the service failed to run the command: ${error instanceof Error ? error.message : String(error)}`,
      })
    })
  })
  server.setTimeout(IDLE_MS, (socket) => socket.destroy())
  // Spooled uploads a holder that was killed left behind (this process holds the lock now, so they are no one's).
  for (const name of readdirSync(lock.dataDir)) if (name.startsWith(SPOOL_PREFIX)) rmSync(join(lock.dataDir, name), { force: true })
  removeLeftSocket(lock)
  const place = socketPlace(lock.dataDir)
  // Bound in a private (0700) directory and made 0600 before it is moved into place, so no other user can connect
  // while it is still open to them.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(place.bindPath, () => {
      server.off('error', reject)
      resolve()
    })
  })
  try {
    chmodSync(place.bindPath, 0o600)
    if (place.bindPath !== place.socket) {
      renameSync(place.bindPath, place.socket)
      rmSync(place.privateDir, { recursive: true, force: true })
    }
    lock.publish({ socket: place.socket })
  } catch (error) {
    // Nothing is left listening, bound or half moved when the start fails here.
    await new Promise((resolve) => server.close(resolve))
    rmSync(place.socket, { force: true })
    rmSync(place.privateDir, { recursive: true, force: true })
    throw error
  }
  log.info({ event: 'operator_endpoint', socket: place.socket }, 'operator endpoint listening')
  let closing: Promise<void> | undefined
  return {
    socket: place.socket,
    close() {
      closing ??= (async () => {
        lock.publish({ socket: null })
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeIdleConnections()
          // A command still uploading is cut (an import is all or nothing: what it began rolls back).
          setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref()
        })
        rmSync(place.socket, { force: true })
        if (place.bindPath === place.socket) rmSync(place.privateDir, { recursive: true, force: true })
      })()
      return closing
    },
  }
}

/**
 * A holder killed with its socket under the OS temp dir (a data directory path too long for one) left that private
 * directory behind: removed once its lock has been taken over, if it is still a `swapeazi-` directory of this user's
 * holding only that socket.
 */
function removeLeftSocket(lock: DataDirLock): void {
  const left = lock.previous?.socket
  if (left === undefined || left === null || dirname(left) === lock.dataDir) return
  const privateDir = dirname(left)
  try {
    const stat = lstatSync(privateDir)
    const isOurs = stat.isDirectory() && stat.uid === process.geteuid?.() && basename(privateDir).startsWith('swapeazi-')
    if (isOurs && readdirSync(privateDir).every((name) => name === OPERATOR_SOCKET_FILE))
      rmSync(privateDir, { recursive: true, force: true })
  } catch {}
}

type SocketPlace = { socket: string; bindPath: string; privateDir: string }

function socketPlace(dataDir: string): SocketPlace {
  const inDataDir = join(dataDir, OPERATOR_SOCKET_FILE)
  // mkdtemp's six random characters and `/s`: the longest path bound.
  if (Buffer.byteLength(join(dataDir, '.operator-XXXXXX', 's')) <= MAX_SOCKET_PATH_BYTES) {
    // What a holder that was killed left (this process holds the lock now, so it is no one's).
    for (const name of readdirSync(dataDir))
      if (name === OPERATOR_SOCKET_FILE || name.startsWith('.operator-')) rmSync(join(dataDir, name), { recursive: true, force: true })
    const privateDir = mkdtempSync(join(dataDir, '.operator-'))
    return { socket: inDataDir, bindPath: join(privateDir, 's'), privateDir }
  }
  const privateDir = mkdtempSync(join(Buffer.byteLength(tmpdir()) < 60 ? tmpdir() : '/tmp', 'swapeazi-'))
  const socket = join(privateDir, OPERATOR_SOCKET_FILE)
  return { socket, bindPath: socket, privateDir }
}

async function handle(
  operations: OperatorOperations,
  token: Buffer,
  spoolDir: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const presented = Buffer.from((request.headers.authorization ?? '').replace(/^Bearer /, ''))
  if (presented.length !== token.length || !timingSafeEqual(presented, token)) {
    await answer(request, response, 403, { detail: "the operator endpoint needs the token in the data directory's lock file" })
    return
  }
  const route = `${request.method} ${request.url}`
  try {
    switch (route) {
      case 'GET /ping':
        // What an operator command asks first, with a short deadline: a holder that is stopped or stuck is said so.
        await answer(request, response, 200, { ok: true })
        return
      case 'POST /keys/issue':
        await answer(request, response, 200, await operations.issueKey((await jsonBody(request, IssueKeyRequest)).tier))
        return
      case 'POST /keys/revoke':
        await answer(request, response, 200, await operations.revokeKey((await jsonBody(request, RevokeKeyRequest)).key))
        return
      case 'POST /keys/usage':
        await answer(request, response, 200, await operations.keyUsage(await jsonBody(request, KeyUsageRequest)))
        return
      case 'POST /intel/import':
        await answer(request, response, 200, await importSpooled(operations, spoolDir, request))
        return
      default:
        await answer(request, response, 404, {
          detail: `the operator endpoint has no ${route}: is this swapeazi the same version as the service?`,
        })
    }
  } catch (error) {
    if (!(error instanceof OperatorCommandError || error instanceof ObservationImportError)) throw error
    await answer(request, response, 422, { detail: error.message })
  }
}

/**
 * An import's upload is written to a file of its own (0600, in the data directory) as it arrives, and imported from
 * it once whole: the import's transaction, which holds the embedded store's one session, then reads at disk speed,
 * and a client that stalls mid-upload stalls only itself, never the service's other statements.
 */
async function importSpooled(operations: OperatorOperations, spoolDir: string, request: IncomingMessage) {
  const spool = join(spoolDir, `${SPOOL_PREFIX}${randomBytes(8).toString('hex')}`)
  try {
    await pipeline(request, createWriteStream(spool, { flags: 'wx', mode: 0o600 })).catch(() => {
      throw new OperatorCommandError('the upload ended before the file did: nothing was imported; run the command again')
    })
    return await operations.importObservations(createReadStream(spool))
  } finally {
    rmSync(spool, { force: true })
  }
}

async function jsonBody<T>(request: IncomingMessage, schema: z.ZodType<T>): Promise<T> {
  let text = ''
  for await (const chunk of request) {
    text += String(chunk)
    if (text.length > MAX_JSON_BODY_BYTES) throw new OperatorCommandError('the operator request is too large')
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new OperatorCommandError('the operator request is not JSON')
  }
  const parsed = schema.safeParse(json)
  if (!parsed.success) throw new OperatorCommandError(`the operator request is not valid: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
  return parsed.data
}

/**
 * Answers once the request's body has been read to its end (a refused import's rest is discarded): a client still
 * sending when the server closes would see EPIPE instead of the answer.
 */
async function answer(request: IncomingMessage, response: ServerResponse, status: number, body: unknown): Promise<void> {
  if (!request.readableEnded) {
    request.resume()
    await finished(request).catch(() => {})
  }
  if (response.headersSent) {
    response.destroy()
    return
  }
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}
