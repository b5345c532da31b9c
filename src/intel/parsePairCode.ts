import { CHAIN_CODES, type ChainCode, CURRENCIES, type Currency } from '../schemas/catalogue.ts'
import type { PairSide } from '../schemas/intelligence.ts'

export type { PairSide }

export type CorridorPair = { code: string; from: PairSide; to: PairSide }

export type ParsePairCodeReturnType = { ok: true; pair: CorridorPair } | { ok: false; message: string }

/** DESIGN 7.17: every code a pair side may take. Chain and currency codes are disjoint. */
export const PAIR_CODES = { chains: CHAIN_CODES, currencies: CURRENCIES } as const

function side(text: string): PairSide | undefined {
  const code = text.toUpperCase()
  if ((CHAIN_CODES as readonly string[]).includes(code)) return { kind: 'chain', code: code as ChainCode }
  if ((CURRENCIES as readonly string[]).includes(code)) return { kind: 'currency', code: code as Currency }
  return undefined
}

/**
 * Parses `<A>-<B>` (DESIGN 7.17), case-insensitive: A is the source side, B the destination; each a chain code or a
 * currency code. The canonical code is upper case.
 */
export function parsePairCode(text: string): ParsePairCodeReturnType {
  const parts = text.split('-')
  if (parts.length !== 2 || parts.some((part) => part.length === 0))
    return { ok: false, message: `"${text.slice(0, 40)}" is not two codes joined by one hyphen, such as USD-BAS or BAS-TRX` }
  const [a = '', b = ''] = parts
  const from = side(a)
  const to = side(b)
  const unknown = [from === undefined ? a : undefined, to === undefined ? b : undefined].filter((code) => code !== undefined)
  if (from === undefined || to === undefined)
    return {
      ok: false,
      message: `${unknown.map((code) => `"${code.slice(0, 20)}"`).join(' and ')} ${unknown.length === 1 ? 'is not a' : 'are not'} chain or currency code${unknown.length === 1 ? '' : 's'}`,
    }
  return { ok: true, pair: { code: `${from.code}-${to.code}`, from, to } }
}
