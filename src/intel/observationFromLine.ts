import { type Catalogue, NO_BRIDGE, parseUnitsExact } from '../engine/index.ts'
import type { ObservationLine } from '../schemas/intelligence.ts'
import type { Observation } from '../store/createIntelStore.ts'
import { corridorPart, outcomePart } from './observationParts.ts'

export type ObservationFromLineReturnType = { ok: true; observation: Observation } | { ok: false; field: string; message: string }

/**
 * Checks a schema-valid import line against the catalogue (tokens listed on their chains, a bridge quotes name,
 * no more fraction digits than the token has) and turns it into an observation with its currencies and USD value.
 */
export function observationFromLine(catalogue: Catalogue, line: ObservationLine): ObservationFromLineReturnType {
  const from = catalogue.allTokensByLowerKey.get(`${line.fromChain}:${line.fromToken.toLowerCase()}`)
  if (from === undefined)
    return { ok: false, field: 'fromToken', message: `${line.fromToken} is not listed on ${line.fromChain} in the catalogue` }
  const to = catalogue.allTokensByLowerKey.get(`${line.toChain}:${line.toToken.toLowerCase()}`)
  if (to === undefined) return { ok: false, field: 'toToken', message: `${line.toToken} is not listed on ${line.toChain} in the catalogue` }
  const bridge = line.bridge.toLowerCase()
  const names = catalogue.bridgeNames
  if (!names.includes(bridge)) return { ok: false, field: 'bridge', message: `must be one of ${names.join(', ')}` }
  const isSameChain = line.fromChain === line.toChain
  if (isSameChain !== (bridge === NO_BRIDGE))
    return {
      ok: false,
      field: 'bridge',
      message: isSameChain
        ? `must be ${NO_BRIDGE} for a same-chain swap`
        : `a transfer from ${line.fromChain} to ${line.toChain} needs a bridge, not ${NO_BRIDGE}`,
    }
  const amount = parseUnitsExact(line.amount, from.decimals, { strict: false })
  if (!amount.ok)
    return { ok: false, field: 'amount', message: `has more than ${from.decimals} fraction digits, the decimals of ${from.symbol}` }
  if (amount.value === 0n) return { ok: false, field: 'amount', message: 'must be greater than 0' }
  return {
    ok: true,
    observation: {
      id: line.id,
      observedAt: new Date(line.observedAt),
      ...corridorPart(from, to, { text: line.amount, atomic: amount.value }),
      bridge,
      quotedDurationSec: line.quotedDurationSec ?? null,
      ...outcomePart(line),
      source: 'import',
    },
  }
}
