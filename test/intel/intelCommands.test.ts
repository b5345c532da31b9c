import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = new URL('../..', import.meta.url).pathname
const FIXTURE = new URL('./fixtures/observations.jsonl', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'swapeazi-intel-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const cli = (args: string[]): Promise<{ stdout: string; stderr: string }> =>
  run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'intel', ...args], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', SWAPEAZI_DATA_DIR: join(work, 'data'), SWAPEAZI_LOG_LEVEL: 'silent' },
  })

describe('swapeazi intel import', () => {
  it('refuses a file with a bad line, naming it, and imports nothing; then imports a good file once', async () => {
    const [first = '', second = ''] = readFileSync(FIXTURE, 'utf8').split('\n')
    const bad = join(work, 'bad.jsonl')
    writeFileSync(bad, `${first}\n${second.replace('"amount":"2500"', '"amount":"2500.1234567"')}\n`)
    await expect(cli(['import', bad])).rejects.toMatchObject({
      code: 1,
      stderr: 'swapeazi: line 2: amount has more than 6 fraction digits, the decimals of USDC; nothing was imported\n',
    })
    const lines = readFileSync(FIXTURE, 'utf8').trim().split('\n').length
    // The bad file's valid first line was rolled back with the rest: it is imported now, not skipped.
    expect(JSON.parse((await cli(['import', FIXTURE])).stdout)).toEqual({ file: FIXTURE, lines, imported: lines, skipped: 0 })
    expect(JSON.parse((await cli(['import', FIXTURE])).stdout)).toEqual({ file: FIXTURE, lines, imported: 0, skipped: lines })
  }, 120_000)

  it('says what it needs when the file is missing or unreadable', async () => {
    await expect(cli(['import'])).rejects.toMatchObject({ stderr: expect.stringContaining('name one JSONL file to import') })
    await expect(cli(['import', join(work, 'absent.jsonl')])).rejects.toMatchObject({ stderr: expect.stringContaining(`cannot read ${join(work, 'absent.jsonl')}`) })
    await expect(cli(['export'])).rejects.toMatchObject({ stderr: expect.stringContaining('unknown intel command "export"') })
    expect((await cli(['--help'])).stderr).toContain('swapeazi intel import FILE.jsonl')
  }, 120_000)
})
