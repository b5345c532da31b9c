import { readFileSync } from 'node:fs'
import { loadCatalogue } from './catalogue/loadCatalogue.ts'
import type { Config } from './config.ts'
import type { AppDeps } from './http/createApp.ts'
import { createLogger } from './logger.ts'
import { routerDeployment } from './tx/routerDeployment.ts'

const PACKAGE_JSON = new URL('../package.json', import.meta.url)

/** The package version, for health and OpenAPI. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version
}

/** Wires the real dependencies from configuration: catalogue from disk, pino logger, wall clock. */
export function buildAppDeps(config: Config): AppDeps {
  const { catalogue, files } = loadCatalogue(config.manifestDir)
  return {
    catalogue,
    files,
    clock: Date.now,
    log: createLogger(config.logLevel),
    quoteSecret: config.quoteSecret,
    appUrl: config.appUrl,
    version: packageVersion(),
    publicUrl: config.publicUrl,
    routerOn: (chain) => routerDeployment(config.router.byChain[chain] ?? config.router.address),
  }
}
