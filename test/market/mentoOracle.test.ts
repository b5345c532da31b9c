import pino from 'pino'
import { type Abi, type Address, createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import type { ChainReadPlan } from '../../src/market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, createChainReader } from '../../src/market/createChainReader.ts'
import { readPlanOf } from '../../src/market/feedCatalogue.ts'
import { createLiveMarket } from '../../src/market/liveMarket.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { compiledTestContracts } from '../chain/testContracts.ts'
import { MANIFEST_DIR } from '../http/testApp.ts'

// KES from Mento's SortedOracles on Celo (issue 17 item 2; live-chain.md (d)): a stand-in SortedOracles at
// manifest/feeds.json's address answers medianRate and medianTimestamp, read through the real chain reader.

const { files } = loadCatalogue(MANIFEST_DIR)
const snapshot = compileCatalogue(files)
const feeds = loadFeedCatalogue(MANIFEST_DIR)
const celo = readPlanOf(feeds, 'CEL', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const [KES] = celo.oracles ?? []
/** SortedOracles' denominator: rates are fixed point with 24 decimals. */
const FIXED1 = 10n ** 24n
const artifact = () => {
  const found = compiledTestContracts('standIns')['SortedOraclesStandIn.sol:StandInSortedOracles']
  if (!found) throw new Error('StandInSortedOracles is missing from the compiled test contracts')
  return found
}

let chain: FeedStandIns & { stop(): Promise<void> }

async function write(functionName: string, args: readonly unknown[]): Promise<void> {
  const [sender] = chain.anvil.accounts
  if (!sender || KES === undefined) throw new Error('no account or no KES oracle in the plan')
  await writeContractAndWait(chain.anvil, sender, { address: KES.address, abi: artifact().abi as Abi, functionName, args })
}

beforeAll(async () => {
  chain = await startFeedStandIns()
  if (KES === undefined) throw new Error('no KES oracle in the CEL plan')
  await chain.anvil.testClient.setCode({ address: KES.address, bytecode: artifact().deployedBytecode })
})

afterAll(async () => {
  await chain?.stop()
})

describe('Mento’s SortedOracles', () => {
  const read = () => createChainReader(createPublicClient({ transport: http(chain.anvil.rpcUrl, CHAIN_RPC_TRANSPORT_OPTIONS) }))
  const oraclesOnly = (): ChainReadPlan => ({ chain: 'CEL', feeds: [], oracles: celo.oracles ?? [] })

  it('reads the median rate as USD per KES to 18 decimals, at its median timestamp', async () => {
    await write('setMedian', [KES?.rateFeedId, (FIXED1 * 81n) / 10_000n, FIXED1, 1_700_000_000n])
    const reading = await read()(oraclesOnly())
    expect(reading.rpcCalls).toBe(3)
    expect(reading.oracles).toEqual([
      { id: 'oracle:KES', ok: true, answer: 81n * 10n ** 14n, decimals: 18, updatedAt: 1_700_000_000, roundId: 0n },
    ])
  })

  it('a rate feed with no report, or an oracle that reverts, is a failed reading with the reason', async () => {
    const other: Address = '0x00000000000000000000000000000000000c0de5'
    const [none] = (await read()({ ...oraclesOnly(), oracles: [{ ...(KES ?? fail()), rateFeedId: other }] })).oracles
    expect(none).toMatchObject({ ok: false, error: expect.stringContaining('it has no median rate (no report)') })
    await write('setFailing', [true])
    const [failing] = (await read()(oraclesOnly())).oracles
    expect(failing).toMatchObject({ ok: false, error: expect.stringContaining('medianRate() failed') })
    await write('setFailing', [false])
  })

  it('prices KES in the live market from the oracle on a Celo read, the rest of the chain placed at the snapshot', async () => {
    const answers = Object.fromEntries(celo.feeds.map((feed) => [feed.id, feed.id === 'native' ? 70_000_000n : 100_000_000n]))
    await chain.placePlan(celo, answers, {}, snapshotDepthPools(celo, snapshot))
    await write('setMedianNow', [KES?.rateFeedId, (FIXED1 * 79n) / 10_000n, FIXED1])
    const market = createLiveMarket({
      files,
      feeds,
      readers: { CEL: read() },
      refreshMs: 4000,
      clock: Date.now,
      log: pino({ level: 'silent' }),
    })
    await market.refresh()
    expect(market.catalogue().fxUsdE18.KES).toBe(79n * 10n ** 14n)
    expect(market.status().currencies.find((entry) => entry.currency === 'KES')).toEqual({
      currency: 'KES',
      source: 'rpc',
      chain: 'CEL',
      block: expect.any(String),
    })
  })
})

function fail(): never {
  throw new Error('no KES oracle')
}
