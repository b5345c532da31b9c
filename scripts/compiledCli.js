// The CLI compiled ahead of time (issue 15 item 10): bin/swapeazi.js, and so `npm start`, run one JavaScript file that
// esbuild bundles from src/cli/main.ts, instead of compiling every TypeScript module on the fly through tsx. The file's
// name holds a hash of everything it is built from (every file under src/, package.json, the installed packages and
// this script), so a changed source, an upgraded package or a new build option names a file that does not exist yet
// and is built first: stale code is never run. Plain JavaScript, so that checking the build needs no compiler.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const THIS_FILE = fileURLToPath(import.meta.url)
/** Builds older than this are deleted after a new build; a younger one may be about to be imported by another process. */
const KEEP_OLD_BUILD_MS = 60_000

// Packages left to node_modules: PGlite and pino find their own files (WebAssembly, workers) next to their code, pg
// tries an optional native module, solc is loaded only by `swapeazi router`, x402-fetch only at an MCP tool's first
// payment (it brings x402's Solana support, a sixth of the bundle), and the build tools are not run here.
const EXTERNAL = ['@electric-sql/pglite', 'pg', 'pino', 'solc', 'x402-fetch', 'tsx', 'esbuild']

/**
 * @typedef {object} CompiledCliOptions
 * @property {string} [root] the package root (default: this package)
 * @property {string} [outDir] where builds go (default: dist/ under the root)
 */

/**
 * The path of the compiled CLI for the sources as they are now, built first when it does not exist yet. A build is a
 * directory, `swapeazi-<hash>/` under `outDir`: `cli.mjs` (src/cli/main.ts), `early.mjs` (src/cli/openStoreEarly.ts,
 * which bin/swapeazi.js imports first), `pglite-worker.mjs` (the embedded store's thread) and the chunks they share,
 * each module once, and each command's own modules in chunks loaded only when it runs.
 * @param {CompiledCliOptions} [options]
 * @returns {Promise<string>}
 */
export async function compiledCli(options = {}) {
  const root = options.root ?? ROOT
  const outDir = options.outDir ?? join(root, 'dist')
  const target = join(outDir, `swapeazi-${inputsHash(root)}`, 'cli.mjs')
  // A build's directory appears whole (renamed into place), so its CLI existing means the rest does.
  if (existsSync(target)) return target
  await build(root, target)
  removeOldBuilds(outDir, dirname(target))
  return target
}

/**
 * The entry beside a compiled CLI that `serve` imports before it (src/cli/openStoreEarly.ts).
 * @param {string} target
 */
export function earlyOf(target) {
  return join(dirname(target), 'early.mjs')
}

/**
 * A hash of what the build is made from: every file under src/ (path and content), package.json, the installed
 * packages (npm rewrites node_modules/.package-lock.json on every install) and this script. Reading them takes a few
 * milliseconds.
 * @param {string} root
 * @returns {string}
 */
export function inputsHash(root) {
  const hash = createHash('sha256')
  const add = (/** @type {string} */ path) => {
    hash.update(relative(root, path))
    hash.update('\0')
    hash.update(existsSync(path) ? readFileSync(path) : '')
    hash.update('\0')
  }
  const sources = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
  for (const path of sources) add(path)
  add(join(root, 'package.json'))
  add(join(root, 'node_modules', '.package-lock.json'))
  add(THIS_FILE)
  return hash.digest('hex').slice(0, 16)
}

/**
 * Bundles src/cli/main.ts, src/cli/openStoreEarly.ts and the embedded store's thread (src/store/pgliteWorker.ts) into
 * the directory of `target`, split into shared chunks: written into a directory of its own, then renamed into place,
 * so processes building at once never see each other's half-written files.
 * @param {string} root
 * @param {string} target
 */
async function build(root, target) {
  const { build: esbuild, stop } = await import('esbuild')
  const dir = dirname(target)
  mkdirSync(dirname(dir), { recursive: true })
  const partial = `${dir}.${process.pid}.${Date.now()}.tmp`
  // Where src/store/pgliteThread.ts finds the thread's file: relative to its own source, whose URL the bundle keeps.
  const workerFromSource = relative(join(root, 'src', 'store'), join(dir, 'pglite-worker.mjs'))
    .split('\\')
    .join('/')
  try {
    await esbuild({
      entryPoints: {
        cli: join(root, 'src', 'cli', 'main.ts'),
        early: join(root, 'src', 'cli', 'openStoreEarly.ts'),
        'pglite-worker': join(root, 'src', 'store', 'pgliteWorker.ts'),
      },
      outdir: partial,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: EXTERNAL,
      logLevel: 'silent',
      // Bundled CommonJS packages call require(); an ES module has none of its own.
      banner: {
        js: "import { createRequire as __swapeaziCreateRequire } from 'node:module'; const require = __swapeaziCreateRequire(import.meta.url);",
      },
      define: { __SWAPEAZI_PGLITE_WORKER__: JSON.stringify(workerFromSource) },
      plugins: [sourceUrls(dir)],
    })
    try {
      renameSync(partial, dir)
    } catch (error) {
      // Another process renamed its build of the same sources into place first: that one is used.
      if (!existsSync(target)) throw error
    }
  } finally {
    rmSync(partial, { recursive: true, force: true })
    // esbuild's service process would otherwise live as long as the service it built.
    await stop()
  }
}

/**
 * A source module that finds files next to itself (`new URL('./portal/', import.meta.url)`, `../../package.json`)
 * keeps finding them from the bundle: its `import.meta.url` becomes its own file's URL, relative to the bundle.
 * @param {string} outDir
 * @returns {import('esbuild').Plugin}
 */
function sourceUrls(outDir) {
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8')
        const fromBundle = relative(outDir, args.path).split('\\').join('/')
        return {
          contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`),
          loader: 'ts',
        }
      })
    },
  }
}

/**
 * Removes the builds of other sources (directories, and the single files builds were before), once old enough.
 * @param {string} outDir
 * @param {string} keep the build directory to keep
 */
function removeOldBuilds(outDir, keep) {
  for (const name of readdirSync(outDir)) {
    const path = join(outDir, name)
    if (path === keep || !/^swapeazi-[0-9a-f]{16}(\.mjs|\.pglite-worker\.mjs)?$/.test(name)) continue
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_OLD_BUILD_MS) rmSync(path, { recursive: true, force: true })
    } catch {
      // Another process removed it first.
    }
  }
}
