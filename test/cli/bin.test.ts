import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { inputsHash } from '../../scripts/compiledCli.js'
import { verifyApiKey } from '../../src/auth/apiKey.ts'

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
      const built = (hash: string): boolean => existsSync(join(REPO_ROOT, 'dist', `swapeazi-${hash}.mjs`))
      expect(built(sourcesBefore) || built(inputsHash(REPO_ROOT))).toBe(true)
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()))
    }
  }, 90_000)
})
