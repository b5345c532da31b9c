import type { Bridge } from './types.ts'

/** What a same-chain route names as its bridge, in quotes and in observations. */
export const NO_BRIDGE = 'none'

/**
 * A bridge's name on the wire (QuoteResult.bridge, observations, intelligence): protocol plus mode
 * ("cctp-v2-fast", "stargate-v2-taxi"), else the protocol ("across").
 */
export function bridgeWireName(bridge: Pick<Bridge, 'protocol' | 'mode'>): string {
  return bridge.mode ? `${bridge.protocol}-${bridge.mode}` : bridge.protocol
}
