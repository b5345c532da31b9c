import { join } from 'node:path'
import type * as z from 'zod'
import { type Catalogue, type CatalogueFiles, CatalogueError, compileCatalogue } from '../engine/index.ts'
import { MAX_CATALOGUE_FILE_BYTES, readJsonFile } from '../schemas/readJsonFile.ts'
import { BridgesFile, ChainsFile, CorridorsFile, MarketFile, PricingFile, TokensFile, VenuesFile } from '../schemas/catalogue.ts'

const SCHEMAS = {
  chains: ChainsFile,
  tokens: TokensFile,
  corridors: CorridorsFile,
  venues: VenuesFile,
  bridges: BridgesFile,
  market: MarketFile,
  pricing: PricingFile,
} as const

export type LoadedCatalogue = { catalogue: Catalogue; files: CatalogueFiles }

function parseFile<S extends z.ZodType>(dir: string, name: string, schema: S): z.infer<S> {
  let json: unknown
  try {
    json = readJsonFile(join(dir, `${name}.json`), MAX_CATALOGUE_FILE_BYTES, 'a catalogue file')
  } catch (error) {
    throw new CatalogueError(name, '(file)', error instanceof Error ? error.message : String(error))
  }
  const parsed = schema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue?.path
      .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
      .join('')
      .replace(/^\./, '')
    throw new CatalogueError(name, field || '(root)', issue?.message ?? 'invalid')
  }
  return parsed.data
}

/**
 * Reads and validates every file of the catalogue directory (default `manifest/`), then compiles it for the engine.
 * Throws a CatalogueError naming the file and field at fault, so a malformed catalogue stops the service at start.
 */
export function loadCatalogue(dir: string): LoadedCatalogue {
  const files = {} as Record<keyof typeof SCHEMAS, unknown>
  for (const [name, schema] of Object.entries(SCHEMAS)) files[name as keyof typeof SCHEMAS] = parseFile(dir, name, schema)
  const typed = files as CatalogueFiles
  return { catalogue: compileCatalogue(typed), files: typed }
}
