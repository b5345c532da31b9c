// The real SwapEazi app, wired as `swapeazi serve` wires it, on 127.0.0.1 and an ephemeral port, logging silenced.
// Run as its own process; reports its port to the parent over IPC. SWAPEAZI_KEY_SECRET and SWAPEAZI_RATE_LIMIT_*
// pass through from the parent's environment.
import { serve } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { buildAppDeps } from '../../src/appDeps.ts'
import { loadConfig } from '../../src/config.ts'
import { createApp } from '../../src/http/createApp.ts'

const config = loadConfig({
  SWAPEAZI_HOST: '127.0.0.1',
  SWAPEAZI_PORT: '0',
  SWAPEAZI_LOG_LEVEL: 'silent',
  SWAPEAZI_DATA_DIR: 'memory://',
  SWAPEAZI_QUOTE_SECRET: 'bench-quote-secret-bench-quote-secret-0123456789',
  // Benches that need them pass a key secret (to sign their own key) and rate limits.
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name === 'SWAPEAZI_KEY_SECRET' || name.startsWith('SWAPEAZI_RATE_LIMIT_'))),
})
const app = createApp(await buildAppDeps(config))
const server = serve({ fetch: app.fetch, hostname: config.host, port: 0 }, (info: AddressInfo) => {
  process.send?.({ port: info.port })
})
process.on('disconnect', () => server.close(() => process.exit(0)))
process.once('SIGTERM', () => server.close(() => process.exit(0)))
