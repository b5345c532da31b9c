import { type Config, loadConfig } from '../src/config.ts'

/**
 * The configuration every bench builds the real app from: loopback on an ephemeral port, logging silenced, an
 * in-memory store and a fixed quote secret; `extra` adds or overrides variables.
 */
export function benchConfig(extra: Record<string, string> = {}): Config {
  return loadConfig({
    SWAPEAZI_HOST: '127.0.0.1',
    SWAPEAZI_PORT: '0',
    SWAPEAZI_LOG_LEVEL: 'silent',
    SWAPEAZI_DATA_DIR: 'memory://',
    SWAPEAZI_QUOTE_SECRET: 'bench-quote-secret-bench-quote-secret-0123456789',
    ...extra,
  })
}
