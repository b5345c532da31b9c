import { type Address, encodeFunctionData, type Hex, toHex } from 'viem'
import { type Catalogue, ceilDiv, type Token } from '../engine/index.ts'
import type { ChainCode } from '../schemas/catalogue.ts'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import { type Approval, buildApproval } from './buildApproval.ts'
import type { BuildRouteTransactionReturnType, RouterOrder, TransactionRequest } from './buildRouteTransaction.ts'
import type { RouterDeployment } from './routerDeployment.ts'

/** The intrinsic gas of the one transaction; a route leg's own gas limit already counts it once more. */
const BASE_TX_GAS = 21_000n

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
}

/** What one leg became: its order and its share of the gas limit. */
export type DisbursementOrder = { order: RouterOrder; gasLimit: bigint }

export type BuildDisbursementTransactionReturnType = {
  /** `executeBatch(orders)` on the source chain's router. */
  transactionRequest: TransactionRequest
  /** The allowance the router needs: the sum of every order's amountIn. */
  approval: Approval
  approvalTransactionRequest: TransactionRequest
  approvalResetTransactionRequest?: TransactionRequest
  /** One per leg, in the legs' order. */
  orders: DisbursementOrder[]
  /** Sum of the orders' amountIn: everything pulled from the sender. */
  amountIn: bigint
  /** Sum of the orders' calls' native value: what executeBatch must be sent. */
  value: bigint
}

const withMargin = (catalogue: Catalogue, gasUnits: bigint): bigint =>
  ceilDiv(gasUnits * (100n + catalogue.pricing.gasMarginPercent), 100n)

/**
 * A transfer leg as a router order with no calls: the router pulls `amount`, sends `fee` to the treasury and the rest
 * through the executor to the recipient, who must get exactly that much (minOut).
 */
function transferOrder(catalogue: Catalogue, token: Token, ref: Hex, leg: Extract<DisbursementLeg, { kind: 'transfer' }>): DisbursementOrder {
  const { amount, fee, recipient } = leg
  if (fee < 0n || fee >= amount) throw new RangeError(`a transfer of ${amount} atomic ${token.symbol} with fee ${fee} leaves the recipient nothing`)
  const tokenAddress = token.address as Address
  return {
    order: { ref, tokenIn: tokenAddress, amountIn: amount, fee, tokenOut: tokenAddress, minOut: amount - fee, recipient, calls: [] },
    // Pull of fee and input, the executor's delivery and its check, the event and the order's calldata: the router
    // overhead the catalogue measured for a route, with the usual margin.
    gasLimit: withMargin(catalogue, catalogue.pricing.routerOverheadGasUnits),
  }
}

/**
 * Turns a disbursement's legs into the one transaction the sender signs: `executeBatch` on the source chain's router
 * with one order per recipient, each run alone (its own amountIn, fee and calls), so every transfer or bridge deposit
 * carries exactly its recipient's amount. The value is the sum of the legs' native fees, the gas the sum of the legs'
 * gas limits plus one transaction's intrinsic gas, and the approval the sum of the legs' inputs.
 */
export function buildDisbursementTransaction(parameters: BuildDisbursementTransactionParameters): BuildDisbursementTransactionReturnType {
  const { catalogue, token, sender, ref, legs } = parameters
  if (legs.length === 0) throw new RangeError('a disbursement needs at least one leg')
  const tokenAddress = (token.address as Address).toLowerCase()
  const orders = legs.map((leg, k): DisbursementOrder => {
    if (leg.kind === 'transfer') return transferOrder(catalogue, token, ref, leg)
    const { order, sized } = leg.build
    if (order.tokenIn.toLowerCase() !== tokenAddress) throw new Error(`leg ${k} spends ${order.tokenIn}, not ${token.key}`)
    if (order.ref !== ref) throw new Error(`leg ${k} carries ref ${order.ref}, not the disbursement's ${ref}`)
    return { order, gasLimit: sized.gasLimit }
  })
  const amountIn = orders.reduce((sum, { order }) => sum + order.amountIn, 0n)
  const value = orders.reduce((sum, { order }) => sum + order.calls.reduce((calls, call) => calls + call.value, 0n), 0n)
  const gas = orders.reduce((sum, { gasLimit }) => sum + gasLimit, withMargin(catalogue, BASE_TX_GAS))
  const chain = catalogue.chains.get(token.chain)
  if (!chain) throw new Error(`chain ${token.chain} is not in the catalogue`)
  const { router } = parameters.routerOn(token.chain)
  return {
    transactionRequest: {
      chainId: chain.chainId,
      from: sender,
      to: router,
      data: encodeFunctionData({ abi: swapEaziRouterAbi, functionName: 'executeBatch', args: [orders.map(({ order }) => order)] }),
      value: toHex(value),
      gas: toHex(gas),
    },
    ...buildApproval({ token, chainId: chain.chainId, owner: sender, spender: router, amount: amountIn }),
    orders,
    amountIn,
    value,
  }
}
