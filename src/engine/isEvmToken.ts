import { isEvmChain } from '../schemas/catalogue.ts'
import type { CatalogueToken, Token } from './types.ts'

/** Whether a catalogue token is on an EVM chain, so routes may carry it (the others are listed for discovery only). */
export function isEvmToken(token: CatalogueToken): token is Token {
  return isEvmChain(token.chain)
}
