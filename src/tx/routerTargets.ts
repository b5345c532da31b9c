import type { Address } from 'viem'
import type { Catalogue } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'

export type RouterTarget = { address: Address; why: string }

/**
 * Every contract our router on `chain` must allow: the venues it swaps on, the bridges it deposits into, and the
 * contracts that deliver bridged tokens to its executor there (and, for LayerZero, the OFT that credited them).
 * `swapeazi router allow` sets exactly these; the chain tests allow-list their stand-ins the same way.
 */
export function routerTargets(catalogue: Catalogue, chain: ChainCode): RouterTarget[] {
  const found = new Map<string, RouterTarget>()
  const add = (address: Address | undefined, why: string): void => {
    if (address === undefined) return
    const key = address.toLowerCase()
    if (!found.has(key)) found.set(key, { address, why })
  }
  for (const venue of catalogue.venues) if (venue.chain === chain) add(venue.contract, `venue ${venue.id}`)
  for (const [key, lanes] of catalogue.lanes) {
    const [source, destination] = key.split('>')
    for (const lane of lanes) {
      if (source === chain) add(lane.sourceContract, `bridge ${lane.bridge.id} deposit`)
      if (destination === chain && lane.bridge.carriesDestinationCalls) {
        add(lane.deliveredBy, `bridge ${lane.bridge.id} delivery`)
        if (lane.bridge.protocol === 'stargate-v2' || lane.bridge.protocol === 'usdt0-oft')
          add(lane.destinationContract, `bridge ${lane.bridge.id} OFT`)
      }
    }
  }
  return [...found.values()]
}
