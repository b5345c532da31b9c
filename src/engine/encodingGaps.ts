import { BRIDGE_ENCODINGS, type EncodingGap, fitsParamKind, VENUE_ENCODINGS } from '../schemas/encodings.ts'
import type { BridgeLane, Venue } from './types.ts'

const CHAIN_NAMES: Readonly<Record<string, string>> = {
  ETH: 'Ethereum',
  BAS: 'Base',
  POL: 'Polygon',
  ARB: 'Arbitrum',
  OPT: 'Optimism',
  BNB: 'BNB Chain',
  GNO: 'Gnosis',
  CEL: 'Celo',
}
const chainName = (code: string): string => CHAIN_NAMES[code] ?? code

/** Why a transaction cannot be built through this venue, or undefined when it can (DESIGN 7.20). */
export function venueEncodingGap(venue: Pick<Venue, 'name' | 'protocol' | 'chain' | 'params'>): EncodingGap | undefined {
  const encoding = VENUE_ENCODINGS[venue.protocol]
  if (encoding === undefined)
    return {
      reason: 'no_encoding',
      detail: `SwapEazi cannot yet build a swap on ${venue.name} (${venue.protocol}) on ${chainName(venue.chain)}`,
    }
  for (const [name, kind] of Object.entries(encoding.params))
    if (!fitsParamKind(venue.params[name], kind))
      return {
        reason: 'missing_param',
        detail: `${venue.name} on ${chainName(venue.chain)} lacks the on-chain parameter a swap through it needs (${name})`,
      }
  return undefined
}

/** Why a deposit on this lane cannot be built at all, or undefined when a plain delivery can. */
export function laneEncodingGap(lane: Pick<BridgeLane, 'bridge' | 'from' | 'to' | 'destinationDomain'>): EncodingGap | undefined {
  const { bridge } = lane
  const encoding = BRIDGE_ENCODINGS[bridge.protocol]
  const where = `${bridge.name} from ${chainName(lane.from.chain)} to ${chainName(lane.to.chain)}`
  if (encoding === undefined) return { reason: 'no_encoding', detail: `SwapEazi cannot yet build a deposit on ${where}` }
  if (encoding.needsDomain && lane.destinationDomain === undefined)
    return { reason: 'no_destination_id', detail: `${where} has no destination id SwapEazi knows` }
  return undefined
}

/**
 * Why this lane cannot carry a destination order (a swap on arrival, run by our executor there), or undefined when
 * it can. A lane that cannot still delivers plainly, if `laneEncodingGap` allows.
 */
export function laneComposeGap(
  lane: Pick<BridgeLane, 'bridge' | 'from' | 'to' | 'destinationDomain' | 'destinationContract'>,
): EncodingGap | undefined {
  const gap = laneEncodingGap(lane)
  if (gap !== undefined) return gap
  const { bridge } = lane
  const encoding = BRIDGE_ENCODINGS[bridge.protocol]
  const where = `${bridge.name} from ${chainName(lane.from.chain)} to ${chainName(lane.to.chain)}`
  if (!bridge.carriesDestinationCalls || (encoding?.busCarriesNoCompose === true && bridge.mode === 'bus'))
    return { reason: 'no_compose_in_mode', detail: `${where} cannot carry a swap to run on arrival` }
  if (encoding?.composeNeedsContract === true && lane.destinationContract === undefined)
    return {
      reason: 'no_compose_contract',
      detail: `${where} has no contract on ${chainName(lane.to.chain)} known to SwapEazi that could hand a swap to run on arrival to its executor`,
    }
  return undefined
}
