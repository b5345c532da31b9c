// The `swapeazi` process (bin/swapeazi.js, bin/swapeazi-mcp.js): argv, environment and standard streams in, exit
// code out. Everything else is runCli, which tests call in-process.
import { closeUnclaimedPgliteSql } from '../store/openPgliteSql.ts'
import { openStoreEarly } from './openStoreEarly.ts'

const argv = process.argv.slice(2)
// `serve` begins opening its embedded store on the store's own thread first; the rest of the CLI is imported after
// it (the compiled CLI evaluates a module imported this way only when it is imported), so the two overlap.
openStoreEarly(argv, process.env)
// Under `mcp`, stdout carries JSON-RPC only: whatever a dependency prints through console goes to stderr.
if (argv[0] === 'mcp') (await import('../mcp/serveStdio.ts')).keepStdoutForProtocol()
const { runCli } = await import('./runCli.ts')

// runCli reports its own failures (stderr and exit code 1). The process ends with the command, whatever handles
// (a store, an RPC client) are still open; a store opened early that the command never took is closed first.
void runCli(argv, { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(async (code) => {
  await closeUnclaimedPgliteSql()
  process.exit(code)
})
