import type { Readable, Writable } from 'node:stream'
import { serve } from '@hono/node-server'
import { buildAppDeps } from '../app/buildAppDeps.ts'
import { createLogger } from '../app/createLogger.ts'
import { createServer } from '../app/createServer.ts'
import { type Config, loadConfig } from '../config.ts'
import { CatalogueError } from '../engine/index.ts'
import { INTEL_USAGE, runIntelCommand } from './intelCommands.ts'
import { KEYS_USAGE, runKeyCommand } from './keyCommands.ts'
import { runMcpStdio } from './mcpStdio.ts'
import { ROUTER_USAGE, runRouterCommand } from './routerCommands.ts'

const USAGE = `Usage: swapeazi <command>

Commands:
  serve     Run the HTTP API on SWAPEAZI_HOST:SWAPEAZI_PORT (default 127.0.0.1:8402), with MCP at /mcp
  mcp       Run the MCP server over stdio (for Claude Desktop, Claude Code and other LLM hosts)
  router    Deploy the router contract or set its allow-list (swapeazi router --help)
  keys      Issue or revoke API keys, or print their metered usage (swapeazi keys --help)
  intel     Import observed transfers for corridor intelligence (swapeazi intel --help)
  help      Show this text

Configuration is read from the environment; see docs/configuration.md.`

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
}

/** The configuration from `io.env`, with the embedded store's template when `io` has one. */
function configOf(io: CliIo): Config {
  const config = loadConfig(io.env)
  if (io.pgliteTemplate === undefined || config.store.driver !== 'pglite') return config
  return { ...config, store: { ...config.store, template: io.pgliteTemplate } }
}

/** Starts the HTTP API; resolves once it has stopped on SIGINT or SIGTERM and closed its store. */
async function runServe(config: Config, io: CliIo): Promise<void> {
  const deps = await buildAppDeps(config, createLogger(config.logLevel, io.stderr))
  deps.log.info(
    { event: 'payments', settlement: deps.settler.mode, pay_to: deps.payTo, store: deps.store.sql.describe },
    `x402 payments settle in ${deps.settler.mode} mode; store: ${deps.store.sql.describe}`,
  )
  if (config.payments.isPayToDefault)
    deps.log.warn(
      { event: 'pay_to_default', pay_to: deps.payTo },
      'SWAPEAZI_PAY_TO is not set: x402 payments name the inert 0x…dEaD address and are only recorded on the ledger; set your Base wallet',
    )
  if (config.router.isDefault)
    deps.log.warn(
      { event: 'router_default_inert', router: config.router.address },
      'SWAPEAZI_ROUTER_ADDRESS is not set: swap transactions target the inert default router; deploy your own (swapeazi router deploy) and set it',
    )
  const app = createServer(deps)
  const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, (info) => {
    deps.log.info(
      { event: 'listening', url: `http://${info.address}:${info.port}`, public_url: config.publicUrl, snapshot_as_of: deps.catalogue.asOf },
      'listening',
    )
  })
  await new Promise<void>((resolve, reject) => {
    const stop = (signal: string): void => {
      deps.log.info({ event: 'shutdown', signal }, 'shutdown')
      server.close(() => {
        deps.store.sql.close().then(resolve, reject)
      })
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  })
}

/** Runs one command; `help` texts go to stderr. Resolves when the command is done (`serve` and `mcp`: when they stop). */
async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command = 'serve'] = argv
  const usage = (text: string): number => {
    io.stderr.write(`${text}\n`)
    return 0
  }
  const asksForHelp = argv[1] === undefined || argv[1] === '--help'
  switch (command) {
    case 'serve':
      await runServe(configOf(io), io)
      return 0
    case 'mcp':
      await runMcpStdio(configOf(io), io)
      return 0
    case 'router':
      if (asksForHelp) return usage(ROUTER_USAGE)
      await runRouterCommand(configOf(io), argv.slice(1), io.stdout)
      return 0
    case 'keys':
      if (asksForHelp) return usage(KEYS_USAGE)
      await runKeyCommand(configOf(io), argv.slice(1), io.stdout)
      return 0
    case 'intel':
      if (asksForHelp) return usage(INTEL_USAGE)
      await runIntelCommand(configOf(io), argv.slice(1), io.stdout)
      return 0
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
 * the exit code: 0 done, 1 failed (the reason on stderr, after `swapeazi: `), 2 unknown command.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io)
  } catch (error) {
    const message =
      error instanceof CatalogueError ? `catalogue error: ${error.message}` : error instanceof Error ? error.message : String(error)
    io.stderr.write(`swapeazi: ${message}\n`)
    return 1
  }
}
