import type { CatalogueFiles } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'

/** A transaction on its chain's block explorer (manifest/chains.json `explorer`); null when the chain names none. */
export function explorerTxUrl(files: Pick<CatalogueFiles, 'chains'>, chain: ChainCode, txHash: string): string | null {
  const base = files.chains.chains.find((entry) => entry.id === chain)?.explorer
  return base === undefined ? null : `${base.replace(/\/$/, '')}/tx/${txHash}`
}
