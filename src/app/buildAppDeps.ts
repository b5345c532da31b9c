import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { type LoadedCatalogue, loadCatalogue } from '../catalogue/loadCatalogue.ts'
import { loadSanctionsList, SanctionsListError } from '../compliance/loadSanctionsList.ts'
import type { SanctionsList } from '../schemas/sanctions.ts'
import { sanctionsListScreener } from '../compliance/sanctionsListScreener.ts'
import type { Config, MppConfig } from '../config.ts'
import type { TempoCharge } from '../payments/mpp/createTempoCharge.ts'
import { CatalogueError } from '../engine/index.ts'
import type { ServerDeps } from './createServer.ts'
import { createLogger } from './createLogger.ts'
import { type ChainIdChecks, chainIdChecksFromConfig } from './chainIdCheck.ts'
import { marketFromConfig } from './marketFromConfig.ts'
import { simulatorsFromConfig } from './simulatorsFromConfig.ts'
import type { LiveMarket } from '../market/liveMarket.ts'
import { settlerFromConfig } from './settlerFromConfig.ts'
import { createAcrossFeesStore } from '../store/createAcrossFeesStore.ts'
import { openStore } from '../store/openStore.ts'
import type { Store } from '../store/createStore.ts'
import { routerDeployment } from '../tx/routerDeployment.ts'

const PACKAGE_JSON = new URL('../../package.json', import.meta.url)

/** The package version, for health and OpenAPI. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version
}

/**
 * Wires the real dependencies from configuration: catalogue and sanctions list from disk, the store (PGlite or
 * PostgreSQL, migrated), the settler, pino logger (on stderr unless `log` is given), wall clock. The caller closes
 * `store.sql` on shutdown. A catalogue or sanctions list that cannot be used rejects with one line naming the file
 * and the variable to change, after closing the store. Every client made from SWAPEAZI_RPC_URLS (the live market's,
 * the pre-flight simulation's) waits for its chain-id check: `chainIds` when given (serve shares them with its tracker
 * and relayer), else made here.
 */
export async function buildAppDeps(
  config: Config,
  log: Logger = createLogger(config.logLevel),
  options: { chainIds?: ChainIdChecks } = {},
): Promise<ServerDeps> {
  const chainIds = options.chainIds ?? chainIdChecksFromConfig(config, log)
  // The store opens (its files read, PGlite's WebAssembly compiled off the main thread) while the catalogue compiles.
  const opening = openStore(config.store)
  let loaded: { catalogue: LoadedCatalogue; sanctions: SanctionsList }
  try {
    loaded = loadFiles(config)
  } catch (error) {
    await opening.then(
      (store) => store.sql.close(),
      () => {},
    )
    throw error
  }
  const { catalogue, files } = loaded.catalogue
  const { sanctions } = loaded
  const store: Store = await opening
  const generated = (name: string): Promise<Uint8Array> =>
    store.keys.sharedSecret(name, () => randomBytes(32).toString('base64url')).then((secret) => new TextEncoder().encode(secret))
  const [keySecret, quoteSecret] = await Promise.all([
    config.keySecret ?? generated('api_key_secret'),
    config.quoteSecret ?? generated('quote_secret'),
  ])
  const mpp = config.payments.mpp === undefined ? undefined : await mppRail(config.payments.mpp, files.pricing.mppCallFeePathUsd, generated)
  let market: LiveMarket | undefined
  try {
    // Each Across lane's last reads are kept in the store: a restart within their 5 minutes serves Across routes at once.
    market = await marketFromConfig(config, files, log, { acrossFeesKeeper: createAcrossFeesStore(store.sql), chainIds })
  } catch (error) {
    await store.sql.close()
    throw error
  }
  const deps: ServerDeps = {
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
    ...(mpp === undefined ? {} : { mpp }),
    keySecret,
    trustProxy: config.trustProxy,
    rateLimits: config.rateLimits,
    mcp: config.mcp,
    ...(market === undefined ? {} : { market }),
    ...(market === undefined ? {} : { simulators: simulatorsFromConfig(config, chainIds) }),
  }
  // The live market replaces its catalogue after each refresh; every use case reads deps.catalogue when it runs.
  if (market !== undefined) Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
  return deps
}

/**
 * The MPP rail (DESIGN 7.25), loaded only when configured: mppx takes about 0.9 s to import. Its secret is configured,
 * or generated once and kept in the store, so every replica issues and verifies the same challenges.
 */
async function mppRail(mpp: MppConfig, amount: string, generated: (name: string) => Promise<Uint8Array>): Promise<TempoCharge> {
  const [{ createTempoCharge }, secretKey] = await Promise.all([
    import('../payments/mpp/createTempoCharge.ts'),
    mpp.secretKey ?? generated('mpp_secret_key').then((secret) => new TextDecoder().decode(secret)),
  ])
  return createTempoCharge({ ...mpp, secretKey, amount, description: 'SwapEazi swap build' })
}

/** The catalogue and the sanctions list, or one line naming the file at fault and the variable that chose it. */
function loadFiles(config: Config): { catalogue: LoadedCatalogue; sanctions: SanctionsList } {
  let catalogue: LoadedCatalogue
  try {
    catalogue = loadCatalogue(config.manifestDir)
  } catch (error) {
    if (!(error instanceof CatalogueError)) throw error
    throw new Error(
      `catalogue error: ${join(config.manifestDir, `${error.file}.json`)}: ${error.field}: ${error.detail}; correct the file, or set SWAPEAZI_MANIFEST_DIR to a directory holding the whole catalogue`,
      { cause: error },
    )
  }
  try {
    return { catalogue, sanctions: loadSanctionsList(config.sanctionsFile) }
  } catch (error) {
    if (!(error instanceof SanctionsListError)) throw error
    throw new Error(
      `sanctions list error: ${error.message}; correct the file, or set SWAPEAZI_SANCTIONS_FILE to a readable OFAC list (default: sanctioned-addresses.json in SWAPEAZI_MANIFEST_DIR)`,
      { cause: error },
    )
  }
}
