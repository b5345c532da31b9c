import { getAddress } from 'viem'
import { formatAtomic } from '../engine/index.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import type { BuildSwapTransactionReturnType } from './buildSwapTransaction.ts'
import { inertRouterSteps, routerUsesOf } from './inertRouter.ts'

/** The agent call fee as the route's fee breakdown shows it; null where no per-call fee applies (keyed swaps). */
export type AgentCallFee = { atomic: bigint } | null

/** ISO 8601 text of an order deadline (unix seconds). */
export const isoOfDeadline = (deadline: bigint): string => new Date(Number(deadline) * 1000).toISOString()

/**
 * What the recipient is sure to get, by route kind, as the calldata bounds it: on one chain the router's minOut; over
 * a bridge, the bridge's own minimum; with a swap on arrival, the target token's minimum or, when that swap cannot
 * meet it or the bridge is late (DestinationFallback), the bridged token itself.
 */
function whatArrives(built: BuildSwapTransactionReturnType, destinationDeadline: string | undefined): string {
  const { quote, build } = built
  const lane = build.sized.route.bridge
  const target = `${quote.toAmountMin} ${quote.toToken}`
  if (lane === undefined || build.leastBridged === undefined)
    return `At least ${target} arrives, or the router reverts the transaction and nothing moves.`
  const bridged = `${formatAtomic(build.leastBridged, lane.to.decimals)} ${lane.to.symbol}`
  const refund = lane.bridge.protocol === 'across' ? `, or refunds the sender on ${quote.fromChain} if no relayer fills it` : ''
  if (build.destinationOrder === undefined)
    return `Once it is mined, the bridge delivers at least ${bridged} to the recipient on ${quote.toChain}${refund}; if it reverts, nothing moves.`
  return `Once it is mined, the bridge carries at least ${bridged} to ${quote.toChain}${refund}, where a swap gives the recipient at least ${target}; if that swap cannot meet this minimum, or the bridge delivers after ${destinationDeadline}, it does not run and the recipient gets the bridged ${lane.to.symbol} instead (at least ${bridged}).`
}

/** Shapes a built swap as the wire SwapResult: the transaction, the approval it needs, the route and its fees. */
export function formatSwapResult(built: BuildSwapTransactionReturnType, agentCallFee: AgentCallFee): SwapResult {
  const { quote, build, swapEaziRef } = built
  const approval = build.approval
  const approvalTx = build.approvalTransactionRequest
  const resetTx: TransactionRequest | undefined = build.approvalResetTransactionRequest
  const { chainId } = build.transactionRequest
  const deadline = isoOfDeadline(build.order.deadline)
  const destinationDeadline = build.destinationOrder ? isoOfDeadline(build.destinationOrder.deadline) : undefined
  // A transaction that depends on the inert default router has one step: not to sign it. Signing steps after it
  // would tell an agent that reads them in order to sign all the same.
  const doNotSign = inertRouterSteps(routerUsesOf(build))
  const nextSteps =
    doNotSign.length > 0
      ? doNotSign
      : [
          ...(resetTx ? [`Sign and send approval.resetTransactionRequest (approve 0) on chain ${chainId}.`] : []),
          `Sign and send approval.transactionRequest: approve ${quote.fromAmount} ${quote.fromToken} to the router ${approval.spender} (skip it if the allowance is already enough).`,
          `Sign and send transactionRequest on chain ${chainId} so that it is mined by ${deadline}: after that the router refuses it and nothing moves (build the swap again). ${whatArrives(built, destinationDeadline)}`,
        ]
  return {
    swapEaziRef,
    status: 'built',
    transactionRequest: build.transactionRequest,
    deadline,
    ...(destinationDeadline ? { destinationDeadline } : {}),
    approval: {
      token: approval.token,
      spender: approval.spender,
      amount: approval.amount.toString(),
      resetFirst: approval.resetFirst,
      transactionRequest: approvalTx,
      ...(resetTx ? { resetTransactionRequest: resetTx } : {}),
    },
    route: {
      ...quote.route,
      bridge: quote.bridge,
      tool: quote.tool,
      fees: {
        swapFee: quote.fee,
        agentCallFee:
          agentCallFee === null
            ? null
            : { amount: formatAtomic(agentCallFee.atomic, 6), token: 'USDC', network: 'base', atomic: agentCallFee.atomic.toString() },
        routeCostUsd: quote.route.realCost.usd,
        estimatedGasUSD: quote.estimatedGasUSD,
      },
    },
    fromChain: quote.fromChain,
    toChain: quote.toChain,
    fromToken: quote.fromToken,
    toToken: quote.toToken,
    fromAmount: quote.fromAmount,
    toAmount: quote.toAmount,
    toAmountMin: quote.toAmountMin,
    toAddress: getAddress(built.toAddress),
    estimatedGasUSD: quote.estimatedGasUSD,
    estimatedDuration: quote.estimatedDuration,
    nextSteps,
  }
}

/**
 * A paid swap handed out again (the same payment with the same request): as recorded, except past its deadline, when
 * its transaction can only revert: its steps then say not to sign it, and what to do instead. The redelivered answer
 * said "sign and send" for a transaction the router refuses (audit of issue 15).
 */
export function redeliveredSwapResult(result: SwapResult, nowMs: number): SwapResult {
  if (nowMs <= Date.parse(result.deadline)) return result
  return {
    ...result,
    nextSteps: [
      `Do not sign transactionRequest or its approval: this swap's deadline (${result.deadline}) has passed, so the router refuses it and it can only revert. If it was never mined, nothing moved (GET /api/v1/swap/${result.swapEaziRef}/status says whether it ran). This payment bought this build and buys no other: for a new one, get a new quote and build again with a new payment.`,
    ],
  }
}
