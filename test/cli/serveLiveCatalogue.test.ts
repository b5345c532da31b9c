import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { loadFeedCatalogue } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import { readPlanOf } from '../../src/market/feedCatalogue.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import { snapshotDepthPools } from '../chain/depthStandIns.ts'
import { type FeedStandIns, startFeedStandIns } from '../chain/feedStandIns.ts'
import { poolStandIns } from '../chain/poolStandIns.ts'
import { MANIFEST_DIR, quoteBody } from '../http/testApp.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

// Review of issue 15: serve built its app from `{ ...deps }`, which copied the live market's `catalogue` getter's
// value at start, so serve quoted from the start-up catalogue for good while its market refreshed. Here serve reads
// anvil (SWAPEAZI_RPC_URLS), the 3pool on the chain is drained, and its next quotes follow the chain.

const { files } = loadCatalogue(MANIFEST_DIR)
const snapshot = compileCatalogue(files)
const plan = readPlanOf(loadFeedCatalogue(MANIFEST_DIR), 'ETH', files.venues.venues, snapshot.tokens, files.bridges.bridges)
const THREE_POOL = plan.pools?.find((pool) => pool.id === 'eth-curve-3pool')?.address ?? '0x'
const snapshotBalances = Object.fromEntries(
  (plan.pools ?? []).map((pool) => {
    const state = files.market.venues[pool.id]
    return [pool.id, state !== undefined && 'balances' in state ? state.balances.map(BigInt) : []]
  }),
)
const [DAI_BALANCE = 0n] = snapshotBalances['eth-curve-3pool'] ?? []
const usd8 = (value: number): bigint => BigInt(Math.round(value * 1e8))
const daiToUsdc = quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'DAI', toToken: 'USDC', fromAmount: '100000' })

/** What the route's last step delivers, in USDC. */
const outOf = (quote: QuoteResult): string => quote.route.steps.at(-1)?.toAmount ?? ''

let chain: (FeedStandIns & { stop(): Promise<void> }) | undefined
beforeAll(async () => {
  chain = await startFeedStandIns({ chainId: 1 })
  await chain.placePlan(
    plan,
    { native: usd8(3000), 'fx:EUR': usd8(1.16), 'fx:GBP': usd8(1.3), 'fx:SGD': usd8(0.77) },
    snapshotBalances,
    snapshotDepthPools(plan, snapshot),
  )
}, 120_000)
afterAll(() => chain?.stop())

describe('swapeazi serve on a live market', () => {
  it('quotes from the catalogue of its latest refresh, not the one it started with', async () => {
    const stdin = new PassThrough()
    stdin.end()
    const stderr = new TextSink()
    const stop = new AbortController()
    const exited = runCli(['serve'], {
      env: {
        SWAPEAZI_PORT: '0',
        SWAPEAZI_HOST: '127.0.0.1',
        SWAPEAZI_DATA_DIR: 'memory://',
        SWAPEAZI_RPC_URLS: JSON.stringify({ ETH: chain?.anvil.rpcUrl }),
        SWAPEAZI_ACROSS_API_URL: 'off',
        SWAPEAZI_MARKET_REFRESH_MS: '500',
        SWAPEAZI_TRACKER: 'off',
        SWAPEAZI_LOG_LEVEL: 'info',
      },
      stdin,
      stdout: new TextSink(),
      stderr,
      stop: stop.signal,
      pgliteTemplate: await migratedPgliteTemplate(),
    })
    try {
      for (let waited = 0; !stderr.text.includes('"event":"listening"'); waited += 20) {
        if (waited > 60_000) throw new Error(`serve did not listen:\n${stderr.text}`)
        await sleep(20)
      }
      const url = (JSON.parse(stderr.text.split('\n').find((line) => line.includes('"event":"listening"')) ?? '{}') as { url: string }).url
      const quote = async (): Promise<QuoteResult> => {
        const response = await fetch(`${url}/api/x402/quote`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(daiToUsdc),
        })
        expect(response.status).toBe(200)
        return QuoteResult.parse(await response.json())
      }
      const before = await quote()
      // All but 5,000,000 of the 3pool's USDC and USDT drained on chain: the next refresh prices the pool from it.
      await poolStandIns(chain?.anvil ?? (undefined as never)).setBalances(THREE_POOL, [
        DAI_BALANCE,
        5_000_000n * 10n ** 6n,
        5_000_000n * 10n ** 6n,
      ])
      await chain?.anvil.testClient.mine({ blocks: 1 })
      let after = before
      for (let waited = 0; outOf(after) === outOf(before); waited += 250) {
        if (waited > 20_000) throw new Error(`serve still quotes ${outOf(before)} USDC 20 s after the pool was drained`)
        await sleep(250)
        after = await quote()
      }
      expect(Number(outOf(after))).toBeLessThan(Number(outOf(before)))
    } finally {
      stop.abort()
      expect(await exited).toBe(0)
    }
  }, 120_000)
})
