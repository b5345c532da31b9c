import { lstatSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import type * as z from 'zod'
import type { OperatorOperations } from '../app/operatorOperations.ts'
import type { DataDirHolder } from '../schemas/dataDirLock.ts'
import { IssuedApiKey } from '../schemas/keys.ts'
import { ImportedObservations, KeyUsage, OperatorRefusal, RevokedKey } from '../schemas/operator.ts'
import { DATA_DIR_LOCK_FILE, DataDirHeldError } from '../store/dataDirLock.ts'

/**
 * The operator commands run by the live process that holds `dataDir` (`holder`, from its lock file), through its
 * operator endpoint (src/app/startOperatorEndpoint.ts). A holder that serves none (an operator command of its own,
 * or one still starting) is refused as any second process is, with DataDirHeldError.
 */
export function operatorClient(dataDir: string, holder: DataDirHolder): OperatorOperations {
  const call = async <T>(path: string, schema: z.ZodType<T>, body: string | Readable): Promise<T> => {
    const socket = holder.socket
    if (socket === null) throw new DataDirHeldError(dataDir, holder)
    checkSocket(dataDir, holder, socket)
    // A holder that is stopped (SIGSTOP), stuck, or a socket that accepts and never answers: said within seconds.
    await send(dataDir, holder, socket, '/ping', undefined, PING_TIMEOUT_MS)
    const { status, text } = await send(dataDir, holder, socket, path, body, typeof body === 'string' ? ANSWER_TIMEOUT_MS : undefined)
    const json = parseJson(text)
    if (status === 200) {
      const parsed = schema.safeParse(json)
      if (parsed.success) return parsed.data
    }
    const refusal = OperatorRefusal.safeParse(json)
    throw new Error(
      refusal.success
        ? refusal.data.detail
        : `${describe(holder)} answered HTTP ${status} on its operator endpoint ${socket}: run the command again`,
    )
  }
  return {
    issueKey: (tier) => call('/keys/issue', IssuedApiKey, JSON.stringify({ tier })),
    revokeKey: (key) => call('/keys/revoke', RevokedKey, JSON.stringify({ key })),
    keyUsage: (request) => call('/keys/usage', KeyUsage, JSON.stringify(request)),
    importObservations: (input) => call('/intel/import', ImportedObservations, input),
  }
}

const describe = (holder: DataDirHolder): string => `${holder.command} (pid ${holder.pid})`

/** How long the holder has to answer the ping that precedes every command. */
export const PING_TIMEOUT_MS = 5_000
/**
 * How long a key command may go without a byte from the holder (an import, whose holder may work through a large
 * file before it answers, has none once the ping has shown the holder answers).
 */
const ANSWER_TIMEOUT_MS = 30_000

/**
 * The socket must be one the holder made: a socket, owned by the lock file's owner, who is this user (the data
 * directory is this user's alone: checkDataDirOwner). In the OS temp dir another user could otherwise put one there
 * first and be sent keys.
 */
function checkSocket(dataDir: string, holder: DataDirHolder, socket: string): void {
  let isOurs = false
  try {
    const stat = lstatSync(socket)
    const lockOwner = statSync(join(dataDir, DATA_DIR_LOCK_FILE)).uid
    const euid = process.geteuid?.()
    isOurs = stat.isSocket() && stat.uid === lockOwner && (euid === undefined || lockOwner === euid)
  } catch {}
  if (!isOurs)
    throw new Error(
      `SWAPEAZI_DATA_DIR ${dataDir} is held by ${describe(holder)}, but its operator endpoint ${socket} is missing or not its own: stop that process and run the command again`,
    )
}

function send(
  dataDir: string,
  holder: DataDirHolder,
  socket: string,
  path: string,
  /** Undefined: a GET with no body. */
  body: string | Readable | undefined,
  /** How long the connection may go without a byte from the holder; undefined: no limit. */
  idleTimeoutMs?: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        socketPath: socket,
        path,
        method: body === undefined ? 'GET' : 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${holder.token}`,
          ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'application/json' : 'application/x-ndjson' }),
        },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
        response.on('error', reject)
      },
    )
    if (idleTimeoutMs !== undefined)
      request.setTimeout(idleTimeoutMs, () => {
        const what = path === '/ping' ? 'its operator endpoint' : `its operator endpoint, after the command was sent,`
        request.destroy(
          new Error(
            `SWAPEAZI_DATA_DIR ${dataDir} is held by ${describe(holder)}, but ${what} ${socket} did not answer within ${idleTimeoutMs / 1000} s: that process may be stopped or stuck; check it (ps -o stat -p ${holder.pid}), restart it, or run the command again${path === '/ping' ? '' : ' (issuing may have issued a key nobody saw; revoking again is harmless)'}`,
          ),
        )
      })
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.message.startsWith(`SWAPEAZI_DATA_DIR ${dataDir} is held by`)) {
        reject(error)
        return
      }
      const code = error.code ?? error.message
      reject(
        new Error(
          code === 'ECONNREFUSED' || code === 'ENOENT'
            ? `SWAPEAZI_DATA_DIR ${dataDir} is held by ${describe(holder)}, whose operator endpoint ${socket} does not answer (${code}): it may be stopping; run the command again, or stop that process`
            : `the operator endpoint of ${describe(holder)} failed before it answered (${code}): run the command again (issuing may have issued a key nobody saw; revoking again is harmless)`,
          { cause: error },
        ),
      )
    })
    if (body === undefined) request.end()
    else if (typeof body === 'string') request.end(body)
    else {
      body.on('error', (error) => request.destroy(error))
      body.pipe(request)
    }
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
