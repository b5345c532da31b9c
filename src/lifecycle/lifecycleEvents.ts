import { type Hex, hexToString, parseAbi, parseAbiItem, toEventSelector } from 'viem'

/** contracts/SwapEaziRouter.sol: one per order run, carrying the swap's (or the batch's) reference. */
export const swappedEvent = parseAbiItem(
  'event Swapped(bytes32 indexed ref, address indexed sender, address indexed recipient, address tokenIn, uint256 amountIn, uint256 fee, address tokenOut, uint256 amountOut)',
)

/** contracts/SwapEaziExecutor.sol: the destination order ran (done/completed) or fell back to the bridged token (partial). */
export const destinationEvents = parseAbi([
  'event DestinationExecuted(bytes32 indexed ref, address indexed recipient, address token, uint256 amountIn, address tokenOut, uint256 amountOut)',
  'event DestinationFallback(bytes32 indexed ref, address indexed recipient, address token, uint256 amount, bytes reason)',
])
export const [destinationExecutedEvent, destinationFallbackEvent] = destinationEvents

export const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

/**
 * The bridges' deposit events in a source transaction (shared/reference/live-chain.md (f)): the bridge leg. Topics are
 * computed from the signatures the reference gives, which it took from the bridges' sources.
 */
export const BRIDGE_DEPOSIT_TOPICS: ReadonlySet<string> = new Set(
  [
    'FundsDeposited(bytes32,bytes32,uint256,uint256,uint256,uint256,uint32,uint32,uint32,bytes32,bytes32,bytes32,bytes)',
    'DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)',
    'OFTSent(bytes32,uint32,address,uint256,uint256)',
  ].map((signature) => toEventSelector(signature)),
)

/** A bytes32 reference as the router carries it: ASCII, right-padded with zeros. */
export function refOfBytes32(ref: Hex): string {
  return hexToString(ref, { size: 32 }).replace(/\0+$/, '')
}

/** The reason bytes a fallback carries: an Error(string), a plain string, or the hex as it is. */
export function reasonText(reason: Hex): string {
  if (reason === '0x') return 'no reason given'
  if (reason.startsWith('0x08c379a0')) {
    try {
      const length = Number(BigInt(`0x${reason.slice(74, 138)}`))
      return hexToString(`0x${reason.slice(138, 138 + length * 2)}`)
    } catch {
      return reason
    }
  }
  const text = hexToString(reason)
  return /^[\x20-\x7e]+$/.test(text) ? text : reason
}
