import type { Writable } from 'node:stream'
import { serve } from '@hono/node-server'
import { buildAppDeps } from '../app/buildAppDeps.ts'
import { createLogger } from '../app/createLogger.ts'
import { createServer } from '../app/createServer.ts'
import type { Config } from '../config.ts'

/** Starts the HTTP API; resolves once it has stopped on SIGINT or SIGTERM and closed its store. */
export async function runServe(config: Config, io: { stderr: Writable }): Promise<void> {
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
