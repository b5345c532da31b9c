import {
  type Address,
  type Hex,
  encodePacked,
  hexToBigInt,
  hexToNumber,
  isHex,
  keccak256,
  pad,
  parseAbiItem,
  size,
  sliceHex,
  toHex,
} from 'viem'
import { privateKeyToAddress, sign } from 'viem/accounts'

/** CCTP v2 message header version (MessageTransmitterV2) and BurnMessageV2 body version. */
export const CCTP_V2_MESSAGE_VERSION = 1
export const CCTP_V2_BURN_MESSAGE_VERSION = 1
/** Circle's finality thresholds: what a fast transfer and a standard (finalized) transfer are attested at. */
export const CCTP_FINALITY_FAST = 1000
export const CCTP_FINALITY_STANDARD = 2000
export const CCTP_HEADER_LENGTH = 148
export const CCTP_BURN_BODY_LENGTH = 228

/**
 * The test attester: every MessageTransmitterV2StandIn that test/chain/deployCatalogue.ts deploys trusts this key's
 * address, as Circle's transmitter trusts its attesters. A fixed, public test key: never fund it anywhere.
 */
export const TEST_CCTP_ATTESTER_KEY: Hex = keccak256(toHex('swapeazi test cctp attester'))
export const TEST_CCTP_ATTESTER: Address = privateKeyToAddress(TEST_CCTP_ATTESTER_KEY)

/**
 * Circle's attestation of a message with one attester: the 65-byte signature (r ‖ s ‖ v, v 27 or 28) over
 * keccak256(message), with no eth_sign prefix, as MessageTransmitterV2 recovers it.
 */
export async function attestCctpMessage(message: Hex, privateKey: Hex = TEST_CCTP_ATTESTER_KEY): Promise<Hex> {
  return sign({ hash: keccak256(message), privateKey, to: 'hex' })
}

/** TokenMessengerV2's DepositForBurn event, as Circle publishes it. */
export const depositForBurnEvent = parseAbiItem(
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
)

/**
 * Every field of a CCTP v2 message carrying a BurnMessageV2 body. bytes32 fields also accept a 20-byte address,
 * which is left-padded.
 */
export type CctpMessageFields = {
  version?: number
  sourceDomain: number
  destinationDomain: number
  nonce: Hex
  /** The source TokenMessengerV2. */
  sender: Hex
  /** The destination TokenMessengerV2. */
  recipient: Hex
  destinationCaller: Hex
  minFinalityThreshold: number
  finalityThresholdExecuted: number
  bodyVersion?: number
  burnToken: Hex
  mintRecipient: Hex
  amount: bigint
  /** The depositor on the source chain. */
  messageSender: Hex
  maxFee: bigint
  feeExecuted: bigint
  expirationBlock: bigint
  hookData: Hex
}

/** Left-pads a 20-byte address to bytes32 (lowercase hex, as viem decodes bytes32). */
function toBytes32(value: Hex, field: string): Hex {
  if (!isHex(value)) throw new Error(`cctp message: ${field} is not hex`)
  const bytes = size(value)
  if (bytes === 32) return value.toLowerCase() as Hex
  if (bytes === 20) return pad(value.toLowerCase() as Hex, { size: 32 })
  throw new Error(`cctp message: ${field} must be 20 or 32 bytes, got ${bytes}`)
}

/**
 * Encodes a CCTP v2 message: header = version uint32 ‖ sourceDomain uint32 ‖ destinationDomain uint32 ‖ nonce bytes32
 * ‖ sender bytes32 ‖ recipient bytes32 ‖ destinationCaller bytes32 ‖ minFinalityThreshold uint32 ‖
 * finalityThresholdExecuted uint32 (148 bytes); body = version uint32 ‖ burnToken bytes32 ‖ mintRecipient bytes32 ‖
 * amount uint256 ‖ messageSender bytes32 ‖ maxFee uint256 ‖ feeExecuted uint256 ‖ expirationBlock uint256 (228
 * bytes) ‖ hookData.
 */
export function encodeCctpMessage(fields: CctpMessageFields): Hex {
  const header = encodePacked(
    ['uint32', 'uint32', 'uint32', 'bytes32', 'bytes32', 'bytes32', 'bytes32', 'uint32', 'uint32'],
    [
      fields.version ?? CCTP_V2_MESSAGE_VERSION,
      fields.sourceDomain,
      fields.destinationDomain,
      toBytes32(fields.nonce, 'nonce'),
      toBytes32(fields.sender, 'sender'),
      toBytes32(fields.recipient, 'recipient'),
      toBytes32(fields.destinationCaller, 'destinationCaller'),
      fields.minFinalityThreshold,
      fields.finalityThresholdExecuted,
    ],
  )
  const body = encodePacked(
    ['uint32', 'bytes32', 'bytes32', 'uint256', 'bytes32', 'uint256', 'uint256', 'uint256', 'bytes'],
    [
      fields.bodyVersion ?? CCTP_V2_BURN_MESSAGE_VERSION,
      toBytes32(fields.burnToken, 'burnToken'),
      toBytes32(fields.mintRecipient, 'mintRecipient'),
      fields.amount,
      toBytes32(fields.messageSender, 'messageSender'),
      fields.maxFee,
      fields.feeExecuted,
      fields.expirationBlock,
      fields.hookData,
    ],
  )
  return encodePacked(['bytes', 'bytes'], [header, body])
}

/** The inverse of encodeCctpMessage (bytes32 fields come back as bytes32). */
export function decodeCctpMessage(message: Hex): Required<CctpMessageFields> {
  if (size(message) < CCTP_HEADER_LENGTH + CCTP_BURN_BODY_LENGTH)
    throw new Error(`cctp message: ${size(message)} bytes, shorter than header and burn body`)
  const at = (start: number, length: number): Hex => sliceHex(message, start, start + length, { strict: true })
  const body = CCTP_HEADER_LENGTH
  return {
    version: hexToNumber(at(0, 4)),
    sourceDomain: hexToNumber(at(4, 4)),
    destinationDomain: hexToNumber(at(8, 4)),
    nonce: at(12, 32),
    sender: at(44, 32),
    recipient: at(76, 32),
    destinationCaller: at(108, 32),
    minFinalityThreshold: hexToNumber(at(140, 4)),
    finalityThresholdExecuted: hexToNumber(at(144, 4)),
    bodyVersion: hexToNumber(at(body, 4)),
    burnToken: at(body + 4, 32),
    mintRecipient: at(body + 36, 32),
    amount: hexToBigInt(at(body + 68, 32)),
    messageSender: at(body + 100, 32),
    maxFee: hexToBigInt(at(body + 132, 32)),
    feeExecuted: hexToBigInt(at(body + 164, 32)),
    expirationBlock: hexToBigInt(at(body + 196, 32)),
    hookData: size(message) > body + CCTP_BURN_BODY_LENGTH ? sliceHex(message, body + CCTP_BURN_BODY_LENGTH) : '0x',
  }
}

/** A DepositForBurn log as viem decodes it (decodeEventLog / parseEventLogs with `depositForBurnEvent`). */
export type DepositForBurnLog = {
  /** The source TokenMessengerV2 that emitted the event. */
  address: Address
  args: {
    burnToken: Address
    amount: bigint
    depositor: Address
    mintRecipient: Hex
    destinationDomain: number
    destinationTokenMessenger: Hex
    destinationCaller: Hex
    maxFee: bigint
    minFinalityThreshold: number
    hookData: Hex
  }
  transactionHash?: Hex | null
  logIndex?: number | null
}

/** What Circle's attestation service decides when it attests a burn. */
export type CctpAttestationOptions = {
  sourceDomain: number
  /** Default: keccak256(transactionHash ‖ logIndex) of the log, which must then carry both. */
  nonce?: Hex
  /** Default: 1000 (fast) when minFinalityThreshold ≤ 1000, else 2000 (finalized). */
  finalityThresholdExecuted?: number
  /** Default 0; must not exceed the log's maxFee. */
  feeExecuted?: bigint
  /** Default 0 (no expiry). */
  expirationBlock?: bigint
}

/**
 * The CCTP v2 message Circle's attestation service would attest for a DepositForBurn log: sender is the emitting
 * TokenMessengerV2, recipient the destination TokenMessengerV2, messageSender the depositor; the service fills in
 * the nonce, the finality actually reached, the fee taken and the expiration block.
 */
export function cctpMessageFromDepositForBurn(log: DepositForBurnLog, options: CctpAttestationOptions): Hex {
  const { args } = log
  const feeExecuted = options.feeExecuted ?? 0n
  if (feeExecuted > args.maxFee) throw new Error(`cctp message: feeExecuted ${feeExecuted} exceeds maxFee ${args.maxFee}`)
  let nonce = options.nonce
  if (nonce === undefined) {
    if (log.transactionHash == null || log.logIndex == null)
      throw new Error('cctp message: pass a nonce, or a log with transactionHash and logIndex')
    nonce = keccak256(encodePacked(['bytes32', 'uint256'], [log.transactionHash, BigInt(log.logIndex)]))
  }
  return encodeCctpMessage({
    sourceDomain: options.sourceDomain,
    destinationDomain: args.destinationDomain,
    nonce,
    sender: log.address,
    recipient: args.destinationTokenMessenger,
    destinationCaller: args.destinationCaller,
    minFinalityThreshold: args.minFinalityThreshold,
    finalityThresholdExecuted:
      options.finalityThresholdExecuted ?? (args.minFinalityThreshold <= CCTP_FINALITY_FAST ? CCTP_FINALITY_FAST : CCTP_FINALITY_STANDARD),
    burnToken: args.burnToken,
    mintRecipient: args.mintRecipient,
    amount: args.amount,
    messageSender: args.depositor,
    maxFee: args.maxFee,
    feeExecuted,
    expirationBlock: options.expirationBlock ?? 0n,
    hookData: args.hookData,
  })
}
