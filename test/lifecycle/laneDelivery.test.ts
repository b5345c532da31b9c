// laneDeliveryRefusal on the bridges' real receive events, which our anvil stand-ins do not emit (Across FilledRelay,
// LayerZero OFTReceived) and CCTP's MessageReceived parsed from its data: receipts encoded with viem from the signatures in shared/reference/live-chain.md (f),
// read through a client that answers them by hash.
import {
  type Address,
  concatHex,
  encodeAbiParameters,
  encodeEventTopics,
  getAddress,
  type Hex,
  pad,
  parseAbiItem,
  toHex,
  zeroAddress,
} from 'viem'
import { describe, expect, it } from 'vitest'
import type { ExpectedOrder } from '../../src/lifecycle/expectedOrder.ts'
import { laneDeliveryRefusal } from '../../src/lifecycle/laneDelivery.ts'
import type { TrackerContext } from '../../src/lifecycle/trackerContext.ts'
import type { TrackedSwap } from '../../src/store/createStore.ts'

const filledRelay = parseAbiItem(
  'event FilledRelay(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 repaymentChainId, uint256 indexed originChainId, uint256 indexed depositId, uint32 fillDeadline, uint32 exclusivityDeadline, bytes32 exclusiveRelayer, bytes32 indexed relayer, bytes32 depositor, bytes32 recipient, bytes32 messageHash, (bytes32 updatedRecipient, bytes32 updatedMessageHash, uint256 updatedOutputAmount, uint8 fillType) relayExecutionInfo)',
)
const fundsDeposited = parseAbiItem(
  'event FundsDeposited(bytes32 inputToken, bytes32 outputToken, uint256 inputAmount, uint256 outputAmount, uint256 indexed destinationChainId, uint256 indexed depositId, uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityDeadline, bytes32 indexed depositor, bytes32 recipient, bytes32 exclusiveRelayer, bytes message)',
)
const oftSent = parseAbiItem(
  'event OFTSent(bytes32 indexed guid, uint32 dstEid, address indexed fromAddress, uint256 amountSentLD, uint256 amountReceivedLD)',
)
const depositForBurn = parseAbiItem(
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
)
const messageReceived = parseAbiItem(
  'event MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, bytes messageBody)',
)
const oftReceived = parseAbiItem(
  'event OFTReceived(bytes32 indexed guid, uint32 srcEid, address indexed toAddress, uint256 amountReceivedLD)',
)

const at = (byte: string): Address => getAddress(`0x${byte.repeat(20)}`)
const recipient = at('a1')
const token = at('70')
const spokePool = at('5b')
const oft = at('0f')
const endpoint = at('e0')
const relayer = at('4e')
const SOURCE_TX: Hex = `0x${'01'.repeat(32)}`
const DELIVERY_TX: Hex = `0x${'02'.repeat(32)}`
const BAS_CHAIN_ID = 8453
const amount = 499_000_000n
const word = (address: Address): Hex => pad(address, { size: 32 })

type Log = { address: Address; topics: Hex[]; data: Hex; logIndex: number }

function contextOf(receipts: Record<Hex, Log[]>): TrackerContext {
  const client = {
    getTransactionReceipt: async ({ hash }: { hash: Hex }) => ({ status: 'success', logs: receipts[hash] ?? [] }),
  }
  return {
    clients: { BAS: client, POL: client },
    routerOn: () => ({ router: at('b0'), executor: at('b1') }),
    catalogue: () => ({ chains: new Map([['BAS', { chainId: BAS_CHAIN_ID }]]) }),
  } as never
}

function expectedOn(protocol: string): ExpectedOrder {
  return {
    chain: 'BAS',
    router: at('b0'),
    sender: at('5e'),
    orderRef: 'swp_x',
    orderRefBytes32: `0x${'00'.repeat(32)}`,
    orderIndex: 0,
    tokenIn: at('11'),
    amountIn: 500_000_000n,
    fee: 1n,
    recipient,
    tokenOut: zeroAddress,
    deadline: 0n,
    destination: {
      chain: 'POL',
      kind: 'plain',
      token,
      minAmount: 490_000_000n,
      lane: {
        protocol,
        deliveredBy: protocol === 'across' ? spokePool : endpoint,
        destinationContract: oft,
        token,
        minAmount: 490_000_000n,
      },
    },
  }
}

const tracked = {
  lifecycle: { legs: { bridge: { chain: 'BAS', txHash: SOURCE_TX, blockNumber: 1n, blockHash: SOURCE_TX, logIndex: 2 } } },
} as never as TrackedSwap
const transfer = (from: Address) => ({ transactionHash: DELIVERY_TX, args: { from, to: recipient, value: amount } })

describe('Across: FilledRelay from the lane SpokePool for this deposit', () => {
  const deposit = (depositId: bigint): Log => ({
    address: at('5a'),
    logIndex: 2,
    topics: encodeEventTopics({ abi: [fundsDeposited], args: { destinationChainId: 137n, depositId, depositor: word(at('b1')) } }) as Hex[],
    data: '0x',
  })
  const fill = (address: Address, originChainId: bigint, depositId: bigint, to: Address): Log => ({
    address,
    logIndex: 5,
    topics: encodeEventTopics({ abi: [filledRelay], args: { originChainId, depositId, relayer: word(relayer) } }) as Hex[],
    data: encodeAbiParameters(
      filledRelay.inputs.filter((input) => !('indexed' in input && input.indexed)),
      [
        word(at('11')),
        word(token),
        500_000_000n,
        amount,
        BigInt(BAS_CHAIN_ID),
        0,
        0,
        word(zeroAddress),
        word(at('b1')),
        word(to),
        pad('0x00'),
        { updatedRecipient: word(to), updatedMessageHash: pad('0x00'), updatedOutputAmount: amount, fillType: 0 },
      ],
    ),
  })
  const check = (fillLog: Log, depositId = 7n) => {
    const context = contextOf({ [SOURCE_TX]: [deposit(depositId)], [DELIVERY_TX]: [fillLog] })
    return laneDeliveryRefusal(context, context.clients.POL!, expectedOn('across'), tracked, transfer(relayer))
  }

  it('accepts the fill of our deposit to the recipient', async () => {
    expect(await check(fill(spokePool, BigInt(BAS_CHAIN_ID), 7n, recipient))).toBeUndefined()
  })
  it('refuses a fill of another deposit, from another chain, to another recipient, or not by the SpokePool', async () => {
    expect(await check(fill(spokePool, BigInt(BAS_CHAIN_ID), 8n, recipient))).toMatch(/no FilledRelay/)
    expect(await check(fill(spokePool, 1n, 7n, recipient))).toMatch(/no FilledRelay/)
    expect(await check(fill(spokePool, BigInt(BAS_CHAIN_ID), 7n, at('99')))).toMatch(/no FilledRelay/)
    expect(await check(fill(at('66'), BigInt(BAS_CHAIN_ID), 7n, recipient))).toMatch(/no FilledRelay/)
  })
})

describe('LayerZero: OFTReceived with the guid of our OFTSent', () => {
  const guid = toHex(42n, { size: 32 })
  const sent: Log = {
    address: at('0e'),
    logIndex: 2,
    topics: encodeEventTopics({ abi: [oftSent], args: { guid, fromAddress: at('b1') } }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint32' }, { type: 'uint256' }, { type: 'uint256' }], [30109, amount, amount]),
  }
  const received = (address: Address, receivedGuid: Hex, value: bigint): Log => ({
    address,
    logIndex: 5,
    topics: encodeEventTopics({ abi: [oftReceived], args: { guid: receivedGuid, toAddress: recipient } }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint32' }, { type: 'uint256' }], [30184, value]),
  })
  const check = (log: Log, from: Address = zeroAddress) => {
    const context = contextOf({ [SOURCE_TX]: [sent], [DELIVERY_TX]: [log] })
    return laneDeliveryRefusal(context, context.clients.POL!, expectedOn('stargate-v2'), tracked, transfer(from))
  }

  it("accepts the OFT's credit of our send, minted or paid by the pool", async () => {
    expect(await check(received(oft, guid, amount))).toBeUndefined()
    expect(await check(received(oft, guid, amount), oft)).toBeUndefined()
  })
  it('refuses another guid, another amount, another emitter, or a payment by someone else', async () => {
    expect(await check(received(oft, toHex(43n, { size: 32 }), amount))).toMatch(/no OFTReceived/)
    expect(await check(received(oft, guid, amount + 1n))).toMatch(/no OFTReceived/)
    expect(await check(received(at('66'), guid, amount))).toMatch(/no OFTReceived/)
    expect(await check(received(oft, guid, amount), at('66'))).toMatch(/not the lane's OFT/)
  })
})

describe('CCTP: MessageReceived from the lane transmitter for our burn', () => {
  const transmitter = endpoint
  const burn = (burnt: bigint): Log => ({
    address: at('7e'),
    logIndex: 2,
    topics: encodeEventTopics({
      abi: [depositForBurn],
      args: { burnToken: at('11'), depositor: at('b1'), minFinalityThreshold: 2000 },
    }) as Hex[],
    data: encodeAbiParameters(
      depositForBurn.inputs.filter((input) => !('indexed' in input && input.indexed)),
      [burnt, word(recipient), 7, word(at('7e')), pad('0x00'), 1_000_000n, '0x'],
    ),
  })
  const received = (options: { domain?: number; burner?: Address; to?: Address; burnt?: bigint; fee?: bigint; emitter?: Address }): Log => {
    const body = concatHex([
      toHex(1, { size: 4 }),
      word(at('11')),
      word(options.to ?? recipient),
      toHex(options.burnt ?? amount + 1_000_000n, { size: 32 }),
      word(options.burner ?? at('b1')),
      toHex(1_000_000n, { size: 32 }),
      toHex(options.fee ?? 1_000_000n, { size: 32 }),
      toHex(0n, { size: 32 }),
    ])
    return {
      address: options.emitter ?? transmitter,
      logIndex: 5,
      topics: encodeEventTopics({
        abi: [messageReceived],
        args: { caller: relayer, nonce: pad('0x01'), finalityThresholdExecuted: 2000 },
      }) as Hex[],
      data: encodeAbiParameters([{ type: 'uint32' }, { type: 'bytes32' }, { type: 'bytes' }], [options.domain ?? 6, word(at('7e')), body]),
    }
  }
  const expected = (): ExpectedOrder => {
    const order = expectedOn('cctp-v2')
    return {
      ...order,
      destination: { ...order.destination!, lane: { ...order.destination!.lane!, deliveredBy: transmitter, sourceDomain: 6 } },
    }
  }
  const check = (log: Log, from: Address = zeroAddress) => {
    const context = contextOf({ [SOURCE_TX]: [burn(amount + 1_000_000n)], [DELIVERY_TX]: [log] })
    return laneDeliveryRefusal(context, context.clients.POL!, expected(), tracked, transfer(from))
  }

  it('accepts the mint of our burn to the recipient, less the executed fee', async () => {
    expect(await check(received({}))).toBeUndefined()
  })
  it('refuses another source domain, burner, recipient, burnt amount, fee, or transmitter', async () => {
    expect(await check(received({ domain: 3 }))).toMatch(/no MessageReceived/)
    expect(await check(received({ burner: at('66') }))).toMatch(/no MessageReceived/)
    expect(await check(received({ to: at('66') }))).toMatch(/no MessageReceived/)
    expect(await check(received({ burnt: amount + 2_000_000n, fee: 2_000_000n }))).toMatch(/no MessageReceived/)
    expect(await check(received({ fee: 0n }))).toMatch(/no MessageReceived/)
    expect(await check(received({ emitter: at('66') }))).toMatch(/no MessageReceived/)
  })
  it('refuses a Transfer that is not a mint', async () => {
    const context = contextOf({ [DELIVERY_TX]: [] })
    expect(await laneDeliveryRefusal(context, context.clients.POL!, expectedOn('cctp-v2'), tracked, transfer(at('66')))).toMatch(
      /^not minted/,
    )
  })
})
