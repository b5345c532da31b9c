import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { verifyApiKey } from '../../src/auth/apiKey.ts'

const run = promisify(execFile)
const BIN = fileURLToPath(new URL('../../bin/swapeazi.js', import.meta.url))
const SECRET = 'operator-key-secret-operator-key-secret'

// The CLI's commands are tested in-process (src/cli/runCli.ts: test/keyCommands.test.ts, test/intel/,
// test/contracts/routerCommands.test.ts). This is the one spawn of the binary: that bin/swapeazi.js starts the
// TypeScript CLI through tsx from any directory, hands it argv and the environment, prints on stdout and exits 0.
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
})
