// `serve`, `mcp` and `track` read the environment only (truth review of issue 15: `serve --help` started the server,
// and an argument such as `--port 9000` was ignored unseen).
import { describe, expect, it } from 'vitest'
import { runCliInProcess } from '../support/runCliInProcess.ts'

const ENV = { SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_PORT: '0', SWAPEAZI_HOST: '127.0.0.1' }

describe('swapeazi serve, mcp and track take no arguments', () => {
  it.each(['serve', 'mcp', 'track'])('%s --help prints its usage and runs nothing', async (command) => {
    for (const flag of ['--help', '-h']) {
      const run = await runCliInProcess([command, flag], ENV)
      expect(run.code).toBe(0)
      expect(run.stderr).toContain(`Usage: swapeazi ${command}`)
      expect(run.stderr).toContain('docs/configuration.md')
      expect(run.stderr).not.toContain('"event":"listening"')
      expect(run.stdout).toBe('')
    }
  })

  it.each(['serve', 'mcp', 'track'])('%s with an argument is refused with exit code 2, naming it', async (command) => {
    const run = await runCliInProcess([command, '--port', '9000'], ENV)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`swapeazi ${command} takes no arguments (got --port 9000)`)
    expect(run.stderr).not.toContain('"event":"listening"')
  })
})

describe('an operator command whose RPC cannot be reached', () => {
  it("fails with one line naming the URL and the cause, exit code 1, without viem's request dump", async () => {
    const run = await runCliInProcess(
      [
        'router',
        'deploy',
        '--rpc-url',
        'http://127.0.0.1:9',
        '--owner',
        '0x1111111111111111111111111111111111111111',
        '--treasury',
        '0x2222222222222222222222222222222222222222',
      ],
      { ...ENV, SWAPEAZI_DEPLOYER_PRIVATE_KEY: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
    )
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/^swapeazi: HTTP request failed \(http:\/\/127\.0\.0\.1:9\/\): .+\n$/)
    expect(run.stderr).not.toContain('Request body')
    expect(run.stderr).not.toContain('Version: viem')
  })
})
