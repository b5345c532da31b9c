import { type Catalogue, formatAtomic } from '../engine/index.ts'
import { ChainCode } from '../schemas/catalogue.ts'
import { type ChainAmount, type LifecycleLeg, type OrderStatus, TxHash } from '../schemas/swapStatus.ts'
import type { LegName, LifecycleAmount, LifecycleRecord } from '../store/createStore.ts'
import { isTrackedBy, nextStep, type SourceTracking } from './nextStep.ts'

/** The order a status is about, as the service recorded it when it was built. */
export type BuiltOrder = {
  ref: string
  kind: 'swap' | 'batch'
  fromChain: string
  toChain: string
  toToken: string
  createdAt: string
  /** Unix ms after which the router refuses the transaction. */
  deadlineMs: number
  /** Why the transaction must not be signed (it depends on the inert default router); absent when it may be. */
  doNotSign?: string
}

export type OrderStatusParameters = {
  catalogue: Catalogue
  /** A chain's block explorer transaction URL for a hash; null when none is configured. */
  explorerTxUrl: (chain: ChainCode, txHash: string) => string | null
  /** A chain's block explorer (its home page); null when none is configured. */
  explorerUrl: (chain: ChainCode) => string | null
  order: BuiltOrder
  /** The tracker's record (a swap no tracker has moved reads as built); undefined for an order not recorded as a swap. */
  lifecycle: LifecycleRecord | undefined
  /** Who follows the order's source chain: this service, a tracker seen scanning it, none seen, or nothing ever (`isTracked` on the wire: the first two). */
  sourceTracking: SourceTracking
  /** Whether a tracker is known to read the order's destination chain (where a bridged delivery is seen). Absent: read. */
  isDestinationTracked?: boolean
  /** The time of the last final block the tracker read on the source chain (null: none), for a built order past its deadline. */
  sourceReadToMs?: number | null
  nowMs: number
}

/** The catalogue token on `chain` named by symbol or address, for its canonical symbol and decimals. */
function tokenOn(catalogue: Catalogue, chain: string, token: string): { symbol: string; decimals: number } | undefined {
  const bySymbol = catalogue.allTokensByLowerKey.get(`${chain}:${token.toLowerCase()}`)
  if (bySymbol !== undefined) return bySymbol
  const address = token.toLowerCase()
  for (const candidate of catalogue.tokens.values())
    if (candidate.chain === chain && candidate.address.toLowerCase() === address) return candidate
  return undefined
}

/** A stored amount on the wire: whole tokens when the catalogue knows the token, else atomic units said as such. */
function chainAmount(catalogue: Catalogue, stored: LifecycleAmount): ChainAmount {
  const chain = ChainCode.parse(stored.chain)
  const atomic = stored.amount
  const token = tokenOn(catalogue, chain, stored.token)
  return {
    chain,
    token: token?.symbol ?? stored.token,
    amount: token === undefined ? atomic.toString() : formatAtomic(atomic, token.decimals),
    atomic: atomic.toString(),
  }
}

const isoOf = (at: string): string => new Date(at).toISOString()

/** The legs in the order money moves through them. */
const LEG_ORDER: readonly LegName[] = ['source', 'bridge', 'destination']

/**
 * One order's status on the wire, from the tracker's record, or `built` with the time it was built when the tracker
 * has no record of it; and what to do next.
 */
export function orderStatus(parameters: OrderStatusParameters): OrderStatus {
  const { catalogue, explorerTxUrl, explorerUrl, order, lifecycle, sourceTracking, nowMs } = parameters
  const fromChain = ChainCode.parse(order.fromChain)
  const toChain = ChainCode.parse(order.toChain)
  const state = lifecycle?.state ?? 'built'
  const substatus = lifecycle?.substatus ?? null
  const reason = lifecycle?.reason ?? null
  const received = lifecycle?.received == null ? null : chainAmount(catalogue, lifecycle.received)
  const legs: LifecycleLeg[] = LEG_ORDER.flatMap((role) => {
    const leg = lifecycle?.legs[role]
    if (leg === undefined) return []
    const chain = ChainCode.parse(leg.chain)
    return [
      {
        // A refund is recorded as the destination leg, though it pays the sender back on the source chain.
        role: role === 'destination' && lifecycle?.substatus === 'refunded' ? 'refund' : role,
        chain,
        txHash: TxHash.parse(leg.txHash),
        blockNumber: leg.blockNumber.toString(),
        explorerUrl: explorerTxUrl(chain, leg.txHash),
      },
    ]
  })
  const transitions =
    lifecycle === undefined || lifecycle.transitions.length === 0
      ? [{ state: 'built' as const, substatus: null, at: isoOf(order.createdAt) }]
      : lifecycle.transitions.map((t) => ({ state: t.state, substatus: t.substatus, at: isoOf(t.at) }))
  return {
    ref: order.ref,
    state,
    substatus,
    reason,
    isTracked: isTrackedBy(sourceTracking),
    fromChain,
    toChain,
    sent: lifecycle?.sent == null ? null : chainAmount(catalogue, lifecycle.sent),
    received,
    legs,
    transitions,
    next: nextStep({
      kind: order.kind,
      state,
      substatus,
      reason,
      sourceTracking,
      fromChain,
      explorerUrl: explorerUrl(fromChain),
      ...(parameters.isDestinationTracked === undefined ? {} : { isDestinationTracked: parameters.isDestinationTracked }),
      ...(parameters.sourceReadToMs === undefined ? {} : { sourceReadToMs: parameters.sourceReadToMs }),
      deadlineMs: order.deadlineMs,
      ...(order.doNotSign === undefined ? {} : { doNotSign: order.doNotSign }),
      received,
      asked: { chain: toChain, token: order.toToken },
      nowMs,
    }),
  }
}
