import { BaseError, decodeErrorResult, ExecutionRevertedError, type Hex, HttpRequestError, TimeoutError, WebSocketRequestError } from 'viem'
import { swapEaziRouterAbi } from '../contracts/routerArtifact.ts'
import type { TrackerClient } from './trackerContext.ts'

/**
 * Why a mined transaction reverted: it is replayed with eth_call on the state before its block, and the revert data
 * decoded (the router's errors, Error(string)); the replay runs on the block's parent state, so a reason that depends
 * on an earlier transaction of the same block may differ. Undefined when the replay does not revert. A replay the RPC
 * could not run (transport failure, timeout) rejects: its error is no reason, and recording it as one would be false.
 */
export async function revertReason(
  client: TrackerClient,
  tx: { from: Hex; to: Hex | null; input: Hex; value: bigint; gas: bigint },
  blockNumber: bigint,
): Promise<{ text: string; isExpired: boolean } | undefined> {
  if (tx.to === null) return undefined
  try {
    await client.call({ account: tx.from, to: tx.to, data: tx.input, value: tx.value, gas: tx.gas, blockNumber: blockNumber - 1n })
    return undefined
  } catch (error) {
    if (isRpcFailure(error)) throw error
    const data = revertData(error)
    if (data !== undefined && data !== '0x') {
      try {
        const decoded = decodeErrorResult({ abi: swapEaziRouterAbi, data })
        if (decoded.errorName === 'OrderExpired') return { text: `OrderExpired: the order's deadline had passed`, isExpired: true }
        if (decoded.errorName === 'Error') return { text: String(decoded.args?.[0]), isExpired: false }
        return {
          text: `${decoded.errorName}${decoded.args === undefined ? '' : `(${decoded.args.map(String).join(', ')})`}`,
          isExpired: false,
        }
      } catch {
        // not an error the router declares (nor Error(string) or Panic): the client's message says what it can
      }
    }
    const message = error instanceof BaseError ? (error.details ?? error.shortMessage) : String(error)
    // A node that answers the replay with an error of its own (a pruned node's "missing trie node", a rate limit)
    // says nothing of why the transaction reverted: say that, rather than give its words as the reason.
    const isRevert = error instanceof BaseError && error.walk((cause) => cause instanceof ExecutionRevertedError) !== null
    if (!isRevert && !/revert/i.test(message)) return { text: `reverted (the reason could not be replayed: ${message})`, isExpired: false }
    return { text: message, isExpired: /OrderExpired/.test(message) }
  }
}

function revertData(error: unknown): Hex | undefined {
  if (!(error instanceof BaseError)) return undefined
  const found = error.walk((cause) => typeof (cause as { data?: unknown }).data === 'string')
  const data = (found as { data?: unknown } | null)?.data
  return typeof data === 'string' && data.startsWith('0x') ? (data as Hex) : undefined
}

/** True when a call failed in reaching the node (HTTP or WebSocket failure, timeout), not in the EVM. */
export function isRpcFailure(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false
  return (
    error.walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError || cause instanceof WebSocketRequestError) !==
    null
  )
}
