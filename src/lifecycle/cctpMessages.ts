import {
  type Address,
  decodeAbiParameters,
  getAddress,
  type Hex,
  hexToNumber,
  isAddressEqual,
  parseAbi,
  parseAbiItem,
  parseEventLogs,
  size,
  sliceHex,
  stringToHex,
} from 'viem'
import { runDestinationInputs } from '../tx/abis.ts'

/** TokenMessengerV2's DepositForBurn (circlefin/evm-cctp-contracts src/v2, as live-chain.md (f) lists it). */
export const depositForBurnEvent = parseAbiItem(
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
)

/** What the relayer reads of MessageTransmitterV2: 1 once a nonce was received (the mint happened). */
export const messageTransmitterAbi = parseAbi(['function usedNonces(bytes32 nonce) view returns (uint256)'])

/** A log as a receipt carries it; viem's Log fits. */
export type ReceiptLog = { address: Address; topics: readonly Hex[] | [Hex, ...Hex[]] | []; data: Hex; logIndex?: number | null }

/** A burn on the source chain whose hook data is a DestinationOrder for the executor named as destination caller. */
export type HookedBurn = {
  destinationDomain: number
  /** The destination caller: only it may receive the message, so only our executor's `relayCctp` can mint it. */
  destinationCaller: Address
  mintRecipient: Address
  amount: bigint
  hookData: Hex
  /** The DestinationOrder's ref: the swap reference as bytes32. */
  orderRef: Hex
  logIndex: number | null
}

/** CCTP v2 message layout (MessageV2, BurnMessageV2): a 148-byte header, then the 228-byte burn body and hook data. */
const HEADER = 148
const HOOK_DATA_START = HEADER + 228

/**
 * The burns of a source transaction carrying a DestinationOrder in their hook data, in log order. A burn whose hook
 * data is not an order (someone else's hook) is skipped.
 */
export function hookedBurnsOf(logs: readonly ReceiptLog[]): HookedBurn[] {
  const parsed = parseEventLogs({ abi: [depositForBurnEvent], logs: logs as Parameters<typeof parseEventLogs>[0]['logs'] })
  const burns: HookedBurn[] = []
  for (const log of parsed) {
    const { args } = log
    if (args.hookData === '0x') continue
    const orderRef = orderRefOf(args.hookData)
    if (orderRef === undefined) continue
    burns.push({
      destinationDomain: args.destinationDomain,
      destinationCaller: bytes32ToAddress(args.destinationCaller),
      mintRecipient: bytes32ToAddress(args.mintRecipient),
      amount: args.amount,
      hookData: args.hookData,
      orderRef,
      logIndex: log.logIndex,
    })
  }
  return burns
}

/** The fields of an attested message the relayer checks before submitting it. */
export type AttestedMessageFields = {
  destinationDomain: number
  nonce: Hex
  destinationCaller: Address
  mintRecipient: Address
  hookData: Hex
}

/** Reads an attested CCTP v2 burn message; undefined when it is too short to carry a burn body. */
export function attestedMessageFields(message: Hex): AttestedMessageFields | undefined {
  if (size(message) < HOOK_DATA_START) return undefined
  const at = (start: number, length: number): Hex => sliceHex(message, start, start + length, { strict: true })
  return {
    destinationDomain: hexToNumber(at(8, 4)),
    nonce: at(12, 32),
    destinationCaller: bytes32ToAddress(at(108, 32)),
    mintRecipient: bytes32ToAddress(at(HEADER + 36, 32)),
    hookData: size(message) > HOOK_DATA_START ? sliceHex(message, HOOK_DATA_START) : '0x',
  }
}

/** The on-chain ref of a swap or batch: its ASCII right-padded to bytes32; a batch leg (`dsb_….3`) carries its batch's. */
export function orderRefOfSwap(ref: string): Hex {
  return stringToHex(ref.replace(/\.\d+$/, ''), { size: 32 })
}

/** True when the burn's message is the attested one: same destination, caller, recipient and hook data. */
export function isSameBurn(burn: HookedBurn, fields: AttestedMessageFields): boolean {
  return (
    burn.destinationDomain === fields.destinationDomain &&
    isAddressEqual(burn.destinationCaller, fields.destinationCaller) &&
    isAddressEqual(burn.mintRecipient, fields.mintRecipient) &&
    burn.hookData.toLowerCase() === fields.hookData.toLowerCase()
  )
}

function orderRefOf(hookData: Hex): Hex | undefined {
  try {
    const [order] = decodeAbiParameters(runDestinationInputs, hookData)
    return order.ref
  } catch {
    return undefined
  }
}

function bytes32ToAddress(word: Hex): Address {
  return getAddress(sliceHex(word, 12, 32))
}
