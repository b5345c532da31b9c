// The `swapeazi` process (bin/swapeazi.js, bin/swapeazi-mcp.js): argv, environment and standard streams in, exit
// code out. Everything else is runCli, which tests call in-process.
import { keepStdoutForProtocol } from '../mcp/serveStdio.ts'
import { runCli } from './runCli.ts'

const argv = process.argv.slice(2)
// Under `mcp`, stdout carries JSON-RPC only: whatever a dependency prints through console goes to stderr.
if (argv[0] === 'mcp') keepStdoutForProtocol()

// runCli reports its own failures (stderr and exit code 1). The process ends with the command, whatever handles
// (a store, an RPC client) are still open.
void runCli(argv, { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then((code) =>
  process.exit(code),
)
