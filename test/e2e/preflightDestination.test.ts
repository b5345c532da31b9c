import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import type { ChainCode } from '../../src/schemas/catalogue.ts'
import { findRoutes } from '../../src/engine/index.ts'
import { createTransactionSimulator, type Simulators } from '../../src/tx/simulateTransaction.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { routerOnWorld, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { standInAbi } from '../chain/standIns.ts'
import { KEY_SECRET, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { signPayment } from '../payments/signPayment.ts'
import { PAY_TO } from '../http/testApp.ts'

// Issue 17 item 7: a cross-chain route simulates its source leg, and its destination leg's minimum is checked
// against the destination chain's live state: our executor's runDestination of the built order, run by the executor
// on the destination chain holding what the bridge is expected to deliver.

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
let world: CatalogueOnChains | undefined
/** Simulations each chain's simulator ran, so a test can see which legs were simulated. */
const simulated = new Map<ChainCode, number>()

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL'])
}, 120_000)
afterAll(async () => world?.stop())

function app() {
  if (world === undefined) throw new Error('no world')
  const deployed = world
  const simulators: Simulators = {}
  for (const chain of ['BAS', 'POL'] as const) {
    const simulate = createTransactionSimulator(createPublicClient({ transport: http(setupOf(deployed, chain).instance.rpcUrl) }))
    simulators[chain] = (parameters) => {
      simulated.set(chain, (simulated.get(chain) ?? 0) + 1)
      return simulate(parameters)
    }
  }
  return createServer(
    testDeps({
      catalogue: deployed.catalogue,
      files: deployed.files,
      routerOn: routerOnWorld(deployed),
      clock: Date.now,
      simulators,
    }),
  )
}

const sender = (): string => privateKeyToAccount(generatePrivateKey()).address.toLowerCase()
const usdcToEure = (from: string) =>
  quoteBody({ fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'EURe', fromAmount: '1000', fromAddress: from })

describe('pre-flight of a cross-chain build: the destination leg', () => {
  it('simulates both legs, and refuses with 422 simulation_failed when the destination venue can no longer meet the minimum', async () => {
    if (world === undefined) throw new Error('no world')
    const from = tokenOf(world, 'BAS:USDC')
    const to = tokenOf(world, 'POL:EURe')
    const found = findRoutes(world.catalogue, { from, to, amountIn: 1000n * 10n ** 6n, slippageE18: 5n * 10n ** 15n })
    if (found.kind !== 'routes') throw new Error(found.kind)
    const route = found.ranked.BALANCED.route
    const edge = route.destinationSwaps[0]
    if (edge === undefined || route.bridge === undefined) throw new Error(`the BALANCED route ${route.id} has no destination swap`)

    const service = app()
    const before = { BAS: simulated.get('BAS') ?? 0, POL: simulated.get('POL') ?? 0 }
    expect((await postJson(service, '/api/x402/swap', usdcToEure(sender()))).status).toBe(402)
    expect(simulated.get('BAS')).toBe(before.BAS + 1)
    expect(simulated.get('POL')).toBe(before.POL + 1)

    // The destination venue now pays half its rate: the source leg still executes, the destination order cannot.
    const { instance } = setupOf(world, 'POL')
    await writeContractAndWait(instance, instance.accounts[0]!, {
      address: edge.venue.contract,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'setRate',
      args: [edge.from.address, edge.to.address, 1n, 2n],
    })
    const payer = privateKeyToAccount(generatePrivateKey())
    // The payment is in the world's Base USDC, as the 402 asks.
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000), asset: from.address })
    for (const headers of [{}, { 'x-payment': header }]) {
      const refused = await postJson(service, '/api/x402/swap', usdcToEure(sender()), headers)
      const problem = await readJson(refused)
      expect(refused.status, JSON.stringify(problem)).toBe(422)
      expect(problem).toMatchObject({ code: 'simulation_failed', chain: 'POL', leg: 'destination' })
      expect(problem['detail']).toMatch(/^Not built, and nothing was charged: on POL, the destination swap of the [0-9.]+ USDC/)
      expect(problem['detail']).toMatch(/the executor would deliver the bridged USDC instead/)
      expect(problem['reason']).toMatch(/below minimum|Too little received/)
    }
    // A keyed batch with a recipient paid across the bridge in EURe is refused the same way, naming the recipient.
    const batch = await postJson(
      service,
      '/api/v1/batch/disburse',
      {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: sender(),
        recipients: [
          { address: sender(), toChain: 'BAS', toToken: 'USDC', amount: '10' },
          { address: sender(), toChain: 'POL', toToken: 'EURe', amount: '1000' },
        ],
      },
      { 'x-swapeazi-key': signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef0123beef', tier: 'pro', iat: 1_795_000_000 }) },
    )
    expect(batch.status).toBe(422)
    expect(await readJson(batch)).toMatchObject({ code: 'simulation_failed', chain: 'POL', leg: 'destination', field: 'recipients[1]' })
    const [row] = await testDeps().store.sql.query<{ n: number }>('select count(*)::int as n from x402_payments where payer = $1', [
      payer.address.toLowerCase(),
    ])
    expect(row?.n).toBe(0)
  }, 60_000)

  it('runs no simulation for a payment whose signature does not verify', async () => {
    const service = app()
    const payer = privateKeyToAccount(generatePrivateKey())
    const asset = tokenOf(world as CatalogueOnChains, 'BAS:USDC').address
    const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000), asset })
    const payment = JSON.parse(Buffer.from(header, 'base64').toString('utf8'))
    payment.payload.signature = `0x${'11'.repeat(65)}`
    const forged = Buffer.from(JSON.stringify(payment)).toString('base64')
    const before = simulated.get('BAS') ?? 0
    const refused = await postJson(service, '/api/x402/swap', usdcToEure(sender()), { 'x-payment': forged })
    expect(refused.status).toBe(402)
    expect(simulated.get('BAS') ?? 0).toBe(before)
  })
})
