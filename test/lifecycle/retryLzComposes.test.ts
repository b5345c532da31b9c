// A LayerZero compose to our executor that failed (LzComposeAlert on the endpoint) is retried by the relayer key:
// Stargate taxi BAS → POL with a swap on arrival, on two anvil chains with the catalogue's stand-ins.
import pino from 'pino'
import { getAddress, parseEventLogs, stringToHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { swapEaziExecutorAbi } from '../../src/contracts/routerArtifact.ts'
import { createLzComposeRetrier, endpointV2ComposeAbi, type LzRetryDestination } from '../../src/lifecycle/retryLzComposes.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { writeContractAndWait } from '../chain/anvil.ts'
import { type CatalogueOnChains, deployCatalogueOnChains } from '../chain/deployCatalogue.ts'
import { balanceOf, executeSwap, planSwap, relay, setupOf, tokenOf } from '../chain/routeExecution.ts'
import { standInAbi, standInEvents } from '../chain/standIns.ts'
import { type OpenedStore, storeDrivers } from '../store/storeDrivers.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
/** The retriers' log lines, at debug: a failure below names what each sweep read and skipped. */
const logged: string[] = []
const log = pino({ level: 'debug' }, { write: (line: string) => void logged.push(line.trim()) })
let world: CatalogueOnChains
let opened: OpenedStore

beforeAll(async () => {
  world = await deployCatalogueOnChains(loadCatalogue(MANIFEST).files, ['BAS', 'POL'])
  opened = await storeDrivers()[0]!.open()
}, 120_000)
afterAll(async () => {
  await opened?.cleanup()
  await world?.stop()
})

describe('LayerZero compose retries (issue 18 item 4)', () => {
  it('a compose that ran out of gas is alerted, then retried once by the relayer key: the order runs, a duplicate cannot', async () => {
    const pol = setupOf(world, 'POL')
    const ref = newSwapRef(Date.now())
    const plan = await planSwap(
      world,
      'BAS:USDC',
      'POL:EURe',
      1000n,
      (id) => id.startsWith('stargate-usdc-taxi:BAS>POL|pol-univ3-eure-usdc-500'),
      {
        ref: stringToHex(ref, { size: 32 }),
      },
    )
    const endpoint = getAddress(plan.priced.route.bridge!.deliveredBy!)
    const eure = tokenOf(world, 'POL:EURe')
    const usdc = tokenOf(world, 'POL:USDC')
    const before = await balanceOf(pol.instance, eure, plan.recipient)
    // The LayerZero executor gives the compose too little gas: it fails after the credit, as on chain.
    const setGas = (gas: bigint) =>
      writeContractAndWait(pol.instance, pol.instance.accounts[0]!, {
        address: endpoint,
        abi: standInAbi('LayerZeroEndpointStandIn'),
        functionName: 'setComposeGasLimit',
        args: [gas],
      })
    await setGas(30_000n)
    const receipt = await executeSwap(world, plan)
    const delivery = await relay(world, plan, receipt)
    await setGas(0n)
    expect(delivery.status).toBe('success')
    const [alert] = standInEvents('LayerZeroEndpointStandIn', delivery.logs, { eventName: 'LzComposeAlert' })
    expect(alert?.args).toMatchObject({ to: pol.router.executor, index: 0 })
    expect(parseEventLogs({ abi: swapEaziExecutorAbi, logs: delivery.logs, eventName: 'DestinationExecuted' })).toEqual([])
    const stranded = await balanceOf(pol.instance, usdc, pol.router.executor)
    expect(stranded > 0n).toBe(true)

    const relayerAccount = pol.instance.accounts[7]!
    const destination: LzRetryDestination = {
      chain: 'POL',
      endpoint,
      executor: pol.router.executor,
      publicClient: pol.instance.publicClient,
      walletClient: pol.instance.walletClient(relayerAccount),
    }
    const { store } = opened
    const retrierOn = () =>
      createLzComposeRetrier({
        destinations: [destination],
        leases: store.lifecycle.leases,
        lifecycle: store.lifecycle,
        holder: 'replica-a',
        log,
      })
    // An order to our executor that is no recorded swap of ours: the relayer key pays nothing for it.
    const sentBeforeRecord = await pol.instance.publicClient.getTransactionCount({ address: relayerAccount.address })
    expect(await retrierOn().sweep()).toEqual([])
    expect(await pol.instance.publicClient.getTransactionCount({ address: relayerAccount.address })).toBe(sentBeforeRecord)
    // Recorded, but not yet seen pending by the tracker: kept, not retried.
    await store.recordKeyedSwap({
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
      keyId: 'k_lz',
      createdAt: new Date(),
    })
    const retrier = retrierOn()
    expect(await retrier.sweep()).toEqual([])
    expect(await pol.instance.publicClient.getTransactionCount({ address: relayerAccount.address })).toBe(sentBeforeRecord)
    const source = {
      chain: 'BAS',
      txHash: receipt.transactionHash,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      logIndex: 0,
    }
    expect((await store.lifecycle.update(ref, { state: 'pending', legs: { source }, at: new Date() }, ['built']))?.updated).toBe(true)
    const [retried, ...others] = await retrier.sweep()
    expect(others).toEqual([])
    if (retried?.kind !== 'retried') throw new Error(`not retried: ${JSON.stringify(retried)}; the retriers logged:\n${logged.join('\n')}`)
    const retry = await pol.instance.publicClient.getTransactionReceipt({ hash: retried.transaction })
    expect(getAddress(retry.from)).toBe(relayerAccount.address)
    const [executed] = parseEventLogs({ abi: swapEaziExecutorAbi, logs: retry.logs, eventName: 'DestinationExecuted' })
    const received = (await balanceOf(pol.instance, eure, plan.recipient)) - before
    expect(executed?.args).toMatchObject({
      ref: stringToHex(ref, { size: 32 }),
      recipient: plan.recipient,
      amountIn: stranded,
      amountOut: received,
    })
    expect(received >= plan.toAmountMin).toBe(true)
    expect(await balanceOf(pol.instance, usdc, pol.router.executor)).toBe(0n)

    // Delivered: a second sweep sends nothing, and a forced duplicate is refused by the endpoint.
    const sent = await pol.instance.publicClient.getTransactionCount({ address: relayerAccount.address })
    expect(await retrier.sweep()).toEqual([])
    expect(await pol.instance.publicClient.getTransactionCount({ address: relayerAccount.address })).toBe(sent)
    const { from, guid, message } = alert!.args as { from: `0x${string}`; guid: `0x${string}`; message: `0x${string}` }
    await expect(
      pol.instance.publicClient.simulateContract({
        address: endpoint,
        abi: endpointV2ComposeAbi,
        functionName: 'lzCompose',
        args: [from, pol.router.executor, guid, 0, message, '0x'],
        account: pol.instance.accounts[6]!,
      }),
    ).rejects.toThrow(/LZ_ComposeNotFound/)
    expect((await balanceOf(pol.instance, eure, plan.recipient)) - before).toBe(received)
  })
})
