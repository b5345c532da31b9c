import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Logger } from 'pino'
import { loadCatalogue } from '../catalogue/loadCatalogue.ts'
import { loadSanctionsList } from '../compliance/loadSanctionsList.ts'
import { sanctionsListScreener } from '../compliance/sanctionsListScreener.ts'
import type { Config } from '../config.ts'
import type { ServerDeps } from './createServer.ts'
import { createLogger } from './createLogger.ts'
import { settlerFromConfig } from './settlerFromConfig.ts'
import { openStore } from '../store/openStore.ts'
import { routerDeployment } from '../tx/routerDeployment.ts'

const PACKAGE_JSON = new URL('../../package.json', import.meta.url)

/** The package version, for health and OpenAPI. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version
}

/**
 * Wires the real dependencies from configuration: catalogue and sanctions list from disk, the store (PGlite or
 * PostgreSQL, migrated), the settler, pino logger (on stderr unless `log` is given), wall clock. The caller closes
 * `store.sql` on shutdown.
 */
export async function buildAppDeps(config: Config, log: Logger = createLogger(config.logLevel)): Promise<ServerDeps> {
  const { catalogue, files } = loadCatalogue(config.manifestDir)
  const sanctions = loadSanctionsList(config.sanctionsFile)
  const store = await openStore(config.store)
  const generated = (name: string): Promise<Uint8Array> =>
    store.keys.sharedSecret(name, () => randomBytes(32).toString('base64url')).then((secret) => new TextEncoder().encode(secret))
  const keySecret = config.keySecret ?? (await generated('api_key_secret'))
  const quoteSecret = config.quoteSecret ?? (await generated('quote_secret'))
  return {
    catalogue,
    files,
    clock: Date.now,
    log,
    quoteSecret,
    appUrl: config.appUrl,
    version: packageVersion(),
    publicUrl: config.publicUrl,
    routerOn: (chain) => routerDeployment(config.router.byChain[chain] ?? config.router.address),
    store,
    screener: sanctionsListScreener(sanctions),
    settler: settlerFromConfig(config.payments.settlement),
    payTo: config.payments.payTo,
    keySecret,
    trustProxy: config.trustProxy,
    rateLimits: config.rateLimits,
    mcp: config.mcp,
  }
}
