import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { compiledCli, inputsHash } from '../../scripts/compiledCli.js'
import { verifyApiKey } from '../../src/auth/apiKey.ts'
import { closedPort } from '../support/closedPort.ts'

const run = promisify(execFile)
const BIN = fileURLToPath(new URL('../../bin/swapeazi.js', import.meta.url))
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SECRET = 'operator-key-secret-operator-key-secret'

// The CLI's commands are tested in-process (src/cli/runCli.ts: test/keyCommands.test.ts, test/intel/,
// test/contracts/routerCommands.test.ts, test/cli/startupFailures.test.ts). These spawn the binary: that
// bin/swapeazi.js runs the CLI compiled from the sources as they are now (scripts/compiledCli.js) from any
// directory, hands it argv and the environment, prints on stdout and exits 0, and that a start-up failure is one line
// and exit code 1 from the real process, with no stack trace.
// bin/swapeazi-mcp.js has its own, test/mcp/hostConfig.test.ts.
describe('bin/swapeazi.js', () => {
  it('runs `keys issue` from a foreign working directory: one JSON line on stdout, a key signed with the configured secret, exit 0', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'swapeazi-bin-cwd-'))
    try {
      const { stdout, stderr } = await run(process.execPath, [BIN, 'keys', 'issue', '--tier', 'free'], {
        cwd,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? '',
          SWAPEAZI_DATA_DIR: 'memory://',
          SWAPEAZI_KEY_SECRET: SECRET,
          SWAPEAZI_LOG_LEVEL: 'silent',
        },
      })
      expect(stderr).toBe('')
      expect(stdout.endsWith('\n') && stdout.indexOf('\n') === stdout.length - 1).toBe(true)
      const issued = JSON.parse(stdout) as { key: string; id: string; tier: string }
      expect(issued.tier).toBe('free')
      expect(verifyApiKey(new TextEncoder().encode(SECRET), issued.key)).toEqual({
        ok: true,
        claims: expect.objectContaining({ id: issued.id, tier: 'free' }),
      })
    } finally {
      await rm(cwd, { recursive: true, force: true })
    }
  }, 90_000)

  it('ends `serve` on a port in use with exit code 1 and one line naming SWAPEAZI_PORT, no stack trace, from the compiled CLI', async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    const address = holder.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    try {
      const sourcesBefore = inputsHash(REPO_ROOT)
      const failure = await run(process.execPath, [BIN, 'serve'], {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: process.env['HOME'] ?? '',
          SWAPEAZI_HOST: '127.0.0.1',
          SWAPEAZI_PORT: String(address.port),
          SWAPEAZI_DATA_DIR: 'memory://',
          SWAPEAZI_LOG_LEVEL: 'silent',
        },
        timeout: 60_000,
      }).then(
        () => undefined,
        (error: { code?: number; stdout?: string; stderr?: string; killed?: boolean }) => error,
      )
      expect(failure?.killed).toBe(false)
      expect(failure?.code).toBe(1)
      expect(failure?.stdout).toBe('')
      expect(failure?.stderr).toBe(
        `swapeazi: port ${address.port} on 127.0.0.1 is already in use (EADDRINUSE): stop the process that holds it, or set SWAPEAZI_PORT to a free port\n`,
      )
      // What ran is the build of these sources, not tsx and not an older build (another session may edit src/ meanwhile).
      const built = (hash: string): boolean => existsSync(join(REPO_ROOT, 'dist', `swapeazi-${hash}`, 'cli.mjs'))
      expect(built(sourcesBefore) || built(inputsHash(REPO_ROOT))).toBe(true)
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()))
    }
  }, 90_000)

  it('ends `serve` on a DATABASE_URL with sslmode=require that cannot be reached with one line: no SECURITY WARNING from pg ahead of it', async () => {
    const port = await closedPort()
    const failure = await run(process.execPath, [BIN, 'serve'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        SWAPEAZI_HOST: '127.0.0.1',
        SWAPEAZI_PORT: '0',
        SWAPEAZI_LOG_LEVEL: 'silent',
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/swapeazi?sslmode=require`,
      },
      timeout: 60_000,
    }).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string; killed?: boolean }) => error,
    )
    expect(failure?.killed).toBe(false)
    expect(failure?.code).toBe(1)
    expect(failure?.stderr).toBe(
      `swapeazi: PostgreSQL at 127.0.0.1:${port}/swapeazi refused the connection (ECONNREFUSED): start PostgreSQL there, or correct the host and port in DATABASE_URL\n`,
    )
  }, 90_000)

  // `serve` on a data directory begins opening it on the store's thread before the configuration is read
  // (src/cli/openStoreEarly.ts): a command that fails first leaves the directory as it found it, free.
  it('ends `serve` on a data directory whose configuration is invalid with one line, and leaves the directory unlocked for the next start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'swapeazi-bin-early-'))
    try {
      const env = {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        SWAPEAZI_HOST: '127.0.0.1',
        SWAPEAZI_DATA_DIR: dataDir,
        SWAPEAZI_LOG_LEVEL: 'silent',
      }
      const failure = await run(process.execPath, [BIN, 'serve'], {
        cwd: REPO_ROOT,
        env: { ...env, SWAPEAZI_PORT: 'not-a-port' },
        timeout: 60_000,
      }).then(
        () => undefined,
        (error: { code?: number; stderr?: string; killed?: boolean }) => error,
      )
      expect(failure?.killed).toBe(false)
      expect(failure?.code).toBe(1)
      expect(failure?.stderr?.trimEnd().split('\n').at(-1)).toMatch(/^swapeazi: .*SWAPEAZI_PORT/)
      expect(failure?.stderr).not.toMatch(/\n\s+at /)
      expect(existsSync(join(dataDir, 'swapeazi.lock'))).toBe(false)
      // A held port fails after the early open was taken: the store is closed and its lock released.
      const holder = createServer()
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
      const address = holder.address()
      if (address === null || typeof address === 'string') throw new Error('no port')
      try {
        const inUse = await run(process.execPath, [BIN, 'serve'], {
          cwd: REPO_ROOT,
          env: { ...env, SWAPEAZI_PORT: String(address.port) },
          timeout: 60_000,
        }).then(
          () => undefined,
          (error: { code?: number; stderr?: string }) => error,
        )
        expect(inUse?.code).toBe(1)
        expect(inUse?.stderr?.trimEnd().split('\n').at(-1)).toMatch(/already in use \(EADDRINUSE\).*SWAPEAZI_PORT/)
      } finally {
        await new Promise<void>((resolve) => holder.close(() => resolve()))
      }
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
      expect(existsSync(join(dataDir, 'swapeazi.lock'))).toBe(false)
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 120_000)

  // Root may bind any port, so this runs the binary as `nobody` (uid 65534); skipped where that user cannot, or may
  // bind low ports anyway, or cannot read the checkout.
  const NOBODY = 65_534
  const lowPortsNeedPrivilege = (): boolean => {
    try {
      return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8')) > 80
    } catch {
      return false
    }
  }
  it.skipIf(process.getuid?.() !== 0 || !lowPortsNeedPrivilege())(
    'ends `serve` on a port below 1024 without privileges (EACCES) with exit code 1 and one line naming SWAPEAZI_PORT',
    async (context) => {
      await compiledCli()
      const env = { PATH: process.env['PATH'] ?? '', HOME: tmpdir(), SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_LOG_LEVEL: 'silent' }
      const asNobody = { cwd: tmpdir(), uid: NOBODY, gid: NOBODY, timeout: 60_000 }
      const canRead = await run(process.execPath, ['-e', `require('fs').accessSync(${JSON.stringify(BIN)})`], { ...asNobody, env }).then(
        () => true,
        () => false,
      )
      if (!canRead) context.skip()
      const failure = await run(process.execPath, [BIN, 'serve'], {
        ...asNobody,
        env: { ...env, SWAPEAZI_HOST: '127.0.0.1', SWAPEAZI_PORT: '80' },
      }).then(
        () => undefined,
        (error: { code?: number; stderr?: string }) => error,
      )
      expect(failure?.code).toBe(1)
      // The last line: had another session edited src/ since the build above, a line saying tsx runs would precede it.
      expect(failure?.stderr?.trimEnd().split('\n').at(-1)).toBe(
        'swapeazi: not permitted to listen on port 80 (EACCES): ports below 1024 need privileges; set SWAPEAZI_PORT to 1024 or above',
      )
      expect(failure?.stderr).not.toMatch(/\n\s+at /)
    },
    90_000,
  )
})
