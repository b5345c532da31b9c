import * as z from 'zod'
import { AddressSchema } from '../schemas/address.ts'
import { ChainCode, Currency, type VenueEntry } from '../schemas/catalogue.ts'
import type { ChainReadPlan, FeedSpec, PoolSpec } from './chainReading.ts'

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

/**
 * The protocols whose `stableswap` venues are priced from balances the venue's `contract` answers with
 * `balances(uint256)` (live-chain.md (e)). Solidly stable pools are not read: the catalogue names their router, not
 * the pool.
 */
const BALANCE_READ_PROTOCOLS: ReadonlySet<string> = new Set(['curve', 'curve-ng', 'pancakeswap-stable'])

/**
 * What one refresh reads on `chain`, in one multicall: its native price, its FX feeds, its sequencer and, given the
 * catalogue's venues, the balances of each balance-model pool on the chain (`pools`).
 */
export function readPlanOf(feeds: FeedCatalogue, chain: ChainCode, venues?: readonly VenueEntry[]): ChainReadPlan {
  const pools = venues === undefined ? undefined : poolsOf(venues, chain)
  const withPools = pools === undefined ? {} : { pools }
  const entry = feeds.chains[chain]
  if (entry === undefined) return { chain, feeds: [], ...withPools }
  const specs: FeedSpec[] = [{ id: NATIVE_FEED, address: entry.native.address, heartbeatSec: entry.native.heartbeatSec }]
  for (const [currency, feed] of Object.entries(entry.fx))
    if (feed !== undefined) specs.push({ id: fxFeedId(currency as Currency), address: feed.address, heartbeatSec: feed.heartbeatSec })
  return {
    chain,
    feeds: specs,
    ...(entry.sequencerUptime === undefined ? {} : { sequencerUptimeFeed: entry.sequencerUptime }),
    ...withPools,
  }
}

/** The chain's `stableswap` venues whose balances their contract answers, in the catalogue's order. */
function poolsOf(venues: readonly VenueEntry[], chain: ChainCode): PoolSpec[] {
  return venues
    .filter((venue) => venue.chain === chain && venue.model === 'stableswap' && BALANCE_READ_PROTOCOLS.has(venue.protocol))
    .map((venue) => ({ id: venue.id, address: venue.contract, coins: venue.tokens.length }))
}
