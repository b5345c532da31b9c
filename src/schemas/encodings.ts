/**
 * What the transaction encoders (src/tx/) can build, declared beside the schemas so the engine can decide, when the
 * catalogue compiles, which venues and bridge lanes a transaction can be built through (DESIGN 7.20) without
 * importing the encoders. The encoders read their parameters through the same declarations, so the two cannot
 * drift; a test builds every declared protocol.
 */

/** How a venue parameter must look in manifest/venues.json `params`. */
export type VenueParamKind = 'string' | 'number' | 'boolean' | 'hex' | 'address'

/** Venue protocols with an encoder, and the parameters each encoder reads. */
export const VENUE_ENCODINGS: Readonly<Record<string, { params: Readonly<Record<string, VenueParamKind>> }>> = {
  'uniswap-v3': { params: { feeTier: 'number' } },
  'pancakeswap-v3': { params: { feeTier: 'number' } },
  curve: { params: {} },
  'curve-ng': { params: {} },
  'pancakeswap-stable': { params: {} },
  aerodrome: { params: { stable: 'boolean', factory: 'address' } },
  velodrome: { params: { stable: 'boolean', factory: 'address' } },
  'balancer-v2': { params: { poolId: 'hex', hubPoolId: 'hex', hubAsset: 'address', vaultAsset: 'address' } },
  mento: { params: { exchangeProvider: 'address', exchangeId: 'hex' } },
}

/**
 * Bridge protocols with an encoder. `needsDomain`: the deposit names the destination by a protocol id (CCTP domain,
 * LayerZero endpoint id). `composeNeedsContract`: a destination order rides a compose, which our executor accepts
 * only from the bridge's known contract on the destination chain. `busCarriesNoCompose`: the bus mode has no compose.
 */
export const BRIDGE_ENCODINGS: Readonly<
  Record<string, { needsDomain: boolean; composeNeedsContract: boolean; busCarriesNoCompose: boolean }>
> = {
  'cctp-v2': { needsDomain: true, composeNeedsContract: false, busCarriesNoCompose: false },
  across: { needsDomain: false, composeNeedsContract: false, busCarriesNoCompose: false },
  'stargate-v2': { needsDomain: true, composeNeedsContract: true, busCarriesNoCompose: true },
  'usdt0-oft': { needsDomain: true, composeNeedsContract: true, busCarriesNoCompose: false },
}

/** Why a step cannot be built: a stable reason and a sentence for operators and agents (no file names). */
export type EncodingGap = {
  reason: 'no_encoding' | 'missing_param' | 'no_destination_id' | 'no_compose_contract' | 'no_compose_in_mode'
  detail: string
}

/** Whether a value fits a declared parameter kind. */
export function fitsParamKind(value: unknown, kind: VenueParamKind): boolean {
  switch (kind) {
    case 'hex':
      return typeof value === 'string' && /^0x(?:[0-9a-fA-F]{2})*$/.test(value)
    case 'address':
      return typeof value === 'string' && /^0x[0-9a-fA-F]{40}$/.test(value)
    default:
      return typeof value === kind
  }
}
