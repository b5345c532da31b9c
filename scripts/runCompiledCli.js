// What bin/swapeazi.js and bin/swapeazi-mcp.js run: the compiled CLI (scripts/compiledCli.js), or, when it cannot be
// built, src/cli/main.ts through tsx, with one line on stderr saying so (stdout may carry MCP's JSON-RPC).
import { Worker } from 'node:worker_threads'
import { compiledCli, workerOf } from './compiledCli.js'

/** Imports the CLI for the sources as they are now; it reads process.argv and exits when its command is done. */
export async function runCompiledCli() {
  let entry
  try {
    entry = await compiledCli()
  } catch (error) {
    // esbuild's own errors carry the first problem's text (a source that does not compile, a dist/ that is read-only).
    const first = error?.errors?.[0]
    const reason = first?.text ?? (error instanceof Error ? error.message.split('\n')[0] : String(error))
    process.stderr.write(
      `swapeazi: running the TypeScript sources through tsx (slower start): the compiled CLI could not be built: ${reason}\n`,
    )
    const { register } = await import('tsx/esm/api')
    register()
    await import('../src/cli/main.ts')
    return
  }
  if (servesHttp(process.argv.slice(2))) prestartStoreThread(workerOf(entry))
  await import(entry)
}

/** `swapeazi serve`, also the command when none is given (src/cli/runCli.ts). */
function servesHttp(/** @type {string[]} */ argv) {
  return argv.length <= 1 && (argv[0] ?? 'serve') === 'serve'
}

/**
 * Starts the embedded store's thread (src/store/pgliteWorker.ts) before the CLI loads, so that it loads and compiles
 * PGlite while this thread loads the service: src/store/pgliteThread.ts takes it when `serve` opens its data
 * directory, and src/cli/openStoreEarly.ts ends it when the store is PostgreSQL. It opens nothing by itself.
 * @param {string} path
 */
function prestartStoreThread(path) {
  const worker = new Worker(path)
  // Until an open takes it, it keeps nothing alive.
  worker.unref()
  Object.assign(globalThis, { [Symbol.for('swapeazi.pgliteThread')]: worker })
}
