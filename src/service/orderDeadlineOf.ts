import { decodeFunctionData, type Hex } from 'viem'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'

/**
 * The deadline the router enforces on a built transaction (`execute` or `executeBatch`), in Unix ms, read from its
 * calldata: the stored record keeps the transaction, not the order, and the calldata is what the chain will judge.
 * A batch's orders share one deadline; the earliest is taken should they not. Undefined for data that is not a call
 * of our router.
 */
export function orderDeadlineOf(transactionRequest: unknown): number | undefined {
  const data = (transactionRequest as { data?: unknown } | null)?.data
  if (typeof data !== 'string' || !data.startsWith('0x')) return undefined
  try {
    const call = decodeFunctionData({ abi: swapEaziRouterAbi, data: data as Hex })
    if (call.functionName === 'execute') return Number(call.args[0].deadline) * 1000
    if (call.functionName === 'executeBatch') {
      const deadlines = call.args[0].map((order) => Number(order.deadline))
      return deadlines.length === 0 ? undefined : Math.min(...deadlines) * 1000
    }
    return undefined
  } catch {
    return undefined
  }
}
