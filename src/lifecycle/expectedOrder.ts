import { type Address, decodeFunctionData, getAddress, type Hex, stringToHex } from 'viem'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import { type Catalogue, isEvmToken, parseFixed } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import type { StoredSwap } from '../store/createStore.ts'

/** What a swap's `Swapped` event must show, and where its delivery is to be looked for, from the recorded build. */
export type ExpectedOrder = {
  chain: ChainCode
  /** The router the built transaction calls (its `to`). */
  router: Address
  sender: Address
  /** The reference the order carries (the batch's `dsb_` for a leg) and as bytes32. */
  orderRef: string
  orderRefBytes32: Hex
  /** The order's position in the transaction: 0 for a swap, the leg's index in a batch. */
  orderIndex: number
  tokenIn: Address
  amountIn: bigint
  recipient: Address
  /** The router's fee the order takes from the input. */
  fee: bigint
  /** address(0) when the order ends in a bridge deposit. */
  tokenOut: Address
  /** Unix seconds: the router refuses the order in any later block. */
  deadline: bigint
  /** Where the delivery lands on another chain; undefined for a same-chain swap. */
  destination?: {
    chain: ChainCode
    /** executor: our executor runs a destination order (DestinationExecuted/Fallback); plain: the bridge pays the recipient. */
    kind: 'executor' | 'plain'
    /** The token the recipient asked for there, and the least of it a plain delivery brings. */
    token: Address
    minAmount: bigint
    /** The lane that carries it, as the catalogue knows it; undefined when the quote names no lane the catalogue has. */
    lane?: ExpectedLane
  }
}

/**
 * The bridge lane a cross-chain order deposits on: who delivers on the destination (the contracts whose events a
 * delivery's transaction must carry) and what arrives there before any destination swap.
 */
export type ExpectedLane = {
  protocol: string
  /** The contract that delivers there (CCTP's MessageTransmitterV2, Across's SpokePool, LayerZero's endpoint). */
  deliveredBy?: Address
  /** The bridge's own contract there (the OFT or Stargate pool that credits the recipient), if it has one. */
  destinationContract?: Address
  /** The bridge's id for the source chain (a CCTP domain), from the lane back; undefined when none starts there. */
  sourceDomain?: number
  /** The bridged token on the destination chain, and the least of it the deposit allows to arrive. */
  token: Address
  minAmount: bigint
}

type StoredRequest = { from?: string; to?: string; data?: Hex }
type StoredStep = { type: string; id?: string; fromChain: string; toChain: string; toToken?: string; toAmount?: string }
type StoredQuote = { toAmount?: string; route?: { steps?: StoredStep[] } }

const BATCH_LEG = /^(dsb_[0-9A-Z]{26})\.(\d+)$/

/**
 * The order a recorded swap's transaction carries (decoded from its calldata: execute, executeWithPermit, or a batch's
 * executeBatch at the leg's index), and where its delivery is awaited (from its quote's route); undefined when the
 * record holds no router call.
 */
export function expectedOrderOf(swap: StoredSwap, catalogue: Catalogue): ExpectedOrder | undefined {
  const request = swap.transactionRequest as StoredRequest
  if (typeof request?.data !== 'string' || typeof request.to !== 'string' || typeof request.from !== 'string') return undefined
  const batch = BATCH_LEG.exec(swap.ref)
  let decoded: ReturnType<typeof decodeFunctionData<typeof swapEaziRouterAbi>>
  try {
    decoded = decodeFunctionData({ abi: swapEaziRouterAbi, data: request.data })
  } catch {
    return undefined
  }
  const orderIndex = batch?.[2] === undefined ? 0 : Number(batch[2])
  let order: OrderArgs | undefined
  if (decoded.functionName === 'execute' || decoded.functionName === 'executeWithPermit') order = decoded.args[0] as OrderArgs
  else if (decoded.functionName === 'executeBatch') order = (decoded.args[0] as readonly OrderArgs[])[orderIndex]
  if (order === undefined) return undefined
  const orderRef = batch?.[1] ?? swap.ref
  return {
    chain: swap.fromChain as ChainCode,
    router: getAddress(request.to),
    sender: getAddress(request.from),
    orderRef,
    orderRefBytes32: stringToHex(orderRef, { size: 32 }),
    orderIndex,
    tokenIn: order.tokenIn,
    amountIn: order.amountIn,
    fee: order.fee,
    recipient: order.recipient,
    tokenOut: order.tokenOut,
    deadline: order.deadline,
    ...destinationOf(swap, catalogue),
  }
}

type OrderArgs = { ref: Hex; tokenIn: Address; amountIn: bigint; fee: bigint; tokenOut: Address; recipient: Address; deadline: bigint }

function destinationOf(swap: StoredSwap, catalogue: Catalogue): Pick<ExpectedOrder, 'destination'> {
  if (swap.fromChain === swap.toChain) return {}
  const token = catalogue.tokens.get(`${swap.toChain}:${swap.toToken}`)
  if (token === undefined || !isEvmToken(token)) return {}
  const steps = (swap.quote as StoredQuote)?.route?.steps ?? []
  const swapsThere = steps.some((step) => step.type === 'swap' && step.fromChain === swap.toChain && step.toChain === swap.toChain)
  const minAmount = parseFixed(swap.toAmountMin, token.decimals)
  const lane = laneOf(swap, catalogue, steps, minAmount)
  return {
    destination: {
      chain: swap.toChain as ChainCode,
      kind: swapsThere ? 'executor' : 'plain',
      token: token.address,
      minAmount,
      ...(lane === undefined ? {} : { lane }),
    },
  }
}

/**
 * The lane of the quote's bridge step (by the bridge's catalogue id and the token it delivers). Its minimum is what the
 * build asked of the bridge: the step's estimate with the quote's slippage (toAmountMin / toAmount), floored, which
 * is at most the deposit's own minimum (the build floors the same estimate by the same slippage). A plain route's is
 * toAmountMin itself.
 */
function laneOf(swap: StoredSwap, catalogue: Catalogue, steps: readonly StoredStep[], toAmountMin: bigint): ExpectedLane | undefined {
  const step = steps.find((entry) => entry.type === 'bridge' && entry.fromChain === swap.fromChain && entry.toChain === swap.toChain)
  if (step?.id === undefined || step.toToken === undefined || step.toAmount === undefined) return undefined
  const delivered = catalogue.tokens.get(`${swap.toChain}:${step.toToken}`)
  if (delivered === undefined || !isEvmToken(delivered)) return undefined
  const lane = catalogue.lanes
    .get(`${swap.fromChain}>${swap.toChain}`)
    ?.find((entry) => entry.bridge.id === step.id && entry.to.address.toLowerCase() === delivered.address.toLowerCase())
  if (lane === undefined) return undefined
  const quote = swap.quote as StoredQuote
  const toToken = catalogue.tokens.get(`${swap.toChain}:${swap.toToken}`)
  let minAmount: bigint
  try {
    const estimate = parseFixed(step.toAmount, lane.to.decimals)
    const quoted = quote.toAmount === undefined || toToken === undefined ? 0n : parseFixed(quote.toAmount, toToken.decimals)
    minAmount = delivered.address === toToken?.address ? toAmountMin : quoted === 0n ? estimate : (estimate * toAmountMin) / quoted
  } catch {
    return undefined
  }
  const sourceDomain = catalogue.lanes
    .get(`${swap.toChain}>${swap.fromChain}`)
    ?.find((entry) => entry.bridge.id === lane.bridge.id)?.destinationDomain
  return {
    protocol: lane.bridge.protocol,
    ...(sourceDomain === undefined ? {} : { sourceDomain }),
    ...(lane.deliveredBy === undefined ? {} : { deliveredBy: lane.deliveredBy }),
    ...(lane.destinationContract === undefined ? {} : { destinationContract: lane.destinationContract }),
    token: lane.to.address,
    minAmount,
  }
}
