import type { Readable, Writable } from 'node:stream'
import { type Config, loadConfig } from '../config.ts'
import { CatalogueError } from '../engine/index.ts'

const USAGE = `Usage: swapeazi <command>

Commands:
  serve     Run the HTTP API on SWAPEAZI_HOST:SWAPEAZI_PORT (default 127.0.0.1:8402), with MCP at /mcp
  mcp       Run the MCP server over stdio (for Claude Desktop, Claude Code and other LLM hosts)
  track     Run the swap tracker alone (the chains of SWAPEAZI_RPC_URLS), as serve runs it unless SWAPEAZI_TRACKER=off
  router    Deploy the router contract or set its allow-list (swapeazi router --help)
  keys      Issue or revoke API keys, or print their metered usage (swapeazi keys --help)
  intel     Import observed transfers for corridor intelligence (swapeazi intel --help)
  help      Show this text

Configuration is read from the environment; see docs/configuration.md.`

/** What `serve`, `mcp` and `track` do, for their --help: each takes no arguments. */
const RUNNER_USAGE: Readonly<Record<'serve' | 'mcp' | 'track', string>> = {
  serve: 'Runs the HTTP API on SWAPEAZI_HOST:SWAPEAZI_PORT (default 127.0.0.1:8402), with MCP at /mcp, until SIGTERM or SIGINT.',
  mcp: 'Runs the MCP server over stdio (for Claude Desktop, Claude Code and other LLM hosts): JSON-RPC on stdin and stdout.',
  track: 'Runs the swap tracker alone (the chains of SWAPEAZI_RPC_URLS), as serve runs it unless SWAPEAZI_TRACKER=off.',
}

const runnerUsage = (command: 'serve' | 'mcp' | 'track'): string =>
  `Usage: swapeazi ${command}\n\n${RUNNER_USAGE[command]}\nIt takes no arguments: configuration is read from the environment; see docs/configuration.md.`

/**
 * What a command reads and writes instead of the process's own: the binary passes process.env and the standard
 * streams (src/cli/main.ts), tests pass their own and run the CLI in-process.
 */
export type CliIo = {
  /** The environment the configuration is read from. */
  env: Readonly<Record<string, string | undefined>>
  /** The MCP host's requests under `mcp`; no other command reads it. */
  stdin: Readable
  /** Results (JSON lines), or JSON-RPC only under `mcp`. */
  stdout: Writable
  /** Usage, errors and the service's pino logs. */
  stderr: Writable
  /** Tests: an embedded store that does not exist yet starts as a copy of this migrated one (openPgliteSql). */
  pgliteTemplate?: Blob
  /** Tests: ends `serve` as SIGTERM does, without signalling the test's own process. */
  stop?: AbortSignal
}

/** The configuration from `io.env`, with the embedded store's template when `io` has one. */
function configOf(io: CliIo): Config {
  const config = loadConfig(io.env)
  if (io.pgliteTemplate === undefined || config.store.driver !== 'pglite') return config
  return { ...config, store: { ...config.store, template: io.pgliteTemplate } }
}

/** Runs one command; `help` texts go to stderr. Resolves when the command is done (`serve` and `mcp`: when they stop). */
async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command = 'serve'] = argv
  const usage = (text: string): number => {
    io.stderr.write(`${text}\n`)
    return 0
  }
  const asksForHelp = argv[1] === undefined || argv[1] === '--help'
  // serve, mcp and track read the environment only: an argument (`--port 9000`) would otherwise be ignored unseen.
  if ((command === 'serve' || command === 'mcp' || command === 'track') && argv.length > 1) {
    if (argv[1] === '--help' || argv[1] === '-h') return usage(runnerUsage(command))
    io.stderr.write(`swapeazi ${command} takes no arguments (got ${argv.slice(1).join(' ')}).\n\n${runnerUsage(command)}\n`)
    return 2
  }
  // Each command's modules are imported when it runs: the compiled CLI evaluates only those (`serve` starts sooner).
  switch (command) {
    case 'serve': {
      const { runServe } = await import('./serveCommand.ts')
      await runServe(configOf(io), io)
      return 0
    }
    case 'mcp': {
      const { runMcpStdio } = await import('./mcpStdio.ts')
      await runMcpStdio(configOf(io), io)
      return 0
    }
    case 'track': {
      const { runTrack } = await import('./trackCommand.ts')
      await runTrack(configOf(io), io)
      return 0
    }
    case 'router': {
      const { ROUTER_USAGE, runRouterCommand } = await import('./routerCommands.ts')
      if (asksForHelp) return usage(ROUTER_USAGE)
      await runRouterCommand(configOf(io), argv.slice(1), io.stdout)
      return 0
    }
    case 'keys': {
      const { KEYS_USAGE, runKeyCommand } = await import('./keyCommands.ts')
      if (asksForHelp) return usage(KEYS_USAGE)
      await runKeyCommand(configOf(io), argv.slice(1), io.stdout)
      return 0
    }
    case 'intel': {
      const { INTEL_USAGE, runIntelCommand } = await import('./intelCommands.ts')
      if (asksForHelp) return usage(INTEL_USAGE)
      await runIntelCommand(configOf(io), argv.slice(1), io.stdout)
      return 0
    }
    case 'help':
    case '--help':
    case '-h':
      return usage(USAGE)
    default:
      io.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`)
      return 2
  }
}

/**
 * `swapeazi ARGV...` in this process: the whole CLI but the process itself, which src/cli/main.ts wraps. Returns
 * the exit code: 0 done, 1 failed (the reason on stderr, after `swapeazi: `), 2 unknown command or arguments.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io)
  } catch (error) {
    io.stderr.write(`swapeazi: ${oneLineOf(error)}\n`)
    return 1
  }
}

/**
 * A failure as one line. viem's errors (an operator command's RPC unreachable or refusing, say) carry a message of
 * several lines (the request body, viem's version); their short message, the URL and the cause's details say it.
 */
function oneLineOf(error: unknown): string {
  if (error instanceof CatalogueError) return `catalogue error: ${error.message}`
  // Not an Error (an Emscripten ErrnoError from a dependency, say): its message, else its fields, never "[object Object]".
  if (!(error instanceof Error)) {
    if (typeof error !== 'object' || error === null) return String(error)
    const { message } = error as { message?: unknown }
    return typeof message === 'string' && message !== '' ? message : `an unexpected error: ${JSON.stringify(error)?.slice(0, 300)}`
  }
  const { shortMessage, details, url } = error as Error & { shortMessage?: unknown; details?: unknown; url?: unknown }
  if (typeof shortMessage !== 'string') return error.message
  const at = typeof url === 'string' ? ` (${url})` : ''
  const why = typeof details === 'string' && details.length > 0 ? `: ${details}` : ''
  return `${shortMessage.replace(/\.$/, '')}${at}${why}`.replace(/\s*\n\s*/g, ' ')
}
