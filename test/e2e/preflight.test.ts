import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { findRoutes } from '../../src/engine/index.ts'
import { PAID_SIMULATIONS_PER_CALLER_MINUTE, SIMULATIONS_PER_CALLER_MINUTE } from '../../src/service/preflightBuild.ts'
import { createTransactionSimulator } from '../../src/tx/simulateTransaction.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { routerOnWorld, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { standInAbi } from '../chain/standIns.ts'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { KEY_SECRET, PAY_TO, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'
import { signPayment } from '../payments/signPayment.ts'

// Issue 17 item 7: with an RPC for the source chain, every build is simulated on the chain's state before the 402
// (and before a payment is taken): the catalogue on anvil (stand-in tokens and venues, our router), the real
// simulator behind the same interface a live chain uses.

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
let world: CatalogueOnChains | undefined

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['ETH'])
}, 120_000)
afterAll(async () => world?.stop())

/** The app on anvil; `clock` (default the wall clock) is what its per-minute windows are counted by. */
function app(clock: () => number = Date.now) {
  if (world === undefined) throw new Error('no world')
  const { instance } = setupOf(world, 'ETH')
  const deployed = world
  return createServer(
    testDeps({
      catalogue: deployed.catalogue,
      files: deployed.files,
      routerOn: routerOnWorld(deployed),
      clock,
      simulators: { ETH: createTransactionSimulator(createPublicClient({ transport: http(instance.rpcUrl) })) },
    }),
  )
}

/** A sender who holds nothing: the simulation gives it the input's balance and allowance. */
const sender = (): string => privateKeyToAccount(generatePrivateKey()).address.toLowerCase()
const usdcToUsdt = (from: string) =>
  quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '1000', fromAddress: from })

describe('pre-flight simulation of builds', () => {
  it('passes a build the chain can execute, for a sender that does not hold the input yet: 402 as usual', async () => {
    const response = await postJson(app(), '/api/x402/swap', usdcToUsdt(sender()))
    expect(response.status).toBe(402)
  })

  it('refuses a build whose minimum the venue cannot meet with 422 simulation_failed, before any payment is taken', async () => {
    if (world === undefined) throw new Error('no world')
    const from = tokenOf(world, 'ETH:USDC')
    const to = tokenOf(world, 'ETH:USDT')
    const found = findRoutes(world.catalogue, { from, to, amountIn: 1000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const venue = found.ranked.BALANCED.route.sourceSwaps[0]?.venue
    if (venue === undefined) throw new Error('the route has no venue')
    const { instance } = setupOf(world, 'ETH')
    // The pool now pays half the oracle rate: the quoted minimum cannot be met on chain.
    await writeContractAndWait(instance, instance.accounts[0]!, {
      address: venue.contract,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'setRate',
      args: [from.address, to.address, 1n, 2n],
    })
    const payer = privateKeyToAccount(generatePrivateKey())
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000) })
    const service = app()
    // A keyed batch whose swap leg goes through that venue is refused too, before it is recorded.
    const batch = await postJson(
      service,
      '/api/v1/batch/disburse',
      {
        fromChain: 'ETH',
        fromToken: 'USDC',
        fromAddress: sender(),
        recipients: [
          { address: sender(), toChain: 'ETH', toToken: 'USDC', amount: '10' },
          { address: sender(), toChain: 'ETH', toToken: 'USDT', amount: '1000' },
        ],
      },
      { 'x-swapeazi-key': signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef0123beef', tier: 'pro', iat: 1_795_000_000 }) },
    )
    expect(batch.status).toBe(422)
    expect(await readJson(batch)).toMatchObject({ code: 'simulation_failed', chain: 'ETH' })
    for (const headers of [{}, { 'x-payment': header }]) {
      const refused = await postJson(service, '/api/x402/swap', usdcToUsdt(sender()), headers)
      expect(refused.status).toBe(422)
      const problem = await readJson(refused)
      expect(problem).toMatchObject({ code: 'simulation_failed', chain: 'ETH' })
      expect(problem['detail']).toMatch(/^Not built, and nothing was charged: the transaction would revert on ETH/)
      // The stand-in venue's own revert reason, decoded from the revert data.
      expect(problem['reason']).toMatch(/^(Exchange resulted in fewer coins than expected|Too little received)$/)
    }
    const [row] = await testDeps().store.sql.query<{ n: number }>('select count(*)::int as n from x402_payments where payer = $1', [
      payer.address.toLowerCase(),
    ])
    expect(row?.n).toBe(0)
    await writeContractAndWait(instance, instance.accounts[0]!, {
      address: venue.contract,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'setRate',
      args: [from.address, to.address, to.priceUsdE18 * 10n ** 6n, from.priceUsdE18 * 10n ** 6n],
    })
    expect((await postJson(service, '/api/x402/swap', usdcToUsdt(sender()))).status).toBe(402)
  })

  it(`limits the unpaid simulations of one caller to ${SIMULATIONS_PER_CALLER_MINUTE} a minute, so the 402 path cannot flood the RPC`, async () => {
    // One minute throughout: a loop that crossed a minute's edge on the wall clock would start a new window.
    const now = Date.now()
    const service = app(() => now)
    const caller = { 'x-forwarded-for': '198.51.100.9' }
    const statuses: number[] = []
    for (let i = 0; i < SIMULATIONS_PER_CALLER_MINUTE; i += 1)
      statuses.push((await postJson(service, '/api/x402/swap', usdcToUsdt(sender()), caller)).status)
    expect(statuses).toEqual(Array.from({ length: SIMULATIONS_PER_CALLER_MINUTE }, () => 402))
    const limited = await postJson(service, '/api/x402/swap', usdcToUsdt(sender()), caller)
    expect(limited.status).toBe(429)
    expect(await readJson(limited)).toMatchObject({ code: 'rate_limited', policy: 'preflight', limit: SIMULATIONS_PER_CALLER_MINUTE })
    const retryAfter = limited.headers.get('retry-after')
    expect(retryAfter).toMatch(/^[0-9]+$/)
    // Issue 15 item 6: the 429 names its own policy, with nothing left until Retry-After.
    expect(limited.headers.get('ratelimit')).toBe(`"preflight";r=0;t=${retryAfter}`)
    expect(limited.headers.get('ratelimit-policy')).toBe(`"preflight";q=${SIMULATIONS_PER_CALLER_MINUTE};w=60`)
    // A browser agent may read them (CORS exposes exactly what is sent: test/http/exposedHeaders.test.ts).
    const exposed = (limited.headers.get('access-control-expose-headers') ?? '').split(', ')
    expect(exposed).toEqual(expect.arrayContaining(['RateLimit', 'RateLimit-Policy', 'Retry-After']))
    // Another caller is not held back by this one.
    expect((await postJson(service, '/api/x402/swap', usdcToUsdt(sender()), { 'x-forwarded-for': '198.51.100.10' })).status).toBe(402)
  }, 60_000)

  it(`limits a key's simulations to ${PAID_SIMULATIONS_PER_CALLER_MINUTE} a minute, and its 429 names the pre-flight's policy, not the key's`, async () => {
    const now = Date.now()
    const service = app(() => now)
    const key = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef0123cafe', tier: 'pro', iat: 1_795_000_000 })
    const batch = () => ({
      fromChain: 'ETH',
      fromToken: 'USDC',
      fromAddress: sender(),
      recipients: [{ address: sender(), toChain: 'ETH', toToken: 'USDT', amount: '1000' }],
    })
    const statuses: number[] = []
    for (let i = 0; i < PAID_SIMULATIONS_PER_CALLER_MINUTE; i += 1)
      statuses.push((await postJson(service, '/api/v1/batch/disburse', batch(), { 'x-swapeazi-key': key })).status)
    expect(statuses).toEqual(Array.from({ length: PAID_SIMULATIONS_PER_CALLER_MINUTE }, () => 200))
    const limited = await postJson(service, '/api/v1/batch/disburse', batch(), { 'x-swapeazi-key': key })
    expect(limited.status).toBe(429)
    expect(await readJson(limited)).toMatchObject({
      code: 'rate_limited',
      policy: 'preflight-paid',
      limit: PAID_SIMULATIONS_PER_CALLER_MINUTE,
    })
    const retryAfter = limited.headers.get('retry-after')
    expect(retryAfter).toMatch(/^[0-9]+$/)
    // In place of the key's own per-minute policy, which the rate-limit middleware had set with quota left.
    expect(limited.headers.get('ratelimit')).toBe(`"preflight-paid";r=0;t=${retryAfter}`)
    expect(limited.headers.get('ratelimit-policy')).toBe(`"preflight-paid";q=${PAID_SIMULATIONS_PER_CALLER_MINUTE};w=60`)
  }, 120_000)
})
