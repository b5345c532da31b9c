// What bin/swapeazi.js and bin/swapeazi-mcp.js run: the compiled CLI (scripts/compiledCli.js), or, when it cannot be
// built, src/cli/main.ts through tsx, with one line on stderr saying so (stdout may carry MCP's JSON-RPC).
import { compiledCli, earlyOf } from './compiledCli.js'

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
  // `serve` begins opening its embedded store (on the store's own thread) before the rest of the CLI is even compiled.
  const { openStoreEarly } = await import(earlyOf(entry))
  openStoreEarly(process.argv.slice(2), process.env)
  await import(entry)
}
