// The real SwapEazi app, wired as `swapeazi serve` wires it, on 127.0.0.1 and an ephemeral port, logging silenced.
// Run as its own process; reports its port to the parent over IPC. SWAPEAZI_KEY_SECRET, SWAPEAZI_RATE_LIMIT_*,
// SWAPEAZI_TRUST_PROXY, SWAPEAZI_REFUSAL_HOLD_MS, SWAPEAZI_DATA_DIR (a data directory instead of memory) and
// DATABASE_URL (the PostgreSQL runs) pass through from the parent.
import { serve } from '@hono/node-server'
import type { AddressInfo } from 'node:net'
import { buildAppDeps } from '../../src/app/buildAppDeps.ts'
import { createServer } from '../../src/app/createServer.ts'
import { benchConfig } from '../benchConfig.ts'

// Benches that need them pass a key secret (to sign their own key) and rate limits.
const config = benchConfig(
  Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        ['SWAPEAZI_KEY_SECRET', 'SWAPEAZI_TRUST_PROXY', 'SWAPEAZI_REFUSAL_HOLD_MS', 'SWAPEAZI_DATA_DIR', 'DATABASE_URL'].includes(
          entry[0],
        ) || entry[0].startsWith('SWAPEAZI_RATE_LIMIT_'),
    ),
  ),
)
const deps = await buildAppDeps(config)
// Profiling only (bench/profileKeyedSwap.ts): BENCH_SWAP_RECORD=skip answers keyed swaps without recording them, to
// see what the insert costs. Never set by `npm run bench`.
if (process.env['BENCH_SWAP_RECORD'] === 'skip') deps.store.recordKeyedSwap = async () => {}
const app = createServer(deps)
const server = serve({ fetch: app.fetch, hostname: config.host, port: 0 }, (info: AddressInfo) => {
  process.send?.({ port: info.port })
})
process.on('disconnect', () => server.close(() => process.exit(0)))
process.once('SIGTERM', () => server.close(() => process.exit(0)))
