import { getAddress } from 'viem'
import { formatAtomic } from '../engine/index.ts'
import type { SwapResult } from '../schemas/swap.ts'
import type { TransactionRequest } from '../schemas/swap.ts'
import type { BuildSwapTransactionReturnType } from './buildSwapTransaction.ts'

/** The agent call fee as the route's fee breakdown shows it; null where no per-call fee applies (keyed swaps). */
export type AgentCallFee = { atomic: bigint } | null

/** Shapes a built swap as the wire SwapResult: the transaction, the approval it needs, the route and its fees. */
export function formatSwapResult(built: BuildSwapTransactionReturnType, agentCallFee: AgentCallFee): SwapResult {
  const { quote, build, swapEaziRef } = built
  const approval = build.approval
  const approvalTx = build.approvalTransactionRequest
  const resetTx: TransactionRequest | undefined = build.approvalResetTransactionRequest
  const { chainId } = build.transactionRequest
  const nextSteps = [
    ...(resetTx ? [`Sign and send approval.resetTransactionRequest (approve 0) on chain ${chainId}.`] : []),
    `Sign and send approval.transactionRequest: approve ${quote.fromAmount} ${quote.fromToken} to the router ${approval.spender} (skip it if the allowance is already enough).`,
    `Sign and send transactionRequest on chain ${chainId} before the quote's prices move; at least ${quote.toAmountMin} ${quote.toToken} arrives or the swap does not happen.`,
  ]
  return {
    swapEaziRef,
    status: 'built',
    transactionRequest: build.transactionRequest,
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
