import { formatEther } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { DEFAULT_ROUTER_ADDRESS, INERT_OWNER } from '../../src/contracts/deployRouter.ts'
import { externalSettler } from '../../src/payments/x402/collectExternally.ts'
import { Health } from '../../src/schemas/discovery.ts'
import { QuoteResult } from '../../src/schemas/quote.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { X402Challenge } from '../../src/schemas/x402.ts'
import { SwapStatusWire } from '../../src/schemas/swapStatus.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { describeSwapStatus } from '../../src/mcp/tools/trackSwap.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { signPayment } from '../payments/signPayment.ts'
import { agentTextOffences } from '../support/agentText.ts'
import {
  FROM_ADDRESS,
  get,
  KEY_SECRET,
  lazyMemoryStore,
  NOW_MS,
  PAY_TO,
  postJson,
  quoteBody,
  readJson,
  ROUTER_ADDRESS,
  testApp,
} from './testApp.ts'

const RECIPIENT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

const SWAP = '/api/x402/swap'
const payer = privateKeyToAccount(generatePrivateKey())
const INERT = routerDeployment(DEFAULT_ROUTER_ADDRESS)
const store = lazyMemoryStore()
afterAll(() => store.sql.close())

/** Our own router everywhere but on `inert`, where the operator set none (the inert default). */
const routersBut =
  (...inert: ChainCode[]) =>
  (chain: ChainCode) =>
    routerDeployment(inert.includes(chain) ? DEFAULT_ROUTER_ADDRESS : ROUTER_ADDRESS)

/** A settler that takes real money, counting what it was asked to settle. */
function realSettler() {
  const settled: string[] = []
  const settler = externalSettler('onchain', {
    check: async () => ({ ok: true }),
    settle: async (_payment, swapEaziRef) => {
      settled.push(swapEaziRef)
      return { ok: true, transaction: `0x${'5e'.repeat(32)}` }
    },
  })
  return { settler, settled }
}

async function count(table: 'x402_payments' | 'swaps'): Promise<number> {
  const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from ${table}`)
  return row?.n ?? -1
}

// USDC on Base to EURe on Polygon: a CCTP bridge to our executor on Polygon, where a swap runs on arrival.
const toPolygonEure = quoteBody({
  fromChain: 'BAS',
  toChain: 'POL',
  fromToken: 'USDC',
  toToken: 'EURe',
  fromAddress: payer.address.toLowerCase(),
})

describe('a swap that depends on a chain with no router of the operator own', () => {
  it('says first not to sign when only the destination executor is the inert default, naming it and its chain', async () => {
    // The embedded demonstration's payments: ledger to 0x…dEaD, worth nothing, so the swap is answered.
    const app = testApp({ store, clock: Date.now, routerOn: routersBut('POL'), payTo: INERT_OWNER })
    const { header } = await signPayment(payer, { payTo: INERT_OWNER, nowSec: Math.floor(Date.now() / 1000) })
    const response = await postJson(app, SWAP, toPolygonEure, { 'x-payment': header })
    expect(response.status).toBe(200)
    const swap = SwapResult.parse(await readJson(response))
    expect(swap.transactionRequest.to.toLowerCase()).toBe(ROUTER_ADDRESS)
    expect(swap.nextSteps[0]).toMatch(/^Do not sign these transactions: the bridge would deliver to /)
    expect(swap.nextSteps[0]).toContain(`${INERT.executor} on POL`)
    expect(swap.nextSteps[0]).toContain('has not set a router of its own on POL')
    expect(agentTextOffences(swap.nextSteps[0] ?? '')).toEqual([])
    // Its status says the same, never to sign and broadcast it.
    const status = SwapStatusWire.parse(await readJson(await get(app, `/api/v1/swap/${swap.swapEaziRef}/status`)))
    expect(status.next).toMatchObject({ action: 'do_not_sign', message: swap.nextSteps[0], deadline: null, checkAgainSec: null })
    // Its only step: signing steps after it would tell an agent reading them in order to sign all the same.
    expect(swap.nextSteps).toHaveLength(1)
    // track_swap says the same, not that the money may have left.
    expect(describeSwapStatus(status)).toContain('is built. It must never be signed. Next: Do not sign')
    // A hint on a chain this service does not read does not say the swap runs all the same.
    const hint = await postJson(app, `/api/v1/swap/${swap.swapEaziRef}/transaction`, { txHash: `0x${'11'.repeat(32)}` })
    const hinted = (await readJson(hint)) as { code: string; detail: string }
    expect(hinted.code).toBe('chain_not_tracked')
    expect(hinted.detail).toContain('And this swap could never run: the bridge would deliver to')
    expect(hinted.detail).not.toContain('runs on chain all the same')
  })

  it('says nothing when the bridge delivers to the recipient on that chain (no swap on arrival)', async () => {
    const app = testApp({ store, clock: Date.now, routerOn: routersBut('POL'), payTo: INERT_OWNER })
    const { header } = await signPayment(payer, { payTo: INERT_OWNER, nowSec: Math.floor(Date.now() / 1000) })
    const body = quoteBody({ fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'USDC', fromAddress: payer.address })
    const swap = SwapResult.parse(await readJson(await postJson(app, SWAP, body, { 'x-payment': header })))
    expect(swap.nextSteps.join(' ')).not.toContain('Do not sign')
    const status = SwapStatusWire.parse(await readJson(await get(app, `/api/v1/swap/${swap.swapEaziRef}/status`)))
    expect(status.next.action).toBe('sign_and_broadcast')
  })

  it('is refused 422 router_not_deployed, before any payment is asked or taken, where payments are real', async () => {
    const { settler, settled } = realSettler()
    const app = testApp({ store, clock: Date.now, settler, routerOn: routersBut('POL') })
    const unpaid = await postJson(app, SWAP, toPolygonEure)
    expect(unpaid.status).toBe(422)
    expect(unpaid.headers.get('retry-after')).toBeNull()
    expect(await readJson(unpaid)).toMatchObject({ code: 'router_not_deployed', chains: ['POL'] })

    const [payments, swaps] = [await count('x402_payments'), await count('swaps')]
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000) })
    const paid = await postJson(app, SWAP, toPolygonEure, { 'x-payment': header })
    expect(paid.status).toBe(422)
    const problem = await readJson(paid)
    expect(problem).toMatchObject({ code: 'router_not_deployed', chains: ['POL'] })
    expect(problem['detail']).toContain('nothing was charged')
    expect(agentTextOffences(String(problem['detail']))).toEqual([])
    expect(settled).toEqual([])
    expect([await count('x402_payments'), await count('swaps')]).toEqual([payments, swaps])

    // The same service sells a swap that needs no router on Polygon.
    const sameChain = quoteBody({ fromChain: 'BAS', toChain: 'BAS', fromToken: 'USDC', toToken: 'EURC', fromAddress: payer.address })
    const { header: another } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000) })
    expect((await postJson(app, SWAP, sameChain, { 'x-payment': another })).status).toBe(200)
    expect(settled).toHaveLength(1)
  })

  it('is refused where the source router is the inert default, payments real; health names the chains', async () => {
    const { settler } = realSettler()
    const app = testApp({ store, clock: Date.now, settler, routerOn: () => INERT })
    const response = await postJson(app, SWAP, quoteBody({ fromAddress: payer.address }))
    expect(await readJson(response)).toMatchObject({ status: 422, code: 'router_not_deployed', chains: ['ETH'] })
    const health = Health.parse(await readJson(await get(app, '/api/v1/health')))
    expect(health.routers.inertChains).toEqual(expect.arrayContaining(['ETH', 'BAS', 'POL', 'GNO', 'CEL']))

    expect(health.warnings.map((warning) => warning.code)).toEqual(['router_default_inert'])

    const own = Health.parse(await readJson(await get(testApp({ store }), '/api/v1/health')))
    expect(own.routers.inertChains).toEqual([])
    expect(own.warnings).toEqual([])
    const some = Health.parse(await readJson(await get(testApp({ store, routerOn: routersBut('POL') }), '/api/v1/health')))
    expect(some.routers.inertChains).toEqual(['POL'])
    expect(some.warnings).toEqual([
      { code: 'router_default_inert', message: expect.stringMatching(/^No router of the operator's own on POL:/) },
    ])
    // The embedded demonstration's payments: to 0x…dEaD, only recorded.
    const demo = Health.parse(await readJson(await get(testApp({ store, payTo: INERT_OWNER }), '/api/v1/health')))
    expect(demo.warnings).toEqual([{ code: 'pay_to_default', message: expect.stringContaining('charges nothing') }])
  })

  it('is refused where a ledger records payments to a wallet of the operator, whose authorizations can be collected', async () => {
    const app = testApp({ store, clock: Date.now, routerOn: routersBut('POL') })
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000) })
    const paid = await postJson(app, SWAP, toPolygonEure, { 'x-payment': header })
    expect(await readJson(paid)).toMatchObject({ status: 422, code: 'router_not_deployed', chains: ['POL'] })
  })

  it('is refused, not challenged again, after an undecodable payment or an MPP credential where MPP is off', async () => {
    const { settler } = realSettler()
    const app = testApp({ store, clock: Date.now, settler, routerOn: routersBut('POL') })
    const garbled = await postJson(app, SWAP, toPolygonEure, { 'x-payment': 'not-base64-json' })
    expect(await readJson(garbled)).toMatchObject({ status: 422, code: 'router_not_deployed' })
    const mpp = await postJson(app, SWAP, toPolygonEure, { authorization: 'Payment abc' })
    expect(await readJson(mpp)).toMatchObject({ status: 422, code: 'router_not_deployed' })
    // Where every chain has a router, the same garbled payment is challenged again as before.
    const own = testApp({ store, clock: Date.now, settler })
    expect((await postJson(own, SWAP, toPolygonEure, { 'x-payment': 'not-base64-json' })).status).toBe(402)
  })

  it('names the native value a LayerZero route sends with its transaction among what would be lost', async () => {
    const app = testApp({ store, clock: Date.now, routerOn: () => INERT, payTo: INERT_OWNER })
    const { header } = await signPayment(payer, { payTo: INERT_OWNER, nowSec: Math.floor(Date.now() / 1000) })
    const body = quoteBody({ fromChain: 'POL', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAddress: payer.address })
    const swap = SwapResult.parse(await readJson(await postJson(app, SWAP, body, { 'x-payment': header })))
    expect(swap.route.id).toContain('usdt0-oft')
    expect(BigInt(swap.transactionRequest.value)).toBeGreaterThan(0n)
    expect(swap.nextSteps[0]).toContain(`and lose the ${formatEther(BigInt(swap.transactionRequest.value))} native token sent with them`)
  })
})

describe('quotes where some chains have no router of the operator own', () => {
  const ethUsdcToPolUsdt = quoteBody({ fromChain: 'ETH', toChain: 'POL', fromToken: 'USDC', toToken: 'USDT' })
  const routeOf = async (app: ReturnType<typeof testApp>): Promise<string> =>
    QuoteResult.parse(await readJson(await postJson(app, '/api/x402/quote', ethUsdcToPolUsdt))).route.id

  it('prefer a route with no swap on arrival there when one is viable, so the swap built from it can run', async () => {
    // With routers everywhere the best route swaps on arrival on Polygon; without one there, another route needs none.
    const everywhere = await routeOf(testApp({ store }))
    expect(everywhere).toMatch(/\|pol-/)
    const withoutPolygon = await routeOf(testApp({ store, routerOn: routersBut('POL') }))
    expect(withoutPolygon).not.toMatch(/\|pol-/)
    expect(withoutPolygon).toMatch(/ETH>POL$/)
  })
})

describe('the challenge of a demonstration service (payments to 0x…dEaD, only recorded)', () => {
  it('says so before a signature is asked, in the detail, in accepts[0].description and in the manifest', async () => {
    const demo = testApp({ store, clock: Date.now, payTo: INERT_OWNER, routerOn: () => INERT })
    const challenge = X402Challenge.parse(await readJson(await postJson(demo, SWAP, quoteBody())))
    expect(challenge.detail).toMatch(
      /^This service is a demonstration: the x402 payment's payTo 0x000000000000000000000000000000000000dEaD is an address nobody controls/,
    )
    expect(challenge.accepts[0]?.description).toContain('This service is a demonstration')
    const manifest = JSON.stringify(await readJson(await get(demo, '/.well-known/x402.json')))
    expect(manifest).toContain('This service is a demonstration')

    // Settled on chain, an authorization to 0x…dEaD really moves the payer's USDC: no demonstration is claimed.
    const burning = testApp({ store, clock: Date.now, payTo: INERT_OWNER, settler: realSettler().settler })
    const burned = X402Challenge.parse(await readJson(await postJson(burning, SWAP, quoteBody())))
    expect(burned.detail).not.toContain('demonstration')

    const real = X402Challenge.parse(await readJson(await postJson(testApp({ store, clock: Date.now }), SWAP, quoteBody())))
    expect(real.detail).toMatch(/^This swap costs USD 0\.02/)
    expect(real.accepts[0]?.description).not.toContain('demonstration')
  })
})

describe('a batch whose leg swaps on arrival on a chain without a router of the operator own', () => {
  it('says do_not_sign in its status, as its build did, for every order of its one transaction', async () => {
    const key = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
    const app = testApp({ store, routerOn: routersBut('POL'), payTo: INERT_OWNER })
    const built = await postJson(
      app,
      '/api/v1/batch/disburse',
      {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: FROM_ADDRESS,
        recipients: [
          { address: RECIPIENT, toChain: 'BAS', toToken: 'USDC', amount: '20' },
          { address: RECIPIENT, toChain: 'POL', toToken: 'EURe', amount: '50' },
        ],
      },
      { 'x-swapeazi-key': key },
    )
    const batch = DisbursementResult.parse(await readJson(built))
    expect(batch.nextSteps[0]).toMatch(/^Do not sign these transactions: the bridge would deliver to .* on POL/)
    expect(batch.nextSteps).toHaveLength(1)
    const status = SwapStatusWire.parse(await readJson(await get(app, `/api/v1/swap/${batch.disbursementRef}/status`)))
    expect(status.orders.map((order) => order.next.action)).toEqual(['do_not_sign', 'do_not_sign'])
    expect(status.next).toMatchObject({ action: 'do_not_sign', message: batch.nextSteps[0] })

    // With a router everywhere, the same batch is to be signed.
    const own = testApp({ store })
    const signable = DisbursementResult.parse(
      await readJson(
        await postJson(
          own,
          '/api/v1/batch/disburse',
          {
            fromChain: 'BAS',
            fromToken: 'USDC',
            fromAddress: FROM_ADDRESS,
            recipients: [{ address: RECIPIENT, toChain: 'POL', toToken: 'EURe', amount: '50' }],
          },
          { 'x-swapeazi-key': key },
        ),
      ),
    )
    const signableStatus = SwapStatusWire.parse(await readJson(await get(own, `/api/v1/swap/${signable.disbursementRef}/status`)))
    expect(signableStatus.next.action).toBe('sign_and_broadcast')
  })
})

describe('a recorded swap read after the operator set a router on a chain that had none', () => {
  const isSwapOnArrival = (swap: SwapResult): boolean => {
    const bridgeAt = swap.route.steps.findIndex((step) => step.type === 'bridge')
    return bridgeAt >= 0 && swap.route.steps.slice(bridgeAt + 1).some((step) => step.type === 'swap')
  }
  const demoSwap = async (app: ReturnType<typeof testApp>): Promise<SwapResult> => {
    const { header } = await signPayment(payer, { payTo: INERT_OWNER, nowSec: Math.floor(Date.now() / 1000) })
    const response = await postJson(app, SWAP, toPolygonEure, { 'x-payment': header })
    expect(response.status).toBe(200)
    return SwapResult.parse(await readJson(response))
  }
  const statusOf = async (app: ReturnType<typeof testApp>, ref: string) =>
    SwapStatusWire.parse(await readJson(await get(app, `/api/v1/swap/${ref}/status`)))

  it('still says do_not_sign: its burn names the inert executor on POL, whatever POL has now', async () => {
    const before = testApp({ store, clock: Date.now, routerOn: routersBut('POL'), payTo: INERT_OWNER })
    const swap = await demoSwap(before)
    expect(swap.route.id).toContain('cctp')
    expect(isSwapOnArrival(swap)).toBe(true)
    // Restarted with a router of the operator's own on POL (and everywhere else): the recorded burn is unchanged.
    const after = testApp({ store, clock: Date.now, payTo: INERT_OWNER })
    const status = await statusOf(after, swap.swapEaziRef)
    expect(status.next).toMatchObject({ action: 'do_not_sign', message: swap.nextSteps[0], deadline: null })
    expect(status.next.message).toContain(`${INERT.executor} on POL`)
  })

  it('says sign_and_broadcast for a swap built with a router of the operator own on POL', async () => {
    const own = testApp({ store, clock: Date.now, payTo: INERT_OWNER })
    const swap = await demoSwap(own)
    expect(isSwapOnArrival(swap)).toBe(true)
    expect(swap.nextSteps.join(' ')).not.toContain('Do not sign')
    expect((await statusOf(own, swap.swapEaziRef)).next.action).toBe('sign_and_broadcast')
    // Its burn names the operator's executor on POL, deployed: a later configuration without one there changes nothing.
    const without = testApp({ store, clock: Date.now, routerOn: routersBut('POL'), payTo: INERT_OWNER })
    expect((await statusOf(without, swap.swapEaziRef)).next.action).toBe('sign_and_broadcast')
  })

  it('still says do_not_sign for a batch whose leg bridges to the inert executor on POL', async () => {
    const key = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
    const before = testApp({ store, routerOn: routersBut('POL'), payTo: INERT_OWNER })
    const body = {
      fromChain: 'BAS',
      fromToken: 'USDC',
      fromAddress: FROM_ADDRESS,
      recipients: [{ address: RECIPIENT, toChain: 'POL', toToken: 'EURe', amount: '50' }],
    }
    const batch = DisbursementResult.parse(
      await readJson(await postJson(before, '/api/v1/batch/disburse', body, { 'x-swapeazi-key': key })),
    )
    expect(batch.nextSteps[0]).toMatch(/^Do not sign these transactions/)
    const status = SwapStatusWire.parse(await readJson(await get(testApp({ store }), `/api/v1/swap/${batch.disbursementRef}/status`)))
    expect(status.next).toMatchObject({ action: 'do_not_sign', message: batch.nextSteps[0] })
  })
})
