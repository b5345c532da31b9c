import { getAddress } from 'viem'
import { formatAtomic } from '../engine/index.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import type { BuildSwapTransactionReturnType } from './buildSwapTransaction.ts'

/** The agent call fee as the route's fee breakdown shows it; null where no per-call fee applies (keyed swaps). */
export type AgentCallFee = { atomic: bigint } | null

/** ISO 8601 text of an order deadline (unix seconds). */
export const isoOfDeadline = (deadline: bigint): string => new Date(Number(deadline) * 1000).toISOString()

/** Shapes a built swap as the wire SwapResult: the transaction, the approval it needs, the route and its fees. */
export function formatSwapResult(built: BuildSwapTransactionReturnType, agentCallFee: AgentCallFee): SwapResult {
  const { quote, build, swapEaziRef } = built
  const approval = build.approval
  const approvalTx = build.approvalTransactionRequest
  const resetTx: TransactionRequest | undefined = build.approvalResetTransactionRequest
  const { chainId } = build.transactionRequest
  const deadline = isoOfDeadline(build.order.deadline)
  const destinationDeadline = build.destinationOrder ? isoOfDeadline(build.destinationOrder.deadline) : undefined
  const bridged = quote.route.steps.find((step) => step.type === 'bridge')
  const nextSteps = [
    ...(resetTx ? [`Sign and send approval.resetTransactionRequest (approve 0) on chain ${chainId}.`] : []),
    `Sign and send approval.transactionRequest: approve ${quote.fromAmount} ${quote.fromToken} to the router ${approval.spender} (skip it if the allowance is already enough).`,
    `Sign and send transactionRequest on chain ${chainId} so that it is mined by ${deadline}: after that the router refuses it and nothing moves (build the swap again). At least ${quote.toAmountMin} ${quote.toToken} arrives or the swap does not happen.`,
    ...(destinationDeadline && bridged
      ? [
          `If the bridge delivers after ${destinationDeadline}, the swap on ${quote.toChain} does not run and the recipient gets the bridged ${bridged.toToken} instead.`,
        ]
      : []),
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
