import * as z from 'zod'
import { AddressSchema } from '../schemas/address.ts'
import { ChainCode, Currency } from '../schemas/catalogue.ts'
import type { ChainReadPlan, FeedSpec } from './chainReading.ts'

const Feed = z.strictObject({ address: AddressSchema, heartbeatSec: z.number().int().positive() })

/** `manifest/feeds.json`: the on-chain feeds the live market reads per chain (live-chain.md (d)). */
export const FeedCatalogue = z.strictObject({
  source: z.string().min(3),
  chains: z.partialRecord(
    ChainCode,
    z.strictObject({
      /** USD per the chain's native token, for gas in USD. */
      native: Feed,
      /** Chainlink's L2 sequencer-uptime feed, where the chain has one. */
      sequencerUptime: AddressSchema.optional(),
      /** USD per one unit of each currency. */
      fx: z.partialRecord(Currency, Feed),
    }),
  ),
})
export type FeedCatalogue = z.infer<typeof FeedCatalogue>

/** The feed id of a chain's native token price. */
export const NATIVE_FEED = 'native'

/** The feed id of a currency's USD rate. */
export const fxFeedId = (currency: Currency): string => `fx:${currency}`

/** What one refresh reads on `chain`: its native price, its FX feeds and its sequencer, in one multicall. */
export function readPlanOf(feeds: FeedCatalogue, chain: ChainCode): ChainReadPlan {
  const entry = feeds.chains[chain]
  if (entry === undefined) return { chain, feeds: [] }
  const specs: FeedSpec[] = [{ id: NATIVE_FEED, address: entry.native.address, heartbeatSec: entry.native.heartbeatSec }]
  for (const [currency, feed] of Object.entries(entry.fx))
    if (feed !== undefined) specs.push({ id: fxFeedId(currency as Currency), address: feed.address, heartbeatSec: feed.heartbeatSec })
  return { chain, feeds: specs, ...(entry.sequencerUptime === undefined ? {} : { sequencerUptimeFeed: entry.sequencerUptime }) }
}
