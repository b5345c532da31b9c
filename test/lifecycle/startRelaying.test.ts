// What serve starts beside the tracker (src/app/startRelaying.ts), wired from configuration as serve wires it: off
// without a relayer key; with one, the tracker's hook relays a CCTP message on the chains of SWAPEAZI_RPC_URLS through
// the configured attestation service; the payment reconciler runs only with the onchain settler. Stopping waits for a
// CCTP relay or LayerZero compose retry under way, for at most its grace, and sends nothing after.
import { PassThrough } from 'node:stream'
import pino from 'pino'
import { getAddress, parseEventLogs, stringToHex, toHex } from 'viem'
import { mnemonicToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chainIdChecksFromConfig } from '../../src/app/chainIdCheck.ts'
import { startRelaying } from '../../src/app/startRelaying.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { loadConfig } from '../../src/config.ts'
import { swapEaziExecutorAbi } from '../../src/contracts/routerArtifact.ts'
import { compileCatalogue } from '../../src/engine/index.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { ANVIL_MNEMONIC, anvilAccounts, writeContractAndWait } from '../chain/anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { executeSwap, planSwap, relay, setupOf } from '../chain/routeExecution.ts'
import { standInAbi, standInEvents } from '../chain/standIns.ts'
import { testDeps } from '../http/testApp.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'
import { type AttestationStandIn, startAttestationStandIn } from './attestationStandIn.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
let world: CatalogueOnChains
let standIn: AttestationStandIn
let opened: OpenedStore

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL'])
  standIn = await startAttestationStandIn({ chains: new Map([[6, setupOf(world, 'BAS').instance]]), pendingPolls: 0 })
  opened = await storeDrivers()[0]!.open()
}, 120_000)
afterAll(async () => {
  await standIn?.close()
  await opened?.cleanup()
  await world?.stop()
})

/** The key of anvil's dev account 7, funded on both chains. */
const relayerKey = (): `0x${string}` => toHex(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 7 }).getHdKey().privateKey!)

function logs(): { log: pino.Logger; text: () => string } {
  const sink = new PassThrough()
  let text = ''
  sink.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  return { log: pino({ level: 'info' }, sink), text: () => text }
}

function depsFor(log: pino.Logger): ReturnType<typeof testDeps> {
  return testDeps({
    catalogue: compileCatalogue(world.files),
    files: world.files,
    // Chains not deployed here get the BAS router's addresses (serve gives every chain one).
    routerOn: (chain) => world.chains.get(chain)?.router ?? setupOf(world, 'BAS').router,
    store: opened.store,
    clock: Date.now,
    log,
  })
}

const rpcUrls = (): string => JSON.stringify({ BAS: setupOf(world, 'BAS').instance.rpcUrl, POL: setupOf(world, 'POL').instance.rpcUrl })

describe('startRelaying', () => {
  it('is off without a relayer key, and runs no reconciler with the ledger settler', async () => {
    const { log, text } = logs()
    const config = loadConfig({ SWAPEAZI_RPC_URLS: rpcUrls() })
    const relaying = startRelaying(config, { ...depsFor(log), chainIds: chainIdChecksFromConfig(config, log) })
    expect(relaying.hooks).toEqual({})
    await relaying.stop()
    await new Promise((resolve) => setImmediate(resolve))
    expect(text()).toContain('CCTP relayer off: SWAPEAZI_RELAYER_PRIVATE_KEY is not set')
    expect(text()).toContain('payment reconciler off')
  })

  it('runs the payment reconciler with the onchain settler', async () => {
    const { log, text } = logs()
    const deps = depsFor(log)
    const settler = {
      ...deps.settler,
      mode: 'onchain' as const,
      reconcile: async () => ({ state: 'pending' as const, message: 'not mined' }),
    }
    const relaying = startRelaying(loadConfig({}), { ...deps, settler, chainIds: {} })
    await relaying.stop()
    await new Promise((resolve) => setImmediate(resolve))
    expect(text()).toContain('payment reconciler on')
  })

  it('with a key, the tracker hook relays a CCTP message with a swap on arrival through the configured service', async () => {
    const { log, text } = logs()
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: rpcUrls(),
      SWAPEAZI_RELAYER_PRIVATE_KEY: relayerKey(),
      SWAPEAZI_CCTP_ATTESTATION_URL: `${standIn.url}/`,
    })
    const relaying = startRelaying(config, { ...depsFor(log), chainIds: chainIdChecksFromConfig(config, log) })
    try {
      expect(relaying.hooks.onSourceFinal).toBeTypeOf('function')
      const ref = newSwapRef(Date.now())
      const plan = await planSwap(
        world,
        'BAS:USDC',
        'POL:EURe',
        500n,
        (id) => id.startsWith('cctp-v2-fast:BAS>POL|pol-univ3-eure-usdc-500'),
        {
          ref: stringToHex(ref, { size: 32 }),
        },
      )
      const receipt = await executeSwap(world, plan)
      // The relayer reads the swap's recorded build: only its DestinationOrder is relayed.
      await opened.store.recordKeyedSwap({
        ref,
        channel: 'api_key',
        status: 'built',
        fromChain: 'BAS',
        toChain: 'POL',
        fromToken: 'USDC',
        toToken: 'EURe',
        fromAmount: '500',
        toAmount: String(plan.toAmount),
        toAmountMin: String(plan.toAmountMin),
        fromAddress: plan.sender.address,
        toAddress: plan.recipient,
        quote: {},
        transactionRequest: plan.build.transactionRequest,
        keyId: 'k_relaying',
        createdAt: new Date(),
      })
      const before = standIn.requests.length
      relaying.hooks.onSourceFinal?.({ ref, legs: { source: { chain: 'BAS' } } }, receipt)
      // The hook returns at once; the relay runs in the background and logs its outcome.
      for (let waited = 0; !/cctp_(relayed|failed)/.test(text()) && waited < 30_000; waited += 50)
        await new Promise((resolve) => setTimeout(resolve, 50))
      expect(standIn.requests.length).toBeGreaterThan(before)
      const relayed = /"event":"cctp_relayed"[^\n]*"transaction":"(0x[0-9a-f]{64})"/.exec(text())
      expect(relayed, text()).not.toBeNull()
      const pol = setupOf(world, 'POL').instance
      const delivery = await pol.publicClient.getTransactionReceipt({ hash: relayed![1] as `0x${string}` })
      expect(getAddress(delivery.from)).toBe(anvilAccounts()[7]!.address)
      const [executed] = parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })
      expect(executed?.args.ref).toBe(stringToHex(ref, { size: 32 }))
      expect(text()).toContain('CCTP relayer on for')
      expect(text()).toContain('LayerZero compose retries on for')
    } finally {
      await relaying.stop()
    }
  })

  it('stop() resolves only once the LayerZero compose retry under way has ended (after the store may close)', async () => {
    const { log, text } = logs()
    const pol = setupOf(world, 'POL').instance
    await queueFailedCompose()

    const config = loadConfig({ SWAPEAZI_RPC_URLS: rpcUrls(), SWAPEAZI_RELAYER_PRIVATE_KEY: relayerKey() })
    const relayerAddress = anvilAccounts()[7]!.address
    // Nothing is mined while the retry waits for its receipt: the sweep is held inside its submission.
    await pol.testClient.setAutomine(false)
    try {
      const relaying = startRelaying(config, { ...depsFor(log), chainIds: chainIdChecksFromConfig(config, log), sweepIntervalMs: 200 })
      const retry = await pendingFrom(pol, relayerAddress)
      let logsAtStop: string | undefined
      const stopping = relaying.stop().then(() => {
        logsAtStop = text()
      })
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(logsAtStop).toBeUndefined()
      await pol.testClient.mine({ blocks: 1 })
      await stopping
      expect(logsAtStop).toMatch(new RegExp(`"event":"lz_compose_retried"[^\\n]*"transaction":"${retry}"`))
      expect((await pol.publicClient.getTransactionReceipt({ hash: retry })).status).toBe('success')
    } finally {
      await pol.testClient.mine({ blocks: 1 })
      await pol.testClient.setAutomine(true)
    }
  }, 60_000)

  it('stop() waits for the compose retry under way at most its grace, then resolves saying its outcome is unknown', async () => {
    const { log, text } = logs()
    const pol = setupOf(world, 'POL').instance
    await queueFailedCompose()
    const config = loadConfig({ SWAPEAZI_RPC_URLS: rpcUrls(), SWAPEAZI_RELAYER_PRIVATE_KEY: relayerKey() })
    // Nothing is mined: the retry would wait for its receipt for 2 minutes.
    await pol.testClient.setAutomine(false)
    try {
      const relaying = startRelaying(config, {
        ...depsFor(log),
        chainIds: chainIdChecksFromConfig(config, log),
        sweepIntervalMs: 200,
        stopGraceMs: 500,
      })
      await pendingFrom(pol, anvilAccounts()[7]!.address)
      const started = Date.now()
      const stopped = await Promise.race([
        relaying.stop().then(() => 'stopped'),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ])
      expect(stopped).toBe('stopped')
      expect(Date.now() - started).toBeGreaterThanOrEqual(450)
      expect(text()).toMatch(/"event":"lz_compose_stop_cut"[^\n]*"grace_ms":500[^\n]*its outcome is unknown/)
      expect(text()).not.toContain('lz_compose_retried')
    } finally {
      await pol.testClient.mine({ blocks: 1 })
      await pol.testClient.setAutomine(true)
      // The retry left running ends once mined, before the store and the chains are closed.
      for (let waited = 0; !/lz_compose_(retried|failed)/.test(text()) && waited < 15_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }, 60_000)

  it('stop() waits for the CCTP relay under way at most its grace, says its outcome is unknown, and sends nothing after', async () => {
    const { log, text } = logs()
    const pol = setupOf(world, 'POL').instance
    const relayerAddress = anvilAccounts()[7]!.address
    // Two swaps to relay to POL: the second waits behind the first for the relayer key's lease.
    const swaps = [await burnCctpWithSwap(), await burnCctpWithSwap()]
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: rpcUrls(),
      SWAPEAZI_RELAYER_PRIVATE_KEY: relayerKey(),
      SWAPEAZI_CCTP_ATTESTATION_URL: `${standIn.url}/`,
    })
    // Nothing is mined: the first relay would wait for its receipt for 2 minutes.
    await pol.testClient.setAutomine(false)
    try {
      const relaying = startRelaying(config, { ...depsFor(log), chainIds: chainIdChecksFromConfig(config, log), stopGraceMs: 500 })
      for (const { record, receipt } of swaps) relaying.hooks.onSourceFinal?.(record, receipt)
      const first = await pendingFrom(pol, relayerAddress)
      // Both attested: the second is queued behind the first.
      for (let waited = 0; waited < 10_000; waited += 50) {
        const asked = new Set(standIn.requests.map((request) => request.transactionHash.toLowerCase()))
        if (swaps.every(({ receipt }) => asked.has(receipt.transactionHash.toLowerCase()))) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
      const sentBeforeStop = await pol.publicClient.getTransactionCount({ address: relayerAddress, blockTag: 'pending' })

      const started = Date.now()
      const stopped = await Promise.race([
        relaying.stop().then(() => 'stopped'),
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ])
      expect(stopped).toBe('stopped')
      expect(Date.now() - started).toBeGreaterThanOrEqual(450)
      expect(text()).toMatch(/"event":"cctp_relay_stop_cut"[^\n]*"grace_ms":500[^\n]*its outcome is unknown/)
      expect(text()).not.toContain('cctp_relayed')

      // Mined now: the relay left running ends, and the one queued behind it sends nothing.
      await pol.testClient.mine({ blocks: 1 })
      for (let waited = 0; !/cctp_relayed[\s\S]*cctp_failed|cctp_failed[\s\S]*cctp_relayed/.test(text()) && waited < 15_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100))
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(await pol.publicClient.getTransactionCount({ address: relayerAddress, blockTag: 'pending' })).toBe(sentBeforeStop)
      expect(await pol.publicClient.getTransactionCount({ address: relayerAddress, blockTag: 'latest' })).toBe(sentBeforeStop)
      expect(text()).toMatch(new RegExp(`"event":"cctp_relayed"[^\\n]*"transaction":"${first}"`))
      expect(text()).toMatch(/"event":"cctp_failed"[^\n]*the relayer stopped before sending; nothing was sent/)
    } finally {
      await pol.testClient.mine({ blocks: 1 })
      await pol.testClient.setAutomine(true)
    }
  }, 60_000)
})

/** A CCTP transfer BAS → POL with a swap on arrival, mined on BAS: the relay record and receipt the tracker's hook gets. */
async function burnCctpWithSwap(): Promise<{
  record: { ref: string; fromChain: string; transactionRequest: unknown }
  receipt: Awaited<ReturnType<typeof executeSwap>>
}> {
  const ref = newSwapRef(Date.now())
  const plan = await planSwap(world, 'BAS:USDC', 'POL:EURe', 500n, (id) => id.startsWith('cctp-v2-fast:BAS>POL|pol-univ3-eure-usdc-500'), {
    ref: stringToHex(ref, { size: 32 }),
  })
  const receipt = await executeSwap(world, plan)
  expect(receipt.status).toBe('success')
  return { record: { ref, fromChain: 'BAS', transactionRequest: plan.build.transactionRequest }, receipt }
}

/** The first transaction from `sender` in the chain's pool, once there is one. */
async function pendingFrom(chain: ReturnType<typeof setupOf>['instance'], sender: string): Promise<`0x${string}`> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const pool = await chain.testClient.getTxpoolContent()
    const entries = Object.entries(pool.pending).find(([from]) => from.toLowerCase() === sender.toLowerCase())?.[1]
    const [transaction] = Object.values(entries ?? {})
    if (transaction !== undefined) return transaction.hash
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`no pending transaction from ${sender}`)
}

/**
 * A Stargate transfer BAS → POL with a swap on arrival whose compose the LayerZero executor gave too little gas: alerted
 * and queued for a retry, its swap recorded and pending.
 */
async function queueFailedCompose(): Promise<void> {
  const pol = setupOf(world, 'POL').instance
  const ref = newSwapRef(Date.now())
  const plan = await planSwap(
    world,
    'BAS:USDC',
    'POL:EURe',
    1000n,
    (id) => id.startsWith('stargate-usdc-taxi:BAS>POL|pol-univ3-eure-usdc-500'),
    { ref: stringToHex(ref, { size: 32 }) },
  )
  // The LayerZero executor gives the compose too little gas: it is alerted and stays queued for a retry.
  const setGas = (gas: bigint) =>
    writeContractAndWait(pol, pol.accounts[0]!, {
      address: getAddress(plan.priced.route.bridge!.deliveredBy!),
      abi: standInAbi('LayerZeroEndpointStandIn'),
      functionName: 'setComposeGasLimit',
      args: [gas],
    })
  await setGas(30_000n)
  const receipt = await executeSwap(world, plan)
  const delivery = await relay(world, plan, receipt)
  await setGas(0n)
  expect(standInEvents('LayerZeroEndpointStandIn', delivery.logs, { eventName: 'LzComposeAlert' })).toHaveLength(1)
  await opened.store.recordKeyedSwap({
    ref,
    channel: 'api_key',
    status: 'built',
    fromChain: 'BAS',
    toChain: 'POL',
    fromToken: 'USDC',
    toToken: 'EURe',
    fromAmount: '1000',
    toAmount: String(plan.toAmount),
    toAmountMin: String(plan.toAmountMin),
    fromAddress: plan.sender.address,
    toAddress: plan.recipient,
    quote: {},
    transactionRequest: plan.build.transactionRequest,
    keyId: 'k_relaying',
    createdAt: new Date(),
  })
  const source = {
    chain: 'BAS',
    txHash: receipt.transactionHash,
    blockNumber: receipt.blockNumber,
    blockHash: receipt.blockHash,
    logIndex: 0,
  }
  expect((await opened.store.lifecycle.update(ref, { state: 'pending', legs: { source }, at: new Date() }, ['built']))?.updated).toBe(true)
}
