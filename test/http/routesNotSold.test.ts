import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { DEFAULT_ROUTER_ADDRESS, INERT_OWNER } from '../../src/contracts/deployRouter.ts'
import { corridorPairs } from '../../src/engine/index.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { CapabilityManifest, CorridorsResponse } from '../../src/schemas/discovery.ts'
import { QuoteResult, RankedQuote } from '../../src/schemas/quote.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { callTool, connectToApp, textOf } from '../mcp/mcpHarness.ts'
import { signPayment } from '../payments/signPayment.ts'
import { agentTextOffences } from '../support/agentText.ts'
import { get, lazyMemoryStore, PAY_TO, postJson, quoteBody, readJson, ROUTER_ADDRESS, type TestApp, testApp, testDeps } from './testApp.ts'

// A deployment whose operator set routers of their own everywhere but Gnosis, with payments worth something (a ledger
// to the operator's wallet): a paid swap refuses a route that needs SwapEazi's inert default router or executor on
// Gnosis (422 router_not_deployed), so discovery and quotes must not offer such a route as something it sells.

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const payer = privateKeyToAccount(generatePrivateKey())

const routersBut =
  (...inert: ChainCode[]) =>
  (chain: ChainCode) =>
    routerDeployment(inert.includes(chain) ? DEFAULT_ROUTER_ADDRESS : ROUTER_ADDRESS)
/** Built once, so every app shares one deployment (as a service's apps do). */
const withoutGnosis = routersBut('GNO')
const app = testApp({ store, clock: Date.now, routerOn: withoutGnosis })
/** The embedded demonstration's payments (ledger to 0x…dEaD): its swaps are answered with "do not sign", so all is sold. */
const demo = testApp({ store, clock: Date.now, routerOn: withoutGnosis, payTo: INERT_OWNER })
const everywhere = testApp({ store, clock: Date.now })

// USDC on Base to EURe on Gnosis: every route bridges and swaps on arrival in our executor on Gnosis.
const toGnosisEure = quoteBody({ fromChain: 'BAS', toChain: 'GNO', toToken: 'EURe', fromAddress: payer.address })
const toPolygonUsdc = quoteBody({ fromChain: 'BAS', toChain: 'POL', toToken: 'USDC', fromAddress: payer.address })

const quote = async (on: TestApp, body: Record<string, unknown>): Promise<QuoteResult> =>
  QuoteResult.parse(await readJson(await postJson(on, '/api/x402/quote', body)))

async function paidSwap(on: TestApp, body: Record<string, unknown>, payTo: string): Promise<Response> {
  const { header } = await signPayment(payer, { payTo, nowSec: Math.floor(Date.now() / 1000) })
  return postJson(on, '/api/x402/swap', body, { 'x-payment': header })
}

describe('a quote of a route this deployment does not sell', () => {
  it('says notSold, why and what is sold instead, and the paid swap of the same request refuses it before any payment', async () => {
    const quoted = await quote(app, toGnosisEure)
    expect(quoted.notSold).toMatchObject({ reason: 'router_not_deployed', chains: ['GNO'] })
    expect(quoted.notSold?.routerChains).toContain('BAS')
    expect(quoted.notSold?.routerChains).not.toContain('GNO')
    // The token the bridge delivers there, USDC.e, is a hub quotes do not take: it is not offered instead.
    expect(quoted.notSold?.detail).not.toContain('USDC.e')
    expect(agentTextOffences(quoted.notSold?.detail ?? '')).toEqual([])

    const refused = await paidSwap(app, toGnosisEure, PAY_TO)
    expect(refused.status).toBe(422)
    expect(await readJson(refused)).toMatchObject({
      code: 'router_not_deployed',
      chains: ['GNO'],
      routerChains: quoted.notSold?.routerChains,
    })
  })

  it('offers the token the bridge delivers instead where quotes take it, and a quote for it is sold', async () => {
    const withoutPolygon = testApp({ store, clock: Date.now, routerOn: routersBut('POL') })
    const toPolygonEure = quoteBody({ fromChain: 'BAS', toChain: 'POL', toToken: 'EURe', fromAddress: payer.address })
    const quoted = await quote(withoutPolygon, toPolygonEure)
    expect(quoted.notSold?.chains).toEqual(['POL'])
    const offered = /A quote for (\S+) on POL, the token the bridge delivers, needs no swap on arrival/.exec(quoted.notSold?.detail ?? '')
    expect(offered?.[1]).toBe('USDC')
    const instead = await quote(withoutPolygon, { ...toPolygonEure, toToken: offered?.[1] })
    expect(instead.notSold).toBeUndefined()
  })

  it('marks every ranked route that needs the missing router, each as the paid swap would', async () => {
    const ranked = RankedQuote.parse(await readJson(await postJson(app, '/api/v1/quote', toGnosisEure)))
    expect(ranked.routes).toHaveLength(3)
    for (const route of ranked.routes) expect(route.notSold?.chains).toEqual(['GNO'])
    const sold = RankedQuote.parse(await readJson(await postJson(app, '/api/v1/quote', toPolygonUsdc)))
    for (const route of sold.routes) expect(route.notSold).toBeUndefined()
  })

  it('is absent where the route is sold, and the paid swap builds it', async () => {
    const quoted = await quote(app, toPolygonUsdc)
    expect(quoted.notSold).toBeUndefined()
    const built = await paidSwap(app, toPolygonUsdc, PAY_TO)
    expect(built.status).toBe(200)
    expect(SwapResult.parse(await readJson(built)).route.id).toBe(quoted.route.id)
  })

  it('is absent in the embedded demonstration, whose paid swap answers with its one do-not-sign step instead', async () => {
    expect((await quote(demo, toGnosisEure)).notSold).toBeUndefined()
    expect((await quote(everywhere, toGnosisEure)).notSold).toBeUndefined()
    const swap = SwapResult.parse(await readJson(await paidSwap(demo, toGnosisEure, INERT_OWNER)))
    expect(swap.nextSteps[0]).toContain('Do not sign')
  })
})

describe('discovery where some routes are not sold', () => {
  const listing = async (on: TestApp) => CorridorsResponse.parse(await readJson(await get(on, '/api/v1/corridors')))

  it('marks the cells none of whose routes is sold, router_not_deployed, and only where the paid swap would refuse', async () => {
    const unsold = (await listing(app)).corridors.flatMap((row) =>
      row.byChain.flatMap((cell) => (cell.notServed?.reason === 'router_not_deployed' ? [`${row.from}>${row.to}@${cell.chain}`] : [])),
    )
    expect(unsold.sort()).toEqual(['EURe>USDC@GNO', 'GBPe>USDC@GNO', 'USDC>EURe@GNO', 'USDC>GBPe@GNO'])
    for (const on of [demo, everywhere])
      for (const row of (await listing(on)).corridors)
        for (const cell of row.byChain)
          expect(cell.notServed?.reason, `${row.from}>${row.to}@${cell.chain}`).not.toBe('router_not_deployed')

    const manifest = CapabilityManifest.parse(await readJson(await get(app, '/api/mpp/routes')))
    const marked = manifest.corridors.flatMap((row) =>
      (row.notServedOn ?? []).flatMap((cell) => (cell.reason === 'router_not_deployed' ? [`${row.from}>${row.to}@${cell.chain}`] : [])),
    )
    expect(marked.sort()).toEqual(unsold.sort())
  })

  it('lists as served only legs whose quotes are sold: every live leg at both ends of its range', async () => {
    const { catalogue } = testDeps()
    let checked = 0
    for (const [index, row] of (await listing(app)).corridors.entries())
      for (const cell of row.byChain) {
        const pairs = corridorPairs(catalogue, catalogue.corridors[index] as (typeof catalogue.corridors)[number], cell.chain)
        for (const leg of cell.legs) {
          const range = leg.viableRange
          if (range === null) throw new Error(`the live leg ${leg.fromChain}>${leg.toChain} of ${row.from}>${row.to} has no range`)
          const pair = pairs.find(({ from, to }) => from.chain === leg.fromChain && to.chain === leg.toChain && from.symbol === range.token)
          if (pair === undefined) throw new Error(`no pair for the leg ${leg.fromChain}>${leg.toChain} of ${row.from}>${row.to}`)
          for (const fromAmount of [range.min, range.max]) {
            const where = `${pair.from.symbol}@${pair.from.chain} -> ${pair.to.symbol}@${pair.to.chain} at ${fromAmount}`
            const body = quoteBody({
              fromChain: pair.from.chain,
              toChain: pair.to.chain,
              fromToken: pair.from.symbol,
              toToken: pair.to.symbol,
              fromAmount,
              fromAddress: payer.address,
            })
            const response = await postJson(app, '/api/x402/quote', body)
            expect(response.status, where).toBe(200)
            const answer = QuoteResult.safeParse(await readJson(response))
            expect(answer.success, where).toBe(true)
            expect(answer.data?.notSold, where).toBeUndefined()
            checked += 1
          }
        }
      }
    // The property is about the listing's served legs: there must be many, or it says nothing.
    expect(checked).toBeGreaterThan(40)
  })

  it('names in a quote refused for its size the range the listing shows, so a probe retries where routes are sold', async () => {
    const { catalogue } = testDeps()
    let checked = 0
    for (const [index, row] of (await listing(app)).corridors.entries())
      for (const cell of row.byChain) {
        const pairs = corridorPairs(catalogue, catalogue.corridors[index] as (typeof catalogue.corridors)[number], cell.chain)
        for (const leg of cell.legs) {
          const range = leg.viableRange
          const pair = pairs.find(
            ({ from, to }) => from.chain === leg.fromChain && to.chain === leg.toChain && from.symbol === range?.token,
          )
          if (range === null || pair === undefined) throw new Error(`no range or pair for ${leg.fromChain}>${leg.toChain}`)
          // Ten times the largest amount sold: above every route's range, sold or not, on this catalogue.
          const body = quoteBody({
            fromChain: pair.from.chain,
            toChain: pair.to.chain,
            fromToken: pair.from.symbol,
            toToken: pair.to.symbol,
            fromAmount: `${range.max.split('.')[0]}0`,
            fromAddress: payer.address,
          })
          const answer = await readJson(await postJson(app, '/api/x402/quote', body))
          if (answer['code'] !== 'amount_out_of_range') continue
          expect(answer['viableRange'], `${pair.from.symbol}@${pair.from.chain} -> ${pair.to.symbol}@${pair.to.chain}`).toEqual(range)
          checked += 1
        }
      }
    expect(checked).toBeGreaterThan(20)
  })
})

describe('the MCP tools where a route is not sold', () => {
  it('probe_corridor answers router_not_deployed and get_quote does not offer build_swap', async () => {
    const connected = await connectToApp(app, store)
    try {
      const probed = await callTool(connected.client, 'probe_corridor', {
        fromChain: 'BAS',
        toChain: 'GNO',
        fromToken: 'USDC',
        toToken: 'EURe',
        amount: '1000',
      })
      expect(probed.isError).not.toBe(true)
      expect(probed.structuredContent).toMatchObject({ supported: false, reason: 'router_not_deployed' })
      expect(textOf(probed)).toContain('router_not_deployed')

      const quoted = await callTool(connected.client, 'get_quote', { ...toGnosisEure, fromAddress: payer.address })
      expect(quoted.isError).not.toBe(true)
      expect(textOf(quoted)).toContain('This route is not sold by this service')
      expect(textOf(quoted)).not.toContain('build_swap builds it')

      const sold = await callTool(connected.client, 'get_quote', toPolygonUsdc)
      expect(textOf(sold)).toContain('build_swap builds it for USD 0.02')
    } finally {
      await connected.close()
    }
  })
})
