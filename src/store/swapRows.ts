import { isoTimestamp } from './sql.ts'

/** What every reader of a `swaps` row maps alike: the swap's ref, its corridor, its amount and when it was built. */
export type SwapCorridor = { ref: string; fromChain: string; toChain: string; fromToken: string; toToken: string; fromAmount: string; createdAt: string }

export function swapCorridorOfRow(row: Record<string, unknown>): SwapCorridor {
  return {
    ref: String(row['ref']),
    fromChain: String(row['from_chain']),
    toChain: String(row['to_chain']),
    fromToken: String(row['from_token']),
    toToken: String(row['to_token']),
    fromAmount: String(row['from_amount']),
    createdAt: isoTimestamp(row['created_at']),
  }
}
