import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { request } from 'node:http'
import { createServer as createNetServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OperatorEndpoint, startOperatorEndpoint } from '../../src/app/startOperatorEndpoint.ts'
import { operatorClient, PING_TIMEOUT_MS } from '../../src/cli/operatorClient.ts'
import type { DataDirHolder } from '../../src/schemas/dataDirLock.ts'
import type { Store } from '../../src/store/createStore.ts'
import { DATA_DIR_LOCK_FILE, DataDirHeldError } from '../../src/store/dataDirLock.ts'
import { openStore } from '../../src/store/openStore.ts'
import { testDeps } from '../http/testApp.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'

const work = mkdtempSync(join(tmpdir(), 'swapeazi-operator-'))
// Longer than a Unix socket path can be (about 107 bytes): the socket goes under the OS temp dir instead.
const dataDir = join(work, 'a-data-directory-whose-path-is-too-long-for-a-unix-socket', 'so-the-socket-goes-elsewhere', 'data')
let store: Store
let endpoint: OperatorEndpoint | undefined

const holder = (): DataDirHolder => JSON.parse(readFileSync(join(dataDir, DATA_DIR_LOCK_FILE), 'utf8')) as DataDirHolder

/** A raw request to the socket: status and body. */
function raw(socketPath: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const sent = request({ socketPath, path, method: 'POST', headers, agent: false }, (response) => {
      let text = ''
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8')
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
    })
    sent.on('error', reject)
    sent.end(body)
  })
}

beforeAll(async () => {
  store = await openStore({ driver: 'pglite', dataDir, template: await migratedPgliteTemplate() })
  endpoint = await startOperatorEndpoint(testDeps({ store }))
}, 60_000)

afterAll(async () => {
  await endpoint?.close()
  await store.sql.close()
  rmSync(work, { recursive: true, force: true })
})

describe('the operator endpoint of a data directory holder', () => {
  it('listens on a 0600 socket under the OS temp dir when the data directory path is too long, and says so in the lock', () => {
    expect(Buffer.byteLength(join(dataDir, 'operator.sock'))).toBeGreaterThan(107)
    const socket = endpoint?.socket ?? ''
    expect(socket.startsWith(join(tmpdir(), 'swapeazi-'))).toBe(true)
    expect(statSync(socket).mode & 0o777).toBe(0o600)
    expect(statSync(join(socket, '..')).mode & 0o777).toBe(0o700)
    expect(holder()).toMatchObject({ pid: process.pid, socket })
  })

  it("runs the commands on the holder's own store: a key it revokes is on the live denylist at once", async () => {
    const operations = operatorClient(dataDir, holder())
    const issued = await operations.issueKey('pro')
    expect(issued).toMatchObject({ id: expect.stringMatching(/^key_[0-9a-f]{24}$/), tier: 'pro' })
    expect(await store.keys.isRevoked(issued.id)).toBe(false)
    expect(await operations.revokeKey(issued.key)).toEqual({ id: issued.id, revoked: true, alreadyRevoked: false, wasIssued: true })
    expect(await operations.revokeKey('key_0123456789abcdef0123abcd')).toMatchObject({ wasIssued: false, note: expect.any(String) })
    expect(await store.keys.isRevoked(issued.id)).toBe(true)
    await expect(operations.revokeKey('key_nothex')).rejects.toThrow('a key id looks like key_ followed by 24 hex characters')
    // An empty key: the same words as the command gives without a service, not the endpoint's schema.
    await expect(operations.revokeKey('')).rejects.toThrow(/^a key id looks like key_ followed by 24 hex characters$/)
  })

  it("refuses a request without the lock's token", async () => {
    const socket = endpoint?.socket ?? ''
    const body = JSON.stringify({ key: 'key_0123456789abcdef01234567' })
    for (const authorization of [undefined, 'Bearer not-the-token', `Bearer ${holder().token}x`])
      expect(await raw(socket, '/keys/revoke', authorization === undefined ? {} : { authorization }, body)).toEqual({
        status: 403,
        body: { detail: "the operator endpoint needs the token in the data directory's lock file" },
      })
    expect(await store.keys.isRevoked('key_0123456789abcdef01234567')).toBe(false)
    expect(await raw(socket, '/keys/remove', { authorization: `Bearer ${holder().token}` }, '{}')).toMatchObject({ status: 404 })
  })

  it('says within seconds that a holder does not answer (stopped, stuck, or a socket that accepts and never answers)', async () => {
    const silentDir = mkdtempSync(join(tmpdir(), 'swapeazi-silent-'))
    const silentPath = join(silentDir, 's')
    const accepted: Socket[] = []
    const silent = createNetServer((socket) => {
      accepted.push(socket)
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => silent.listen(silentPath, resolve))
    try {
      const started = Date.now()
      const failure = await operatorClient(dataDir, { ...holder(), socket: silentPath })
        .revokeKey('key_0123456789abcdef01234567')
        .then(
          () => 'answered',
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        )
      expect(Date.now() - started).toBeLessThan(PING_TIMEOUT_MS + 3_000)
      expect(failure).toBe(
        `SWAPEAZI_DATA_DIR ${dataDir} is held by ${holder().command} (pid ${process.pid}), but its operator endpoint ${silentPath} did not answer within 5 s: that process may be stopped or stuck; check it (ps -o stat -p ${process.pid}), restart it, or run the command again`,
      )
      expect(await store.keys.isRevoked('key_0123456789abcdef01234567')).toBe(false)
    } finally {
      for (const socket of accepted) socket.destroy()
      await new Promise<void>((resolve) => silent.close(() => resolve()))
      rmSync(silentDir, { recursive: true, force: true })
    }
  }, 20_000)

  it('refuses a holder without a socket as any second process is refused', async () => {
    await expect(operatorClient(dataDir, { ...holder(), pid: 4242, socket: null }).issueKey('free')).rejects.toThrow(DataDirHeldError)
  })

  // Review of issue 15: the import read its upload inside its transaction, which holds the embedded store's one
  // session, so a client that stalled mid-upload froze every statement of the service until it went away.
  it('spools an import while it arrives: a stalled upload holds up no statement, and an aborted one imports nothing', async () => {
    const lines = readFileSync(fileURLToPath(new URL('../intel/fixtures/observations.jsonl', import.meta.url)), 'utf8')
      .trim()
      .split('\n')
    const count = async (): Promise<number> =>
      Number((await store.sql.query<{ n: number }>('select count(*)::int as n from observations'))[0]?.n)
    const before = await count()
    const sent = request({
      socketPath: endpoint?.socket ?? '',
      path: '/intel/import',
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${holder().token}`, 'content-type': 'application/x-ndjson' },
    })
    sent.on('error', () => {})
    // Ten whole lines, then the client stalls (a slow pipe, a suspended process).
    sent.write(`${lines.slice(0, 10).join('\n')}\n`)
    await sleep(300)
    const started = Date.now()
    await store.sql.query('select count(*) from swaps')
    expect(Date.now() - started).toBeLessThan(1_000)
    sent.destroy()
    await sleep(300)
    expect(await count()).toBe(before)
    expect(readdirSync(dataDir).filter((name) => name.startsWith('.import-'))).toEqual([])
    // A whole upload imports, through the same spool.
    const imported = await operatorClient(dataDir, holder()).importObservations(Readable.from([`${lines.join('\n')}\n`]))
    expect(imported.imported).toBeGreaterThan(0)
    expect(await count()).toBe(before + imported.imported)
    expect(readdirSync(dataDir).filter((name) => name.startsWith('.import-'))).toEqual([])
  })

  // Review of issue 15: a holder killed with its socket under the OS temp dir left that directory behind for good.
  it("removes the private socket directory a killed holder left under the OS temp dir, once it takes that holder's lock over", async () => {
    const otherDir = join(work, 'a-data-directory-whose-path-is-too-long-for-a-unix-socket', 'so-the-socket-goes-elsewhere', 'other')
    mkdirSync(otherDir, { recursive: true, mode: 0o700 })
    const left = mkdtempSync(join(tmpdir(), 'swapeazi-'))
    writeFileSync(join(left, 'operator.sock'), '')
    const child = spawn(process.execPath, ['-e', ''])
    await new Promise((resolve) => child.once('exit', resolve))
    const stale: DataDirHolder = {
      pid: child.pid ?? 0,
      startedAt: new Date().toISOString(),
      command: 'swapeazi serve',
      token: 'a-killed-holders-token-0123',
      socket: join(left, 'operator.sock'),
      url: null,
    }
    writeFileSync(join(otherDir, DATA_DIR_LOCK_FILE), JSON.stringify(stale), { mode: 0o600 })
    const other = await openStore({ driver: 'pglite', dataDir: otherDir, template: await migratedPgliteTemplate() })
    const otherEndpoint = await startOperatorEndpoint(testDeps({ store: other }))
    try {
      expect(existsSync(left)).toBe(false)
      expect(otherEndpoint?.socket.startsWith(join(tmpdir(), 'swapeazi-'))).toBe(true)
    } finally {
      await otherEndpoint?.close()
      await other.sql.close()
    }
  }, 60_000)

  it('removes its socket and its mention in the lock file when it closes', async () => {
    const socket = endpoint?.socket ?? ''
    await endpoint?.close()
    endpoint = undefined
    expect(existsSync(socket)).toBe(false)
    expect(existsSync(join(socket, '..'))).toBe(false)
    expect(holder()).toMatchObject({ pid: process.pid, socket: null })
  })
})
