import type { SwapChannel, SwapRecord } from '../store/createStore.ts'
import type { BuildSwapTransactionReturnType } from './buildSwapTransaction.ts'

/** A built swap as the store keeps it: what was asked, what was promised, and the transaction. */
export function swapRecordOf(built: BuildSwapTransactionReturnType, channel: SwapChannel, createdAt: Date): SwapRecord {
  return {
    ref: built.swapEaziRef,
    channel,
    status: 'built',
    fromChain: built.quote.fromChain,
    toChain: built.quote.toChain,
    fromToken: built.quote.fromToken,
    toToken: built.quote.toToken,
    fromAmount: built.quote.fromAmount,
    toAmount: built.quote.toAmount,
    toAmountMin: built.quote.toAmountMin,
    fromAddress: built.build.transactionRequest.from,
    toAddress: built.toAddress,
    quote: built.quote,
    transactionRequest: built.build.transactionRequest,
    createdAt,
  }
}
