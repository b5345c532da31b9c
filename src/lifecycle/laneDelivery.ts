import { type Address, getAddress, type Hex, parseAbiItem, toEventSelector, zeroAddress } from 'viem'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { TrackedSwap } from '../store/createStore.ts'
import type { ExpectedOrder } from './expectedOrder.ts'
import type { TrackerClient, TrackerContext } from './trackerContext.ts'

/**
 * The bridges' receive events (shared/reference/live-chain.md (f); topics computed from the signatures it gives), and
 * the events our stand-ins emit where they do not emit the real one (test/chain/contracts/BridgeStandIns.sol).
 */
const MESSAGE_RECEIVED = toEventSelector('MessageReceived(address,uint32,bytes32,bytes32,uint32,bytes)')
const FILLED_RELAY = toEventSelector(
  'FilledRelay(bytes32,bytes32,uint256,uint256,uint256,uint256,uint256,uint32,uint32,bytes32,bytes32,bytes32,bytes32,bytes32,(bytes32,bytes32,uint256,uint8))',
)
const OFT_RECEIVED = toEventSelector('OFTReceived(bytes32,uint32,address,uint256)')
/** Stand-in only: SpokePoolStandIn.fillRelay's record of a fill (it carries no deposit id). */
const STAND_IN_RELAY_FILLED = toEventSelector(parseAbiItem('event RelayFilled(address indexed, address indexed, address, uint256, bytes)'))
/** Stand-in only: LayerZeroEndpointStandIn.deliver's record of a credit (its guid is its own, not the source's). */
const STAND_IN_DELIVERED = toEventSelector(
  parseAbiItem('event Delivered(bytes32 indexed, address indexed, address indexed, address, uint256, uint32, uint64, bytes32, bytes)'),
)
const FUNDS_DEPOSITED = toEventSelector(
  'FundsDeposited(bytes32,bytes32,uint256,uint256,uint256,uint256,uint32,uint32,uint32,bytes32,bytes32,bytes32,bytes)',
)
const OFT_SENT = toEventSelector('OFTSent(bytes32,uint32,address,uint256,uint256)')
const DEPOSIT_FOR_BURN = toEventSelector('DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)')

/** A destination-token Transfer to the recipient, as eth_getLogs decoded it. */
export type DeliveryTransfer = { transactionHash: Hex; args: { from: Address; to: Address; value: bigint } }

type ReceiptLog = { address: Address; topics: readonly Hex[]; data: Hex; logIndex: number }

const same = (a: string | undefined, b: string | undefined): boolean =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase()
const word = (data: Hex, index: number): Hex => `0x${data.slice(2 + index * 64, 2 + (index + 1) * 64)}`
const addressOfWord = (value: Hex | undefined): Address => getAddress(`0x${(value ?? '0x').slice(-40).padStart(40, '0')}`)

/**
 * Why a Transfer of the destination token to the recipient is not the delivery of this swap's bridge deposit (it is
 * then ignored); undefined when its transaction carries the lane's own delivery:
 * - CCTP: minted (from the zero address) in a transaction where the lane's MessageTransmitterV2 emitted MessageReceived
 *   from the source chain's domain (when the catalogue knows it) for a burn message to this recipient, burnt by our
 *   router or executor, of our DepositForBurn's amount (when the swap's bridge leg is one), minting exactly this amount
 *   (the message's amount less its executed fee);
 * - Across: paid in a transaction where the lane's SpokePool emitted FilledRelay for this deposit (origin chain id and
 *   deposit id from the swap's FundsDeposited) to this recipient and token; with our stand-in, which emits no
 *   FilledRelay, its RelayFilled to this recipient of this token and amount, paid by that relayer;
 * - LayerZero (Stargate, USDT0): paid by the lane's OFT, pool or endpoint or minted, in a transaction where the lane's
 *   OFT or endpoint emitted OFTReceived with the guid of the swap's OFTSent, to this recipient, of this amount; with our
 *   stand-in endpoint, its Delivered for the lane's OFT to this recipient of this token and amount.
 */
export async function laneDeliveryRefusal(
  context: TrackerContext,
  client: TrackerClient,
  expected: ExpectedOrder,
  tracked: TrackedSwap,
  transfer: DeliveryTransfer,
): Promise<string | undefined> {
  const lane = expected.destination?.lane
  if (lane === undefined) return 'the quote names no bridge lane the catalogue knows, so no delivery can be checked'
  const receipt = await client.getTransactionReceipt({ hash: transfer.transactionHash })
  if (receipt.status !== 'success') return 'its transaction reverted'
  const logs = receipt.logs as readonly ReceiptLog[]
  const { from, value } = transfer.args
  const recipient = expected.recipient
  const emitted = (address: Address | undefined, topic: string): ReceiptLog[] =>
    logs.filter((log) => same(log.address, address) && log.topics[0] === topic)
  switch (lane.protocol) {
    case 'cctp-v2': {
      if (!same(from, zeroAddress)) return `not minted (from ${from}): CCTP mints its deliveries`
      const source = context.routerOn(expected.chain)
      const burners = [expected.router, source.router, source.executor].filter((a): a is Address => a !== undefined)
      const burn = await sourceBridgeLog(context, expected.chain, tracked, DEPOSIT_FOR_BURN)
      const burnt = burn === undefined ? undefined : BigInt(word(burn.data, 0))
      const matches = emitted(lane.deliveredBy, MESSAGE_RECEIVED).some((log) => {
        const body = messageBodyOf(log.data)
        if (body === undefined) return false
        if (lane.sourceDomain !== undefined && Number(BigInt(word(log.data, 0))) !== lane.sourceDomain) return false
        if (burnt !== undefined && body.amount !== burnt) return false
        return (
          same(body.mintRecipient, recipient) &&
          burners.some((burner) => same(body.messageSender, burner)) &&
          body.amount - body.feeExecuted === value
        )
      })
      return matches ? undefined : `no MessageReceived from ${lane.deliveredBy} for our burn to ${recipient} of ${value} in its transaction`
    }
    case 'across': {
      const filled = emitted(lane.deliveredBy, FILLED_RELAY)
      if (filled.length > 0) {
        const deposit = await sourceBridgeLog(context, expected.chain, tracked, FUNDS_DEPOSITED)
        const originChainId = context.catalogue().chains.get(expected.chain)?.chainId
        const matches = filled.some(
          (log) =>
            deposit !== undefined &&
            originChainId !== undefined &&
            BigInt(log.topics[1] ?? '0x0') === BigInt(originChainId) &&
            log.topics[2] === deposit.topics[2] &&
            same(addressOfWord(word(log.data, 1)), lane.token) &&
            same(addressOfWord(word(log.data, 9)), recipient),
        )
        if (matches) return undefined
      }
      const standIn = emitted(lane.deliveredBy, STAND_IN_RELAY_FILLED).some(
        (log) =>
          same(addressOfWord(log.topics[1]), from) &&
          same(addressOfWord(log.topics[2]), recipient) &&
          same(addressOfWord(word(log.data, 0)), lane.token) &&
          BigInt(word(log.data, 1)) === value,
      )
      return standIn ? undefined : `no FilledRelay from ${lane.deliveredBy} for our deposit to ${recipient} in its transaction`
    }
    case 'stargate-v2':
    case 'usdt0-oft': {
      const payers = [zeroAddress, lane.destinationContract, lane.deliveredBy]
      if (!payers.some((payer) => same(from, payer))) return `paid by ${from}, not the lane's OFT, pool or endpoint`
      const received = [...emitted(lane.destinationContract, OFT_RECEIVED), ...emitted(lane.deliveredBy, OFT_RECEIVED)]
      if (received.length > 0) {
        const sent = await sourceBridgeLog(context, expected.chain, tracked, OFT_SENT)
        const matches = received.some(
          (log) =>
            sent !== undefined &&
            log.topics[1] === sent.topics[1] &&
            same(addressOfWord(log.topics[2]), recipient) &&
            BigInt(word(log.data, 1)) === value,
        )
        if (matches) return undefined
      }
      const standIn = emitted(lane.deliveredBy, STAND_IN_DELIVERED).some(
        (log) =>
          same(addressOfWord(log.topics[2]), lane.destinationContract) &&
          same(addressOfWord(log.topics[3]), recipient) &&
          same(addressOfWord(word(log.data, 0)), lane.token) &&
          BigInt(word(log.data, 1)) === value,
      )
      return standIn ? undefined : `no OFTReceived for our send to ${recipient} of ${value} in its transaction`
    }
    default:
      return `deliveries of ${lane.protocol} are not recognised`
  }
}

/** The fields of a CCTP v2 burn message body (MessageReceived's messageBody) this check reads; undefined when short. */
function messageBodyOf(data: Hex): { mintRecipient: Address; amount: bigint; messageSender: Address; feeExecuted: bigint } | undefined {
  // MessageReceived's data: caller is indexed; sourceDomain, sender, the body's offset, then the body's length and bytes.
  const offset = Number(BigInt(word(data, 2)))
  const start = 2 + offset * 2
  const length = Number(BigInt(`0x${data.slice(start, start + 64)}`))
  const body = data.slice(start + 64, start + 64 + length * 2)
  if (body.length < 228 * 2) return undefined
  const at = (byte: number): Hex => `0x${body.slice(byte * 2, (byte + 32) * 2)}`
  return {
    mintRecipient: addressOfWord(at(36)),
    amount: BigInt(at(68)),
    messageSender: addressOfWord(at(100)),
    feeExecuted: BigInt(at(164)),
  }
}

/** The swap's bridge deposit log on the source chain (its recorded bridge leg), when it has `topic`. */
async function sourceBridgeLog(
  context: TrackerContext,
  chain: ChainCode,
  tracked: TrackedSwap,
  topic: string,
): Promise<ReceiptLog | undefined> {
  const bridge = tracked.lifecycle.legs.bridge
  const client = context.clients[chain]
  if (bridge === undefined || client === undefined) return undefined
  const receipt = await client.getTransactionReceipt({ hash: bridge.txHash as Hex })
  const log = (receipt.logs as readonly ReceiptLog[]).find((entry) => entry.logIndex === bridge.logIndex)
  return log?.topics[0] === topic ? log : undefined
}
