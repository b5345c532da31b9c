import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Address, createPublicClient, http, parseGwei } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChainReadError, type ChainReadPlan } from '../../src/market/chainReading.ts'
import { CHAIN_RPC_TRANSPORT_OPTIONS, type ChainReaderClient, createChainReader } from '../../src/market/createChainReader.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { type PoolStandIns, poolStandIns } from '../chain/poolStandIns.ts'
import { closedPort } from '../support/closedPort.ts'

// Base's EUR/USD, GBP/USD and SGD/USD feeds (live-chain.md (d)); any address serves for the sequencer feed and for
// one with no code.
const EUR_FEED: Address = '0xc91D87E81faB8f93699ECf7Ee9B44D11e1D53F0F'
const GBP_FEED: Address = '0xCceA6576904C118037695eB71195a5425E69Fa15'
const SGD_FEED: Address = '0x81575495532fB311Efc5C993B612564274F0949b'
const SEQUENCER_FEED: Address = '0xBCF85224fc0756B9Fa45aA7892530B47e10b6433'
const NO_CODE: Address = '0x00000000000000000000000000000000000fee0d'
// Ethereum's Curve 3pool (DAI, USDC, USDT) and PYUSD/USDC NG pool (manifest/venues.json).
const THREE_POOL: Address = '0xbEbc44782C7dB0a1A60Cb6fe97d0b483032FF1C7'
const PYUSD_POOL: Address = '0x383E6b4437b59fff47B619CBA855CA29342A8559'
const THREE_POOL_BALANCES = [45_000_000n * 10n ** 18n, 46_000_000n * 10n ** 6n, 78_000_000n * 10n ** 6n]

const EUR_USD = 108_000_000n // 1.08, 8 decimals
const GBP_USD = 127_500_000n

const plan = (overrides: Partial<ChainReadPlan> = {}): ChainReadPlan => ({
  chain: 'BAS',
  feeds: [
    { id: 'fx:EUR', address: EUR_FEED, heartbeatSec: 86_400 },
    { id: 'fx:GBP', address: GBP_FEED, heartbeatSec: 86_400 },
  ],
  sequencerUptimeFeed: SEQUENCER_FEED,
  ...overrides,
})

let feeds: FeedStandIns & { stop(): Promise<void> }
let pools: PoolStandIns
/** HTTP requests the reader's client sent, counted by viem's transport as it sends each. */
let requests = 0
let client: ChainReaderClient

beforeAll(async () => {
  feeds = await startFeedStandIns()
  const { timestamp } = await feeds.latestBlock()
  await feeds.placeFeed(EUR_FEED, { description: 'EUR / USD', answer: EUR_USD, updatedAt: timestamp - 60 })
  await feeds.placeFeed(GBP_FEED, { description: 'GBP / USD', answer: GBP_USD })
  await feeds.placeFeed(SGD_FEED, { description: 'SGD / USD', answer: 74_000_000n })
  await feeds.setSequencer(SEQUENCER_FEED, { isUp: true, since: timestamp - 3_600 })
  pools = poolStandIns(feeds.anvil)
  await pools.placePool(THREE_POOL, THREE_POOL_BALANCES)
  await pools.placePool(PYUSD_POOL, [20_000_000n * 10n ** 6n, 20_500_000n * 10n ** 6n])
  client = createPublicClient({
    transport: http(feeds.anvil.rpcUrl, {
      ...CHAIN_RPC_TRANSPORT_OPTIONS,
      onFetchRequest: () => {
        requests += 1
      },
    }),
  })
})

afterAll(async () => {
  await feeds?.stop()
})

describe('createChainReader', () => {
  it('reads every feed, the sequencer and gas at the latest block', async () => {
    const latest = await feeds.latestBlock()
    const reading = await createChainReader(client)(plan())
    expect(reading.chain).toBe('BAS')
    expect(reading.blockNumber).toBe(latest.number)
    expect(reading.blockTimestamp).toBe(latest.timestamp)
    const [eur, gbp] = reading.feeds
    expect(eur).toEqual({ id: 'fx:EUR', ok: true, answer: EUR_USD, decimals: 8, roundId: 1n, updatedAt: expect.any(Number) })
    expect(gbp).toMatchObject({ id: 'fx:GBP', ok: true, answer: GBP_USD, decimals: 8, roundId: 1n })
    expect(reading.sequencer).toEqual({ isUp: true, since: expect.any(Number) })
  })

  it('takes every figure from the block it pinned, though the chain moves on before the reads', async () => {
    await feeds.setRound(EUR_FEED, EUR_USD)
    const before = await feeds.latestBlock()
    // The feed moves (in a block of its own) between pinning the block and reading the feeds and fees.
    const askedAt: bigint[] = []
    const moving: ChainReaderClient = {
      getBlock: async (parameters) => {
        const block = await client.getBlock(parameters)
        await feeds.setRound(EUR_FEED, 110_000_000n)
        return block
      },
      multicall: (parameters) => {
        askedAt.push(parameters.blockNumber)
        return client.multicall(parameters)
      },
      getFeeHistory: (parameters) => {
        askedAt.push(parameters.blockNumber)
        return client.getFeeHistory(parameters)
      },
    }
    const pinned = await createChainReader(moving)(plan())
    expect(pinned.blockNumber).toBe(before.number)
    expect(pinned.feeds[0]).toMatchObject({ ok: true, answer: EUR_USD })
    // The fee history ends at the pinned block too. (Its next-block base fee is not compared here: for a block
    // before the latest, anvil 1.x answers the pending block's base fee as the last entry where geth answers the
    // block after the one asked; the last test compares it where the two agree.)
    expect(askedAt).toEqual([before.number, before.number])

    const fresh = await createChainReader(client)(plan())
    expect(fresh.blockNumber).toBe(before.number + 1n)
    expect(fresh.feeds[0]).toMatchObject({ ok: true, answer: 110_000_000n })
    await feeds.setRound(EUR_FEED, EUR_USD)
  })

  it('reads each pool’s balances in the same multicall, at the block it pinned, though the pool moves before the read', async () => {
    const withPools = plan({
      pools: [
        { id: 'eth-curve-3pool', address: THREE_POOL, coins: 3 },
        { id: 'eth-curve-pyusd-usdc', address: PYUSD_POOL, coins: 2 },
      ],
    })
    const before = await feeds.latestBlock()
    const drained = [THREE_POOL_BALANCES[0] ?? 0n, 1_000_000n * 10n ** 6n, THREE_POOL_BALANCES[2] ?? 0n]
    const askedAt: bigint[] = []
    const moving: ChainReaderClient = {
      getBlock: async (parameters) => {
        const block = await client.getBlock(parameters)
        await pools.setBalances(THREE_POOL, drained)
        return block
      },
      multicall: (parameters) => {
        askedAt.push(parameters.blockNumber)
        return client.multicall(parameters)
      },
      getFeeHistory: (parameters) => client.getFeeHistory(parameters),
    }
    const pinned = await createChainReader(moving)(withPools)
    expect(pinned.blockNumber).toBe(before.number)
    expect(askedAt).toEqual([before.number])
    expect(pinned.pools).toEqual([
      { id: 'eth-curve-3pool', ok: true, balances: THREE_POOL_BALANCES },
      { id: 'eth-curve-pyusd-usdc', ok: true, balances: [20_000_000n * 10n ** 6n, 20_500_000n * 10n ** 6n] },
    ])
    expect(pinned.rpcCalls).toBe(3)

    const fresh = await createChainReader(client)(withPools)
    expect(fresh.blockNumber).toBe(before.number + 1n)
    expect(fresh.pools[0]).toEqual({ id: 'eth-curve-3pool', ok: true, balances: drained })
    await pools.setBalances(THREE_POOL, THREE_POOL_BALANCES)
  })

  it('fails a pool whose read reverts, has no code or holds none of a coin, and still reads the others', async () => {
    await pools.setFailing(THREE_POOL, true)
    const reading = await createChainReader(client)(
      plan({
        pools: [
          { id: 'eth-curve-3pool', address: THREE_POOL, coins: 3 },
          { id: 'eth-curve-pyusd-usdc', address: PYUSD_POOL, coins: 2 },
          { id: 'no-code', address: NO_CODE, coins: 2 },
        ],
      }),
    )
    await pools.setFailing(THREE_POOL, false)
    expect(reading.feeds.map((feed) => feed.ok)).toEqual([true, true])
    expect(reading.pools.map((pool) => pool.ok)).toEqual([false, true, false])
    expect(reading.pools[0]).toMatchInlineSnapshot(`
      {
        "error": "eth-curve-3pool at 0xbEbc44782C7dB0a1A60Cb6fe97d0b483032FF1C7: balances(0) failed: The contract function "balances" reverted with the following reason:
      StandInPoolBalances: failing",
        "id": "eth-curve-3pool",
        "ok": false,
      }
    `)
    expect(reading.pools[2]).toMatchInlineSnapshot(`
      {
        "error": "no-code at 0x00000000000000000000000000000000000fee0d: balances(0) failed: The contract function "balances" returned no data ("0x").",
        "id": "no-code",
        "ok": false,
      }
    `)

    await pools.setBalances(PYUSD_POOL, [0n, 20_500_000n * 10n ** 6n])
    const empty = await createChainReader(client)(plan({ pools: [{ id: 'eth-curve-pyusd-usdc', address: PYUSD_POOL, coins: 2 }] }))
    await pools.setBalances(PYUSD_POOL, [20_000_000n * 10n ** 6n, 20_500_000n * 10n ** 6n])
    expect(empty.pools).toEqual([
      {
        id: 'eth-curve-pyusd-usdc',
        ok: false,
        error: `eth-curve-pyusd-usdc at ${PYUSD_POOL}: balances(0) answered 0: the pool holds none of that coin`,
      },
    ])
  })

  it('reports the feed answer and its round as set', async () => {
    const { timestamp } = await feeds.latestBlock()
    await feeds.setRound(GBP_FEED, 126_000_000n, timestamp - 120)
    const reading = await createChainReader(client)(plan())
    expect(reading.feeds[1]).toEqual({ id: 'fx:GBP', ok: true, answer: 126_000_000n, decimals: 8, roundId: 2n, updatedAt: timestamp - 120 })
    await feeds.setRound(GBP_FEED, GBP_USD)
  })

  it('fails a reverting feed, one with no code and one answering no price, and still reads the others', async () => {
    await feeds.setFailing(SGD_FEED, true)
    const reading = await createChainReader(client)(
      plan({
        feeds: [
          { id: 'fx:EUR', address: EUR_FEED, heartbeatSec: 86_400 },
          { id: 'fx:SGD', address: SGD_FEED, heartbeatSec: 86_400 },
          { id: 'fx:ZAR', address: NO_CODE, heartbeatSec: 86_400 },
        ],
      }),
    )
    await feeds.setFailing(SGD_FEED, false)
    expect(reading.feeds.map((feed) => feed.ok)).toEqual([true, false, false])
    expect(reading.feeds[0]).toMatchObject({ answer: EUR_USD })
    expect(reading.feeds[1]).toMatchInlineSnapshot(`
      {
        "error": "fx:SGD at 0x81575495532fB311Efc5C993B612564274F0949b: latestRoundData() failed: The contract function "latestRoundData" reverted with the following reason:
      StandInAggregator: failing",
        "id": "fx:SGD",
        "ok": false,
      }
    `)
    expect(reading.feeds[2]).toMatchInlineSnapshot(`
      {
        "error": "fx:ZAR at 0x00000000000000000000000000000000000fee0d: latestRoundData() failed: The contract function "latestRoundData" returned no data ("0x").",
        "id": "fx:ZAR",
        "ok": false,
      }
    `)

    for (const answer of [0n, -5n]) {
      await feeds.setRound(SGD_FEED, answer)
      const [sgd] = (await createChainReader(client)(plan({ feeds: [{ id: 'fx:SGD', address: SGD_FEED, heartbeatSec: 86_400 }] }))).feeds
      expect(sgd).toEqual({ id: 'fx:SGD', ok: false, error: `fx:SGD at ${SGD_FEED}: answered ${answer}, not a positive price` })
    }
    await feeds.setRound(SGD_FEED, 74_000_000n)
  })

  it('gives the block’s time beside each feed’s updatedAt, so time passing ages a feed that holds still', async () => {
    const { timestamp } = await feeds.latestBlock()
    await feeds.setRound(GBP_FEED, GBP_USD, timestamp)
    await feeds.advanceTime(90_000)
    const reading = await createChainReader(client)(plan())
    expect(reading.feeds[1]).toMatchObject({ ok: true, updatedAt: timestamp })
    expect(reading.blockTimestamp - timestamp).toBeGreaterThanOrEqual(90_000)
    await feeds.setRound(GBP_FEED, GBP_USD)
  })

  it('reads the sequencer down and up again, since when it changed', async () => {
    const { timestamp } = await feeds.latestBlock()
    await feeds.setSequencer(SEQUENCER_FEED, { isUp: false, since: timestamp })
    expect((await createChainReader(client)(plan())).sequencer).toEqual({ isUp: false, since: timestamp })
    await feeds.setSequencer(SEQUENCER_FEED, { isUp: true, since: timestamp + 30 })
    expect((await createChainReader(client)(plan())).sequencer).toEqual({ isUp: true, since: timestamp + 30 })
  })

  it('rejects the read when the sequencer-uptime feed cannot be read', async () => {
    await expect(createChainReader(client)(plan({ sequencerUptimeFeed: NO_CODE }))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ChainReadError: BAS: the sequencer-uptime feed 0x00000000000000000000000000000000000fee0d could not be read: The contract function "latestRoundData" returned no data ("0x").]`,
    )
  })

  it('reads without a sequencer feed, and without feeds at all in two requests', async () => {
    const { sequencerUptimeFeed: _, ...withSequencer } = plan()
    const withoutSequencer = await createChainReader(client)(withSequencer)
    expect(withoutSequencer.sequencer).toBeUndefined()
    expect(withoutSequencer.feeds).toHaveLength(2)
    const sent = requests
    const bare = await createChainReader(client)({ chain: 'BAS', feeds: [] })
    expect(bare.feeds).toEqual([])
    expect(bare.rpcCalls).toBe(2)
    expect(requests - sent).toBe(2)
  })

  it('reads a whole plan placed by the stand-ins’ placePlan as it was given', async () => {
    const ethPlan: ChainReadPlan = {
      chain: 'ETH',
      feeds: [
        { id: 'native:ETH', address: '0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419', heartbeatSec: 3_600 },
        { id: 'fx:EUR', address: '0xb49f677943BC038e9857d61E7d053CaA2C1734C1', heartbeatSec: 86_400 },
      ],
      sequencerUptimeFeed: '0x00000000000000000000000000000000005e0001',
    }
    await feeds.placePlan(ethPlan, { 'native:ETH': 300_000_000_000n, 'fx:EUR': EUR_USD })
    const reading = await createChainReader(client)(ethPlan)
    expect(reading.feeds.map((feed) => (feed.ok ? [feed.id, feed.answer] : feed.error))).toEqual([
      ['native:ETH', 300_000_000_000n],
      ['fx:EUR', EUR_USD],
    ])
    expect(reading.sequencer).toEqual({ isUp: true, since: expect.any(Number) })
    expect(reading.blockTimestamp - (reading.sequencer?.since ?? 0)).toBeGreaterThanOrEqual(3_600)
  })

  it('counts the requests one refresh sends: the block, one multicall and the fee history', async () => {
    const sent = requests
    const reading = await createChainReader(client)(plan())
    expect(requests - sent).toBe(3)
    expect(reading.rpcCalls).toBe(3)
  })

  it('takes the median of the blocks’ priority fees and the next block’s base fee', async () => {
    const [, payer] = feeds.anvil.accounts
    if (!payer) throw new Error('no account')
    const wallet = feeds.anvil.walletClient(payer)
    // One transaction a block (anvil mines each as it arrives), tipping 1, 5, 3, 2 and 4 gwei: the median is 3.
    for (const tipGwei of ['1', '5', '3', '2', '4']) {
      const hash = await wallet.sendTransaction({
        to: payer.address,
        value: 1n,
        maxPriorityFeePerGas: parseGwei(tipGwei),
        maxFeePerGas: parseGwei('100'),
      })
      await feeds.anvil.publicClient.waitForTransactionReceipt({ hash })
    }
    const reading = await createChainReader(client)(plan())
    expect(reading.gas.priorityFeePerGas).toBe(parseGwei('3'))
    await feeds.mine()
    const next = await feeds.anvil.publicClient.getBlock({ blockNumber: reading.blockNumber + 1n })
    expect(reading.gas.baseFeePerGas).toBe(next.baseFeePerGas)
  })
})

describe('createChainReader against an RPC that fails', () => {
  let hanging: Server

  beforeAll(async () => {
    // Accepts every request and never answers.
    hanging = createServer(() => undefined)
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  })

  afterAll(async () => {
    hanging.closeAllConnections()
    await new Promise<void>((resolve) => hanging.close(() => resolve()))
  })

  it('rejects with the chain named when nothing listens', async () => {
    const down = createPublicClient({ transport: http(`http://127.0.0.1:${await closedPort()}`, CHAIN_RPC_TRANSPORT_OPTIONS) })
    const read = createChainReader(down)(plan())
    await expect(read).rejects.toBeInstanceOf(ChainReadError)
    await expect(read).rejects.toMatchObject({ chain: 'BAS', message: expect.stringMatching(/^BAS: the latest block could not be read/) })
  })

  it('rejects when the multicall fails after the block was pinned, never reporting the feeds as reverted', async () => {
    const down = createPublicClient({ transport: http(`http://127.0.0.1:${await closedPort()}`, CHAIN_RPC_TRANSPORT_OPTIONS) })
    const dropping: ChainReaderClient = {
      getBlock: (parameters) => client.getBlock(parameters),
      multicall: (parameters) => down.multicall(parameters),
      getFeeHistory: (parameters) => client.getFeeHistory(parameters),
    }
    await expect(createChainReader(dropping)(plan())).rejects.toMatchObject({
      name: 'ChainReadError',
      message: expect.stringMatching(/^BAS: the multicall could not be read at block \d+: HTTP request failed/),
    })
  })

  it('rejects an RPC that answers null for the latest block', async () => {
    const nulls = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8')
      })
      request.on('end', () => {
        const { id } = JSON.parse(body) as { id: number }
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: null }))
      })
    })
    await new Promise<void>((resolve) => nulls.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = nulls.address() as AddressInfo
      const answering = createPublicClient({ transport: http(`http://127.0.0.1:${port}`, CHAIN_RPC_TRANSPORT_OPTIONS) })
      await expect(createChainReader(answering)(plan())).rejects.toThrowErrorMatchingInlineSnapshot(
        `[ChainReadError: BAS: the latest block could not be read from the RPC: Block could not be found.]`,
      )
    } finally {
      await new Promise<void>((resolve) => nulls.close(() => resolve()))
    }
  })

  it('rejects within the transport timeout when the RPC never answers', async () => {
    const { port } = hanging.address() as AddressInfo
    const silent = createPublicClient({ transport: http(`http://127.0.0.1:${port}`, { timeout: 200, retryCount: 1 }) })
    await expect(createChainReader(silent)(plan())).rejects.toThrowErrorMatchingInlineSnapshot(
      `[ChainReadError: BAS: the latest block could not be read from the RPC: The request took too long to respond.]`,
    )
  }, 5_000)
})
