import { serve } from '@hono/node-server'
import { buildAppDeps } from './appDeps.ts'
import { loadConfig } from './config.ts'
import { CatalogueError } from './engine/index.ts'
import { createApp } from './http/createApp.ts'

const USAGE = `Usage: swapeazi <command>

Commands:
  serve     Run the HTTP API on SWAPEAZI_HOST:SWAPEAZI_PORT (default 127.0.0.1:8402)
  help      Show this text

Configuration is read from the environment; see README.md.`

/** Starts the HTTP API and resolves once it is listening. */
async function runServe(): Promise<void> {
  const config = loadConfig()
  const deps = buildAppDeps(config)
  if (!config.hasStableQuoteSecret)
    deps.log.warn({ event: 'quote_secret_ephemeral' }, 'SWAPEAZI_QUOTE_SECRET is not set: quote ids are signed with a per-process key')
  const app = createApp(deps)
  const server = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, (info) => {
    deps.log.info(
      { event: 'listening', url: `http://${info.address}:${info.port}`, public_url: config.publicUrl, snapshot_as_of: deps.catalogue.asOf },
      'listening',
    )
  })
  const stop = (signal: string): void => {
    deps.log.info({ event: 'shutdown', signal }, 'shutdown')
    server.close(() => process.exit(0))
  }
  process.once('SIGINT', () => stop('SIGINT'))
  process.once('SIGTERM', () => stop('SIGTERM'))
}

async function main(argv: readonly string[]): Promise<void> {
  const [command = 'serve'] = argv
  switch (command) {
    case 'serve':
      return runServe()
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
