import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type CliRun, runCliInProcess } from '../support/runCliInProcess.ts'

const FIXTURE = new URL('./fixtures/observations.jsonl', import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), 'swapeazi-intel-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** `swapeazi intel ARGS` in-process; resolves to the run when it exits 0, else rejects with it. */
async function cli(args: string[]): Promise<CliRun> {
  const run = await runCliInProcess(['intel', ...args], { SWAPEAZI_DATA_DIR: join(work, 'data'), SWAPEAZI_LOG_LEVEL: 'silent' })
  if (run.code !== 0) throw Object.assign(new Error(`swapeazi intel ${args.join(' ')} exited ${run.code}`), run)
  return run
}

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
    await expect(cli(['import'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('name one JSONL file to import') })
    await expect(cli(['import', join(work, 'absent.jsonl')])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`cannot read ${join(work, 'absent.jsonl')}`),
    })
    await expect(cli(['import', work])).rejects.toMatchObject({
      code: 1,
      stderr: `swapeazi: cannot read ${work}: it is a directory; name one JSONL file to import\n`,
    })
    await expect(cli(['export'])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('unknown intel command "export"') })
    expect((await cli(['--help'])).stderr).toContain('swapeazi intel import FILE.jsonl')
  }, 120_000)
})
