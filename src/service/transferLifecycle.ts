import { type Catalogue, parseUnitsExact } from '../engine/index.ts'
import type { DisbursementItem } from '../schemas/disburse.ts'
import type { StoredDisbursement } from '../store/createDisbursementStore.ts'
import type { LifecycleRecord } from '../store/createStore.ts'

/**
 * The lifecycle of a batch's plain transfer, which no swap row records and no tracker follows on its own: it is paid
 * by the batch's one source transaction, so it is done (completed) once any tracked leg of the batch shows that
 * transaction mined, failed or expired with them, and built before. Undefined when the batch has no tracked leg to
 * read (a batch of transfers only), or the item is not a transfer.
 */
export function transferLifecycle(
  catalogue: Catalogue,
  batch: Pick<StoredDisbursement, 'ref' | 'fromChain' | 'fromToken' | 'createdAt'>,
  item: DisbursementItem,
  tracked: readonly LifecycleRecord[],
): LifecycleRecord | undefined {
  if (item.kind !== 'transfer' || tracked.length === 0) return undefined
  const ref = `${batch.ref}.${item.index}`
  const built = { state: 'built' as const, substatus: null, reason: null, legs: {}, at: batch.createdAt }
  const base = { ref, disbursementRef: batch.ref, legIndex: item.index, destinationFromBlock: null }
  const unmoved = tracked.find((leg) => leg.state === 'failed' || leg.state === 'expired')
  // A reverted transaction leaves a failed leg with its source too: only a pending or done leg shows the batch ran.
  const mined = tracked.find((leg) => (leg.state === 'pending' || leg.state === 'done') && leg.legs.source !== undefined)
  if (mined?.legs.source === undefined) {
    if (unmoved === undefined)
      return {
        ...base,
        state: 'built',
        substatus: null,
        reason: null,
        legs: {},
        sent: null,
        received: null,
        transitions: [built],
        updatedAt: batch.createdAt,
      }
    const at = unmoved.transitions.at(-1)?.at ?? unmoved.updatedAt
    const ended = { state: unmoved.state, substatus: null, reason: unmoved.reason, legs: {}, at }
    return {
      ...base,
      state: unmoved.state,
      substatus: null,
      reason: unmoved.reason,
      legs: {},
      sent: null,
      received: null,
      transitions: [built, ended],
      updatedAt: at,
    }
  }
  const token = catalogue.tokens.get(`${batch.fromChain}:${batch.fromToken}`)
  const sent = token === undefined ? undefined : parseUnitsExact(item.amount, token.decimals, { strict: false })
  const received = token === undefined ? undefined : parseUnitsExact(item.toAmount, token.decimals, { strict: false })
  const amount = (parsed: typeof sent) =>
    parsed?.ok === true ? { chain: batch.fromChain, token: batch.fromToken, amount: parsed.value } : null
  const source = mined.legs.source
  const at = mined.transitions.find((t) => t.state === 'pending')?.at ?? mined.updatedAt
  const done = { state: 'done' as const, substatus: 'completed' as const, reason: null, legs: { source }, at }
  return {
    ...base,
    state: 'done',
    substatus: 'completed',
    reason: null,
    legs: { source },
    sent: amount(sent),
    received: amount(received),
    transitions: [built, done],
    updatedAt: at,
  }
}
