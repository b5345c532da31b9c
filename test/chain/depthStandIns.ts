// Depth-venue quote stand-ins (test/chain/contracts/DepthStandIns.sol) placed at the addresses the live market quotes
// (the catalogue's QuoterV2 per chain in manifest/feeds.json, its Balancer Vault and Mento Broker in
// manifest/venues.json), answering from constant-product pools a test sets: the pools' reserves (price and depth),
// how much of each token they can actually pay out (a drained pool), and a quoter whose every call reverts. The
// feed stand-ins' pattern (test/chain/feedStandIns.ts).
import type { Abi, Address, Hex } from 'viem'
import type { CompiledContract } from '../../src/contracts/compileSolidity.ts'
import type { Catalogue } from '../../src/engine/index.ts'
import type { ChainReadPlan, LadderQuote } from '../../src/market/chainReading.ts'
import type { TradingLimitConfig, TradingLimitState } from '../../src/market/mentoTradingLimits.ts'
import { type AnvilInstance, writeContractAndWait } from './anvil.ts'
import { compiledTestContracts } from './testContracts.ts'

type StandIn = 'StandInQuoterV2' | 'StandInBalancerVault' | 'StandInMentoBroker'

/**
 * A stand-in pool: a constant product over `reserves` (of its two tokens, in the order named), of which only
 * `available` can be paid out (default all of it), with a fee in ppm taken from the input.
 */
export type DepthPool = { reserves: readonly [bigint, bigint]; available?: readonly [bigint, bigint]; feePpm: number }

/** Controls over depth stand-ins on one anvil node. Each change is one transaction, mined in a block of its own. */
export type DepthStandIns = {
  /** Puts the stand-in's runtime code at `address` (anvil_setCode). */
  place(address: Address, standIn: StandIn): Promise<void>
  /** The QuoterV2 at `quoter` quotes the (tokenA, tokenB, fee) pool from these reserves; `pool.feePpm` is ignored. */
  setQuoterPool(quoter: Address, tokens: readonly [Address, Address], fee: number, pool: Omit<DepthPool, 'feePpm'>): Promise<void>
  /** The Vault at `vault` trades pool `poolId` between the two tokens from these reserves. */
  setVaultPool(vault: Address, poolId: Hex, tokens: readonly [Address, Address], pool: DepthPool): Promise<void>
  /** The Broker at `broker` trades exchange `exchangeId` between the two tokens from these reserves. */
  setExchange(broker: Address, exchangeId: Hex, tokens: readonly [Address, Address], pool: DepthPool): Promise<void>
  /** While failing, every quote of the stand-in at `address` reverts. */
  setFailing(address: Address, standIn: StandIn, failing: boolean): Promise<void>
  /**
   * The Mento Broker stand-in at `broker` (StandInMentoBroker, or VenueStandIns.sol's MentoBrokerStandIn: both keep
   * the Broker's trading limits, test/chain/contracts/MentoTradingLimits.sol) holds this config and state for `token`
   * in exchange `exchangeId`.
   */
  setTradingLimit(broker: Address, exchangeId: Hex, token: Address, config: TradingLimitConfig, state: TradingLimitState): Promise<void>
  /** While failing, reading the trading limits of the Broker stand-in at `broker` reverts (its quotes still answer). */
  setTradingLimitsFailing(broker: Address, failing: boolean): Promise<void>
  /**
   * Every depth venue of a live-market plan quoted by a stand-in at the plan's address, from the pool `pools` gives
   * its venue id (required for each), reserves in the order of the venue's first direction (from, to). A Balancer
   * venue's two pools each hold the hub asset at `hubReserve` (default 10^24) against their token.
   */
  placeLadders(plan: ChainReadPlan, pools: Readonly<Record<string, DepthPool>>, hubReserve?: bigint): Promise<void>
}

const artifacts = new Map<StandIn, CompiledContract>()

/** A depth stand-in's ABI and bytecode, from the test contracts' compilation (test/chain/testContracts.ts). */
export function depthStandInArtifact(standIn: StandIn): CompiledContract {
  const known = artifacts.get(standIn)
  if (known) return known
  const found = compiledTestContracts('standIns')[`DepthStandIns.sol:${standIn}`]
  if (!found) throw new Error(`depth stand-ins: ${standIn} is missing from the compiled test contracts`)
  artifacts.set(standIn, found)
  return found
}

const STAND_IN_OF: Record<LadderQuote['kind'], StandIn> = {
  quoterV2: 'StandInQuoterV2',
  balancerQuery: 'StandInBalancerVault',
  mentoBroker: 'StandInMentoBroker',
}

/** Depth stand-in controls over an anvil node already running (for example the feed stand-ins' node). */
export function depthStandIns(anvil: AnvilInstance): DepthStandIns {
  const [sender] = anvil.accounts
  if (!sender) throw new Error('anvil has no accounts')
  const write = async (standIn: StandIn, address: Address, functionName: string, args: readonly unknown[]): Promise<void> => {
    const abi: Abi = depthStandInArtifact(standIn).abi
    await writeContractAndWait(anvil, sender, { address, abi, functionName, args })
  }
  const availableOf = (pool: Omit<DepthPool, 'feePpm'>): readonly [bigint, bigint] => pool.available ?? pool.reserves
  const place = async (address: Address, standIn: StandIn): Promise<void> => {
    await anvil.testClient.setCode({ address, bytecode: depthStandInArtifact(standIn).deployedBytecode })
  }
  const controls: DepthStandIns = {
    place,
    setQuoterPool: (quoter, tokens, fee, pool) =>
      write('StandInQuoterV2', quoter, 'setPool', [tokens[0], tokens[1], fee, pool.reserves, availableOf(pool)]),
    setVaultPool: (vault, poolId, tokens, pool) =>
      write('StandInBalancerVault', vault, 'setPool', [
        poolId,
        tokens[0],
        tokens[1],
        BigInt(pool.feePpm),
        pool.reserves,
        availableOf(pool),
      ]),
    setExchange: (broker, exchangeId, tokens, pool) =>
      write('StandInMentoBroker', broker, 'setExchange', [
        exchangeId,
        tokens[0],
        tokens[1],
        BigInt(pool.feePpm),
        pool.reserves,
        availableOf(pool),
      ]),
    setFailing: (address, standIn, failing) => write(standIn, address, 'setFailing', [failing]),
    setTradingLimit: (broker, exchangeId, token, config, state) =>
      write('StandInMentoBroker', broker, 'setTradingLimit', [
        exchangeId,
        token,
        { ...config, limit0: Number(config.limit0), limit1: Number(config.limit1), limitGlobal: Number(config.limitGlobal) },
        {
          ...state,
          netflow0: Number(state.netflow0),
          netflow1: Number(state.netflow1),
          netflowGlobal: Number(state.netflowGlobal),
        },
      ]),
    setTradingLimitsFailing: (broker, failing) => write('StandInMentoBroker', broker, 'setTradingLimitsFailing', [failing]),
    async placeLadders(plan, pools, hubReserve = 10n ** 24n) {
      const placed = new Set<Address>()
      for (const ladder of plan.ladders ?? []) {
        const pool = pools[ladder.id]
        if (pool === undefined) throw new Error(`depth stand-ins: no pool given for venue ${ladder.id} on ${plan.chain}`)
        const [direction] = ladder.directions
        if (direction === undefined) continue
        const { quote } = direction
        const address = quote.kind === 'quoterV2' ? quote.quoter : quote.kind === 'balancerQuery' ? quote.vault : quote.broker
        if (!placed.has(address)) {
          await place(address, STAND_IN_OF[quote.kind])
          placed.add(address)
        }
        switch (quote.kind) {
          case 'quoterV2':
            await controls.setQuoterPool(quote.quoter, [quote.tokenIn, quote.tokenOut], quote.fee, pool)
            break
          case 'balancerQuery': {
            const [from, hub, to] = quote.assets
            const [first, second] = quote.poolIds
            const [reserveFrom, reserveTo] = pool.reserves
            const [availableFrom, availableTo] = availableOf(pool)
            await controls.setVaultPool(quote.vault, first, [from, hub], {
              reserves: [reserveFrom, hubReserve],
              available: [availableFrom, hubReserve],
              feePpm: pool.feePpm,
            })
            await controls.setVaultPool(quote.vault, second, [hub, to], {
              reserves: [hubReserve, reserveTo],
              available: [hubReserve, availableTo],
              feePpm: 0,
            })
            break
          }
          case 'mentoBroker':
            await controls.setExchange(quote.broker, quote.exchangeId, [quote.tokenIn, quote.tokenOut], pool)
            break
        }
      }
    },
  }
  return controls
}

/**
 * Each depth venue of `plan` as a stand-in pool over the virtual reserves the snapshot prices it at (market.json
 * `depthUsd` a side, at the catalogue's token prices; fee: the venue's), in the order of its first direction: the
 * live quotes then pay about what the snapshot's depth model does.
 */
export function snapshotDepthPools(plan: ChainReadPlan, catalogue: Catalogue): Record<string, DepthPool> {
  const pools: Record<string, DepthPool> = {}
  for (const ladder of plan.ladders ?? []) {
    const venue = catalogue.venues.find((candidate) => candidate.id === ladder.id)
    const [direction] = ladder.directions
    if (venue?.pricing.model !== 'depth' || direction === undefined) throw new Error(`depth stand-ins: ${ladder.id} has no snapshot depth`)
    const { depthUsdE18 } = venue.pricing
    const reserveOf = (symbol: string): bigint => {
      const token = venue.tokens.find((candidate) => candidate.symbol === symbol)
      if (token === undefined) throw new Error(`depth stand-ins: ${ladder.id} has no ${symbol}`)
      return (depthUsdE18 * 10n ** BigInt(token.decimals)) / token.priceUsdE18
    }
    pools[ladder.id] = { reserves: [reserveOf(direction.from), reserveOf(direction.to)], feePpm: Number(venue.feePpm) }
  }
  return pools
}
