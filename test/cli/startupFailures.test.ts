import { execFileSync } from 'node:child_process'
import { cp, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresSql } from '../../src/store/openPostgresSql.ts'
import { closedPort } from '../support/closedPort.ts'
import { type CliRun, runCliInProcess } from '../support/runCliInProcess.ts'
import { TEST_DATABASE_URL } from '../store/storeDrivers.ts'

const MANIFEST = fileURLToPath(new URL('../../manifest/', import.meta.url))
const BASE_ENV = { SWAPEAZI_HOST: '127.0.0.1', SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_LOG_LEVEL: 'silent' }

/** `swapeazi serve` failed at start: exit 1, and stderr is exactly one line, no stack trace. Returns that line. */
function failureLine(run: CliRun): string {
  expect(run.code).toBe(1)
  expect(run.stdout).toBe('')
  expect(run.stderr).toMatch(/^swapeazi: [^\n]+\n$/)
  expect(run.stderr).not.toMatch(/\n\s+at /)
  return run.stderr.trimEnd()
}

/** Runs `serve` in process; a start that does not fail within `withinMs` fails the test rather than hanging it. */
async function serveFails(env: Record<string, string>, withinMs = 10_000): Promise<string> {
  const started = Date.now()
  const run = await runCliInProcess(['serve'], { ...BASE_ENV, ...env })
  expect(Date.now() - started).toBeLessThan(withinMs)
  return failureLine(run)
}

/** A TCP listener on loopback that accepts connections and never says a word. */
async function silentListener(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

describe('swapeazi serve: a start-up failure is one line naming the variable to change, exit 1, never a hang', () => {
  let holder: Server
  let heldPort = 0
  let dir = ''

  beforeAll(async () => {
    holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    const address = holder.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    heldPort = address.port
    dir = await mkdtemp(join(tmpdir(), 'swapeazi-startup-'))
  })

  afterAll(async () => {
    await new Promise<void>((resolve) => holder.close(() => resolve()))
    await rm(dir, { recursive: true, force: true })
  })

  it('a port in use (EADDRINUSE) names SWAPEAZI_PORT', async () => {
    expect(await serveFails({ SWAPEAZI_PORT: String(heldPort) })).toBe(
      `swapeazi: port ${heldPort} on 127.0.0.1 is already in use (EADDRINUSE): stop the process that holds it, or set SWAPEAZI_PORT to a free port`,
    )
  }, 30_000)

  it('a host that is not an address of this machine (EADDRNOTAVAIL) names SWAPEAZI_HOST', async () => {
    // Binding sends nothing: 192.0.2.1 is a documentation address that no interface here has.
    expect(await serveFails({ SWAPEAZI_HOST: '192.0.2.1', SWAPEAZI_PORT: '0' })).toBe(
      "swapeazi: SWAPEAZI_HOST 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL): set SWAPEAZI_HOST to 127.0.0.1, 0.0.0.0 or one of this machine's addresses",
    )
  }, 30_000)

  it('a catalogue directory that is missing, or holds a file that is not JSON, names the file and SWAPEAZI_MANIFEST_DIR', async () => {
    const missing = join(dir, 'no-such-manifest')
    expect(await serveFails({ SWAPEAZI_MANIFEST_DIR: missing, SWAPEAZI_PORT: '0' })).toBe(
      `swapeazi: catalogue error: ${missing}/chains.json: (file): ENOENT: no such file or directory, open '${missing}/chains.json'; correct the file, or set SWAPEAZI_MANIFEST_DIR to a directory holding the whole catalogue`,
    )
    const broken = join(dir, 'broken-manifest')
    await cp(MANIFEST, broken, { recursive: true })
    await writeFile(join(broken, 'tokens.json'), '{"tokens": [')
    expect(await serveFails({ SWAPEAZI_MANIFEST_DIR: broken, SWAPEAZI_PORT: '0' })).toMatch(
      new RegExp(
        `^swapeazi: catalogue error: ${broken}/tokens\\.json: \\(file\\): .*JSON.*; correct the file, or set SWAPEAZI_MANIFEST_DIR to a directory holding the whole catalogue$`,
      ),
    )
  }, 30_000)

  it('a catalogue file that is a FIFO or too large is refused at once (not read until something writes to it)', async () => {
    const odd = join(dir, 'fifo-manifest')
    await cp(MANIFEST, odd, { recursive: true })
    await rm(join(odd, 'venues.json'))
    execFileSync('mkfifo', [join(odd, 'venues.json')])
    expect(await serveFails({ SWAPEAZI_MANIFEST_DIR: odd, SWAPEAZI_PORT: '0' })).toBe(
      `swapeazi: catalogue error: ${odd}/venues.json: (file): is not a regular file (a directory, FIFO or device cannot hold a catalogue file); correct the file, or set SWAPEAZI_MANIFEST_DIR to a directory holding the whole catalogue`,
    )
    await rm(join(odd, 'venues.json'))
    await writeFile(join(odd, 'venues.json'), '')
    await truncate(join(odd, 'venues.json'), 17 * 2 ** 20)
    expect(await serveFails({ SWAPEAZI_MANIFEST_DIR: odd, SWAPEAZI_PORT: '0' })).toBe(
      `swapeazi: catalogue error: ${odd}/venues.json: (file): is 17825792 bytes, more than the 16 MiB allowed for a catalogue file; correct the file, or set SWAPEAZI_MANIFEST_DIR to a directory holding the whole catalogue`,
    )
  }, 30_000)

  it('a sanctions list that is missing or does not match the schema names the file and SWAPEAZI_SANCTIONS_FILE', async () => {
    const missing = join(dir, 'no-such-list.json')
    expect(await serveFails({ SWAPEAZI_SANCTIONS_FILE: missing, SWAPEAZI_PORT: '0' })).toBe(
      `swapeazi: sanctions list error: ${missing}: (file): ENOENT: no such file or directory, open '${missing}'; correct the file, or set SWAPEAZI_SANCTIONS_FILE to a readable OFAC list (default: sanctioned-addresses.json in SWAPEAZI_MANIFEST_DIR)`,
    )
    const wrong = join(dir, 'wrong-list.json')
    await writeFile(wrong, '{"addresses": 42}')
    expect(await serveFails({ SWAPEAZI_SANCTIONS_FILE: wrong, SWAPEAZI_PORT: '0' })).toMatch(
      new RegExp(`^swapeazi: sanctions list error: ${wrong}: .+; correct the file, or set SWAPEAZI_SANCTIONS_FILE to a readable OFAC list`),
    )
  }, 30_000)

  it('a PostgreSQL that refuses connections (ECONNREFUSED) names DATABASE_URL', async () => {
    const port = await closedPort()
    expect(await serveFails({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/swapeazi`, SWAPEAZI_PORT: '0' })).toBe(
      `swapeazi: PostgreSQL at 127.0.0.1:${port}/swapeazi refused the connection (ECONNREFUSED): start PostgreSQL there, or correct the host and port in DATABASE_URL`,
    )
  }, 30_000)

  it('a PostgreSQL address that accepts and never answers gives up after the connect timeout, naming DATABASE_URL', async () => {
    const silent = await silentListener()
    try {
      const started = Date.now()
      const failure = await openPostgresSql(`postgres://postgres@127.0.0.1:${silent.port}/swapeazi`, { connectTimeoutMs: 500 }).then(
        () => 'connected',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      )
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(failure).toBe(
        `PostgreSQL at 127.0.0.1:${silent.port}/swapeazi did not answer within 0.5 s: check that it runs and is reachable from here, or correct DATABASE_URL`,
      )
    } finally {
      await silent.close()
    }
  }, 30_000)

  describe.skipIf(TEST_DATABASE_URL === undefined)('on a real PostgreSQL', () => {
    const url = new URL(TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
    const where = `${url.hostname}:${url.port || '5432'}`

    it('an unknown database (3D000) names DATABASE_URL', async () => {
      const unknown = new URL(url)
      unknown.pathname = '/swapeazi_no_such_database'
      expect(await serveFails({ DATABASE_URL: unknown.toString(), SWAPEAZI_PORT: '0' })).toBe(
        `swapeazi: PostgreSQL at ${where}/swapeazi_no_such_database has no such database (3D000: database "swapeazi_no_such_database" does not exist): create it, or correct the database name in DATABASE_URL`,
      )
    }, 30_000)

    it('credentials it refuses (28000 or 28P01) name DATABASE_URL', async () => {
      const stranger = new URL(url)
      stranger.username = 'swapeazi_no_such_role'
      stranger.password = 'wrong'
      expect(await serveFails({ DATABASE_URL: stranger.toString(), SWAPEAZI_PORT: '0' })).toMatch(
        new RegExp(
          `^swapeazi: PostgreSQL at ${where}${url.pathname} refused the credentials \\((28000|28P01): .*swapeazi_no_such_role.*\\): correct the user and password in DATABASE_URL$`,
        ),
      )
    }, 30_000)
  })

  it('an empty variable counts as unset: SWAPEAZI_BASE_URL= does not stop the service', async () => {
    // The port is held, so the start gets as far as listening and stops there: past the configuration.
    expect(await serveFails({ SWAPEAZI_BASE_URL: '', SWAPEAZI_PUBLIC_URL: '', DATABASE_URL: '', SWAPEAZI_PORT: String(heldPort) })).toMatch(
      /EADDRINUSE/,
    )
  }, 30_000)
})
