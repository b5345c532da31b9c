import { serve } from '@hono/node-server'
import { buildAppDeps } from '../app/buildAppDeps.ts'
import { createServer } from '../app/createServer.ts'
import { loadConfig } from '../config.ts'
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

Configuration is read from the environment; see README.md.`

/** Starts the HTTP API and resolves once it is listening. */
async function runServe(): Promise<void> {
  const config = loadConfig()
  const deps = await buildAppDeps(config)
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
  const stop = (signal: string): void => {
    deps.log.info({ event: 'shutdown', signal }, 'shutdown')
    server.close(() => {
      void deps.store.sql.close().finally(() => process.exit(0))
    })
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
}

async function main(argv: readonly string[]): Promise<void> {
  const [command = 'serve'] = argv
  switch (command) {
    case 'serve':
      return runServe()
    case 'mcp':
      return runMcpStdio(loadConfig())
    case 'router':
      if (argv[1] === undefined || argv[1] === '--help') {
        process.stderr.write(`${ROUTER_USAGE}\n`)
        return
      }
      return runRouterCommand(loadConfig(), argv.slice(1))
    case 'keys':
      if (argv[1] === undefined || argv[1] === '--help') {
        process.stderr.write(`${KEYS_USAGE}\n`)
        return
      }
      return runKeyCommand(loadConfig(), argv.slice(1))
    case 'intel':
      if (argv[1] === undefined || argv[1] === '--help') {
        process.stderr.write(`${INTEL_USAGE}\n`)
        return
      }
      return runIntelCommand(loadConfig(), argv.slice(1))
    case 'help':
    case '--help':
    case '-h':
      process.stderr.write(`${USAGE}\n`)
      return
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`)
      process.exitCode = 2
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof CatalogueError ? `catalogue error: ${error.message}` : error instanceof Error ? error.message : String(error)
  process.stderr.write(`swapeazi: ${message}\n`)
  process.exit(1)
})
