import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compiledCli, earlyOf, inputsHash } from '../../scripts/compiledCli.js'

const run = promisify(execFile)

/** Runs a compiled CLI and returns what it printed. */
async function output(entry: string): Promise<string> {
  const { stdout } = await run(process.execPath, [entry])
  return stdout.trim()
}

// The real CLI is compiled and run by every spawn of bin/swapeazi.js (test/cli/bin.test.ts, test/e2e/); this builds
// a package of three files, to see that a changed source is never run stale.
describe('scripts/compiledCli.js', () => {
  let root = ''

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'swapeazi-compiled-'))
    await mkdir(join(root, 'src', 'cli'), { recursive: true })
    await mkdir(join(root, 'src', 'lib'), { recursive: true })
    await mkdir(join(root, 'src', 'store'), { recursive: true })
    // The embedded store's thread, built beside the CLI (src/store/pgliteThread.ts starts it from there).
    await writeFile(join(root, 'src', 'store', 'pgliteWorker.ts'), "console.log('the store thread')\n")
    // What bin/swapeazi.js imports before the CLI: it shares the CLI's modules, one instance of each.
    await writeFile(
      join(root, 'src', 'cli', 'openStoreEarly.ts'),
      "import { word } from '../lib/word.ts'\nexport const early = (): string => word\n",
    )
    await writeFile(join(root, 'package.json'), '{"type":"module"}')
    await writeFile(join(root, 'src', 'lib', 'word.ts'), "export const word: string = 'one'\n")
    await writeFile(
      join(root, 'src', 'cli', 'main.ts'),
      "import { word } from '../lib/word.ts'\ndeclare const __SWAPEAZI_PGLITE_WORKER__: string\nconsole.log(word, new URL('./beside.txt', import.meta.url).pathname, new URL(__SWAPEAZI_PGLITE_WORKER__, new URL('../store/x.ts', import.meta.url)).pathname)\n",
    )
  })

  afterAll(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('builds once for the sources as they are, and a changed or added source names a new build that runs the new code', async () => {
    const first = await compiledCli({ root })
    expect(first).toBe(join(root, 'dist', `swapeazi-${inputsHash(root)}`, 'cli.mjs'))
    // import.meta.url is still the source file's own, so files beside a source are found from the bundle.
    // The CLI finds the store's thread's build from its sources' URLs, and that build runs.
    const worker = join(dirname(first), 'pglite-worker.mjs')
    expect(await output(first)).toBe(`one ${join(root, 'src', 'cli', 'beside.txt')} ${worker}`)
    expect(await output(worker)).toBe('the store thread')
    const { early } = (await import(earlyOf(first))) as { early(): string }
    expect(early()).toBe('one')
    const builtAt = (await stat(first)).mtimeMs
    expect(await compiledCli({ root })).toBe(first)
    expect((await stat(first)).mtimeMs).toBe(builtAt)

    await writeFile(join(root, 'src', 'lib', 'word.ts'), "export const word: string = 'two'\n")
    const second = await compiledCli({ root })
    expect(second).not.toBe(first)
    expect(await output(second)).toMatch(/^two /)

    const beforeNewFile = inputsHash(root)
    await writeFile(join(root, 'src', 'lib', 'unused.ts'), 'export {}\n')
    expect(inputsHash(root)).not.toBe(beforeNewFile)
    await writeFile(join(root, 'package.json'), '{"type":"module","version":"2"}')
    const third = await compiledCli({ root })
    expect(third).not.toBe(second)
    expect(await output(third)).toMatch(/^two /)
  }, 60_000)

  it('a source that does not compile rejects, naming the file, and leaves no build behind', async () => {
    const broken = await mkdtemp(join(tmpdir(), 'swapeazi-compiled-broken-'))
    try {
      await mkdir(join(broken, 'src', 'cli'), { recursive: true })
      await mkdir(join(broken, 'src', 'store'), { recursive: true })
      await writeFile(join(broken, 'package.json'), '{"type":"module"}')
      await writeFile(join(broken, 'src', 'store', 'pgliteWorker.ts'), 'export {}\n')
      await writeFile(join(broken, 'src', 'cli', 'openStoreEarly.ts'), 'export {}\n')
      await writeFile(join(broken, 'src', 'cli', 'main.ts'), 'const = 1\n')
      await expect(compiledCli({ root: broken })).rejects.toThrow(/main\.ts/)
      // Neither the build's directory nor its temporary one.
      expect(await readdir(join(broken, 'dist'))).toEqual([])
    } finally {
      await rm(broken, { recursive: true, force: true })
    }
  }, 60_000)
})
