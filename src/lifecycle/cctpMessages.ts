import {
  type Address,
  decodeAbiParameters,
  decodeFunctionData,
  getAddress,
  type Hex,
  hexToBigInt,
  hexToNumber,
  isAddressEqual,
  parseAbi,
  parseAbiItem,
  parseEventLogs,
  size,
  sliceHex,
  stringToHex,
} from 'viem'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import { cctpTokenMessengerV2Abi, runDestinationInputs } from '../tx/abis.ts'

/** TokenMessengerV2's DepositForBurn (circlefin/evm-cctp-contracts src/v2, as live-chain.md (f) lists it). */
export const depositForBurnEvent = parseAbiItem(
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
)

/** What the relayer calls on MessageTransmitterV2: usedNonces is 1 once a nonce was received (the mint happened). */
export const messageTransmitterAbi = parseAbi([
  'function usedNonces(bytes32 nonce) view returns (uint256)',
  'function receiveMessage(bytes message, bytes attestation) returns (bool success)',
])

/** A log as a receipt carries it; viem's Log fits. */
export type ReceiptLog = { address: Address; topics: readonly Hex[] | [Hex, ...Hex[]] | []; data: Hex; logIndex?: number | null }

/** A burn on the source chain (a DepositForBurn), as the relayer matches it to a swap and to its attested message. */
export type CctpBurn = {
  destinationDomain: number
  /**
   * The destination caller: with a DestinationOrder, our executor (only it may receive the message, so the mint and
   * the order run together); the zero address when anyone may receive it (a route that ends at the bridge).
   */
  destinationCaller: Address
  mintRecipient: Address
  amount: bigint
  /** Who burnt: our executor on the source chain for our routes. */
  depositor: Address
  hookData: Hex
  /** The DestinationOrder's ref (the swap reference as bytes32) when the hook data is one; null otherwise. */
  orderRef: Hex | null
  logIndex: number | null
}

/** CCTP v2 message layout (MessageV2, BurnMessageV2): a 148-byte header, then the 228-byte burn body and hook data. */
const HEADER = 148
const HOOK_DATA_START = HEADER + 228

/** Every CCTP burn of a source transaction, in log order, with its DestinationOrder's ref when it carries one. */
export function cctpBurnsOf(logs: readonly ReceiptLog[]): CctpBurn[] {
  const parsed = parseEventLogs({ abi: [depositForBurnEvent], logs: logs as Parameters<typeof parseEventLogs>[0]['logs'] })
  return parsed.map((log) => {
    const { args } = log
    return {
      destinationDomain: args.destinationDomain,
      destinationCaller: bytes32ToAddress(args.destinationCaller),
      mintRecipient: bytes32ToAddress(args.mintRecipient),
      amount: args.amount,
      depositor: getAddress(args.depositor),
      hookData: args.hookData,
      orderRef: args.hookData === '0x' ? null : (orderRefOf(args.hookData) ?? null),
      logIndex: log.logIndex,
    }
  })
}

/** The fields of an attested message the relayer checks before submitting it. */
export type AttestedMessageFields = {
  destinationDomain: number
  nonce: Hex
  destinationCaller: Address
  mintRecipient: Address
  /** The amount burnt (BurnMessageV2's amount): two burns alike but for it are two messages. */
  amount: bigint
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
    amount: hexToBigInt(at(HEADER + 68, 32)),
    hookData: size(message) > HOOK_DATA_START ? sliceHex(message, HOOK_DATA_START) : '0x',
  }
}

/** The on-chain ref of a swap or batch: its ASCII right-padded to bytes32; a batch leg (`dsb_….3`) carries its batch's. */
export function orderRefOfSwap(ref: string): Hex {
  return stringToHex(ref.replace(/\.\d+$/, ''), { size: 32 })
}

/**
 * True when the burn's message is the attested one: same destination, caller, recipient, amount and hook data. The
 * amount tells apart two burns of one transaction that are otherwise alike (a batch paying one address twice over one
 * CCTP lane); two burns alike in amount too are told apart by taking each attested message once (cctpRelayer).
 */
export function isSameBurn(burn: CctpBurn, fields: AttestedMessageFields): boolean {
  return (
    burn.destinationDomain === fields.destinationDomain &&
    burn.amount === fields.amount &&
    isAddressEqual(burn.destinationCaller, fields.destinationCaller) &&
    isAddressEqual(burn.mintRecipient, fields.mintRecipient) &&
    burn.hookData.toLowerCase() === fields.hookData.toLowerCase()
  )
}

const BATCH_LEG = /^dsb_[0-9A-Z]{26}\.(\d+)$/

/**
 * The hook data of every CCTP burn with a hook in the transaction we built for a swap (its stored transactionRequest:
 * the router's execute, executeWithPermit, or a batch's executeBatch at the leg's index): the DestinationOrders we
 * built. The relayer pays the destination gas only for a burn whose hook is one of these byte for byte, so a sender
 * who re-encodes our build (another fee, other calls) under our reference is not relayed. Empty when the record holds
 * no router call.
 */
export function cctpHooksOfBuild(transactionRequest: unknown, ref: string): Hex[] {
  const data = (transactionRequest as { data?: unknown } | null | undefined)?.data
  if (typeof data !== 'string' || !data.startsWith('0x')) return []
  let decoded: ReturnType<typeof decodeFunctionData<typeof swapEaziRouterAbi>>
  try {
    decoded = decodeFunctionData({ abi: swapEaziRouterAbi, data: data as Hex })
  } catch {
    return []
  }
  type BuiltOrder = { calls: readonly { data: Hex }[] }
  let order: BuiltOrder | undefined
  if (decoded.functionName === 'execute' || decoded.functionName === 'executeWithPermit') order = decoded.args[0] as BuiltOrder
  else if (decoded.functionName === 'executeBatch')
    order = (decoded.args[0] as readonly BuiltOrder[])[Number(BATCH_LEG.exec(ref)?.[1] ?? 0)]
  return (order?.calls ?? []).flatMap((call) => {
    try {
      const burn = decodeFunctionData({ abi: cctpTokenMessengerV2Abi, data: call.data })
      return burn.functionName === 'depositForBurnWithHook' ? [burn.args[7]] : []
    } catch {
      return []
    }
  })
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
