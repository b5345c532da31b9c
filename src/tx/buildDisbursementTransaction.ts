import { type Address, encodeFunctionData, type Hex, toHex } from 'viem'
import {
  BASE_TX_GAS,
  calldataBytesOf,
  type Catalogue,
  l1GasUnits,
  MAX_TRANSACTION_GAS,
  type Token,
  withGasMargin,
} from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { routerExecuteBatchCall } from './abis.ts'
import { buildApproval, type BuildApprovalReturnType } from './buildApproval.ts'
import { type BuildRouteTransactionReturnType, chainIdOf, orderDeadline, type RouterOrder } from './buildRouteTransaction.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import type { RouterDeployment } from './routerDeployment.ts'

/** One recipient's part of a disbursement. */
export type DisbursementLeg =
  /** A swap or bridge route, built by buildRouteTransaction with the disbursement's ref. */
  | { kind: 'route'; build: Pick<BuildRouteTransactionReturnType, 'order' | 'sized'> }
  /**
   * The source token itself on the source chain: a plain transfer of `amount` less `fee` (priced by the caller, as a
   * quote prices it: the 0.5% fee rounded up).
   */
  | { kind: 'transfer'; amount: bigint; fee: bigint; recipient: Address }

export type BuildDisbursementTransactionParameters = {
  catalogue: Catalogue
  routerOn: (chain: ChainCode) => RouterDeployment
  /** The source token every leg spends. */
  token: Token
  sender: Address
  /** The disbursement reference as bytes32: every order carries it. */
  ref: Hex
  legs: readonly DisbursementLeg[]
  /** Unix seconds: a transfer leg's order gets the deadline a route built now gets. */
  nowSec: number
}

/** What one leg became: its order and its share of the gas limit (its execution gas with the margin). */
type DisbursementOrder = { order: RouterOrder; gasLimit: bigint }

/** The approval (of the sum of every order's amountIn) beside `executeBatch(orders)` on the source chain's router. */
export type BuildDisbursementTransactionReturnType = BuildApprovalReturnType & {
  transactionRequest: TransactionRequest
  /** Sum of the orders' amountIn: everything pulled from the sender. */
  amountIn: bigint
  /** The earliest of the orders' deadlines: after it the router refuses the whole batch. */
  deadline: bigint
  /**
   * How many of the legs, from the first, fit in one transaction's gas (MAX_TRANSACTION_GAS) with the batch's own gas:
   * `legs.length` when the whole batch does.
   */
  legsWithinGasCap: number
}

/**
 * A transfer leg as a router order with no calls: the router pulls `amount`, sends `fee` to the treasury and the rest
 * through the executor to the recipient, who must get exactly that much (minOut).
 */
function transferOrder(
  catalogue: Catalogue,
  token: Token,
  ref: Hex,
  deadline: bigint,
  leg: Extract<DisbursementLeg, { kind: 'transfer' }>,
): DisbursementOrder {
  const { amount, fee, recipient } = leg
  if (fee < 0n || fee >= amount)
    throw new RangeError(`a transfer of ${amount} atomic ${token.symbol} with fee ${fee} leaves the recipient nothing`)
  const tokenAddress = token.address
  return {
    order: {
      ref,
      tokenIn: tokenAddress,
      amountIn: amount,
      fee,
      tokenOut: tokenAddress,
      minOut: amount - fee,
      recipient,
      deadline,
      calls: [],
    },
    // Pull of fee and input, the executor's delivery and its check, the event and the order's calldata: the router
    // overhead the catalogue measured for a route, with the usual margin.
    gasLimit: withGasMargin(catalogue, catalogue.pricing.routerOverheadGasUnits),
  }
}

/**
 * Turns a disbursement's legs into the one transaction the sender signs: `executeBatch` on the source chain's router
 * with one order per recipient, each run alone (its own amountIn, fee and calls), so every transfer or bridge deposit
 * carries exactly its recipient's amount. The value is the sum of the legs' native fees, the gas the sum of the legs'
 * execution gas plus one transaction's intrinsic gas and, on an Arbitrum-style chain, the L2 gas of the batch's L1
 * data (each with the margin), and the approval the sum of the legs' inputs. Every order keeps its
 * own deadline (a transfer's is the one a route built now gets); the batch runs until the earliest of them.
 */
export function buildDisbursementTransaction(parameters: BuildDisbursementTransactionParameters): BuildDisbursementTransactionReturnType {
  const { catalogue, token, sender, ref, legs } = parameters
  if (legs.length === 0) throw new RangeError('a disbursement needs at least one leg')
  const tokenAddress = token.address.toLowerCase()
  const transferDeadline = orderDeadline(parameters.nowSec)
  const orders = legs.map((leg, k): DisbursementOrder => {
    if (leg.kind === 'transfer') return transferOrder(catalogue, token, ref, transferDeadline, leg)
    const { order, sized } = leg.build
    if (order.tokenIn.toLowerCase() !== tokenAddress) throw new Error(`leg ${k} spends ${order.tokenIn}, not ${token.key}`)
    if (order.ref !== ref) throw new Error(`leg ${k} carries ref ${order.ref}, not the disbursement's ${ref}`)
    // The leg's execution gas only: the batch's L1 data is sized once, for the whole calldata, below.
    return { order, gasLimit: withGasMargin(catalogue, sized.sourceGasUnits) }
  })
  const amountIn = orders.reduce((sum, { order }) => sum + order.amountIn, 0n)
  const deadline = orders.map(({ order }) => order.deadline).reduce((earliest, next) => (next < earliest ? next : earliest))
  const value = orders.reduce((sum, { order }) => sum + order.calls.reduce((calls, call) => calls + call.value, 0n), 0n)
  const data = encodeFunctionData({ ...routerExecuteBatchCall, args: [orders.map(({ order }) => order)] })
  const chain = catalogue.chains.get(token.chain)
  if (chain === undefined) throw new RangeError(`chain ${token.chain} is not in the catalogue`)
  // One intrinsic gas for the transaction (each route leg's own estimate already counts it once more) and, on an
  // Arbitrum-style chain, the L2 gas of the batch's L1 data, with the margin.
  const own = withGasMargin(catalogue, BASE_TX_GAS + l1GasUnits(chain, calldataBytesOf(data)))
  const gas = orders.reduce((sum, { gasLimit }) => sum + gasLimit, own)
  let legsWithinGasCap = 0
  for (let running = own; legsWithinGasCap < orders.length; legsWithinGasCap++) {
    running += orders[legsWithinGasCap]?.gasLimit ?? 0n
    if (running > MAX_TRANSACTION_GAS) break
  }
  const chainId = chainIdOf(catalogue, token.chain)
  const { router } = parameters.routerOn(token.chain)
  return {
    transactionRequest: {
      chainId,
      from: sender,
      to: router,
      data,
      value: toHex(value),
      gas: toHex(gas),
    },
    ...buildApproval({ catalogue, token, chainId, owner: sender, spender: router, amount: amountIn }),
    amountIn,
    deadline,
    legsWithinGasCap,
  }
}
