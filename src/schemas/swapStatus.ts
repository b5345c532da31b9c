import * as z from 'zod'
import { fixedHexSchema } from './address.ts'
import { ChainCode } from './catalogue.ts'
import { unknownFieldsError } from './unknownFields.ts'

/** A swap or a batch disbursement reference, as the swap and batch answers gave it. */
export const TRACKED_REF_PATTERN = /^(swp|dsb)_[0-9A-Z]{26}$/

/** A transaction hash on the wire: 32 bytes of hex. */
export const TxHash = fixedHexSchema(32, 'must be 0x followed by 64 hex characters (a transaction hash)')

/** Where a swap is in its life, modelled on the peers' status APIs (LI.FI, Squid, Across, Relay). */
export const LifecycleState = z
  .enum(['built', 'pending', 'done', 'failed', 'expired'])
  .describe(
    'built: recorded, not yet seen on chain; pending: the source transaction is mined and the money is on its way; done: the money arrived (see substatus); failed: it cannot complete (see reason); expired: the deadline passed and it was never mined, so nothing moved',
  )
export type LifecycleState = z.infer<typeof LifecycleState>

/** How a `done` swap ended. */
export const LifecycleSubstatus = z
  .enum(['completed', 'partial', 'refunded'])
  .describe(
    'Only when done. completed: the recipient got the token asked for; partial: the destination swap could not run, so the recipient got the bridged token instead (received names it); refunded: the bridge gave the money back to the sender',
  )
export type LifecycleSubstatus = z.infer<typeof LifecycleSubstatus>

/** An amount of one token on one chain, in whole tokens and atomic units. */
export const ChainAmount = z
  .object({
    chain: ChainCode,
    token: z.string().describe('Symbol as the catalogue lists it, or the token address when the catalogue does not list it'),
    amount: z
      .string()
      .describe(
        'Whole tokens, a decimal string; the atomic units again when the catalogue does not list the token (token is then its address)',
      ),
    atomic: z.string().describe('Atomic units, an integer string'),
  })
  .meta({ id: 'ChainAmount' })
export type ChainAmount = z.infer<typeof ChainAmount>

/** One transaction of a swap on one chain, as the chain shows it. */
export const LifecycleLeg = z
  .object({
    role: z
      .string()
      .describe(
        'What the transaction did: source (the router call the user signed), bridge, destination (the delivery), or refund (the bridge paid the sender back)',
      ),
    chain: ChainCode,
    txHash: TxHash,
    blockNumber: z.string().nullable().describe('The block it was mined in, an integer string; null until known'),
    explorerUrl: z.string().nullable().describe("The transaction on the chain's block explorer; null when none is configured"),
  })
  .meta({ id: 'LifecycleLeg' })
export type LifecycleLeg = z.infer<typeof LifecycleLeg>

/** One change of state, when the tracker saw it. */
export const LifecycleTransition = z
  .object({
    state: LifecycleState,
    substatus: LifecycleSubstatus.nullable(),
    at: z.string().describe('ISO 8601'),
  })
  .meta({ id: 'LifecycleTransition' })

/** What the holder of the reference does next, in words an agent can act on. */
export const NextStep = z
  .object({
    action: z
      .enum(['sign_and_broadcast', 'do_not_sign', 'wait', 'none', 'use_delivered_token', 'quote_again', 'check_sender'])
      .describe(
        "sign_and_broadcast: the transaction is still unsent; do_not_sign: it depends on SwapEazi's inert default router, deployed nowhere (this service has no router of its own on a chain it needs), so it must never be signed; wait: check again after checkAgainSec; none: finished; use_delivered_token: the recipient holds the bridged token and may swap it; quote_again: build a new swap; check_sender: the money went back to, or stayed with, the sender",
      ),
    message: z.string().describe('The step in one or two sentences, to act on or tell the user'),
    checkAgainSec: z
      .number()
      .int()
      .positive()
      .nullable()
      .describe(
        'When to read the status again; null when no change is to be expected: it is finished, or no tracker is known to follow it (the message then says where to look instead)',
      ),
    deadline: z.string().nullable().describe('ISO 8601: the time the step must be done by, when there is one'),
  })
  .meta({ id: 'NextStep' })
export type NextStep = z.infer<typeof NextStep>

/** The status of one tracked order: a swap, or one recipient's leg of a batch. */
export const OrderStatus = z
  .object({
    ref: z.string().describe('swp_… for a swap, dsb_….<index> for a leg of a batch'),
    state: LifecycleState,
    substatus: LifecycleSubstatus.nullable(),
    reason: z.string().nullable().describe('Why it failed or expired, or what the partial delivery was; null otherwise'),
    isTracked: z
      .boolean()
      .describe(
        "true when a tracker is known to follow this order: this service has an RPC for its source chain, or another tracker was seen scanning that chain in the last 10 minutes. false when none is: either no tracker follows this kind of order at all (a batch of plain transfers only: its orders stay built whatever happens on chain), or this service does not read the source chain and has seen no tracker scan it (its state moves only if a swapeazi track process with that chain's RPC runs on the same store). next.message says which, and where to see the transaction instead",
      ),
    fromChain: ChainCode,
    toChain: ChainCode,
    sent: ChainAmount.nullable().describe('What left the sender, as the source transaction shows it; null until mined'),
    received: ChainAmount.nullable().describe('What the recipient got, as the delivery shows it; null until delivered'),
    legs: z.array(LifecycleLeg).describe('Every transaction seen, in order'),
    transitions: z.array(LifecycleTransition).describe('Every change of state, oldest first'),
    next: NextStep,
  })
  .meta({ id: 'OrderStatus' })
export type OrderStatus = z.infer<typeof OrderStatus>

/**
 * GET /api/v1/swap/{ref}/status: only what the chains show, for whoever holds the reference. A swap's answer is its
 * one order; a batch's is the state of the batch as a whole, with every recipient's order.
 */
export const SwapStatusWire = z
  .object({
    ref: z.string().describe('The reference asked for'),
    kind: z.enum(['swap', 'batch']),
    state: LifecycleState.describe(
      'A batch: its least advanced order while any is built or pending; then failed or expired when any order is; else done, completed only when every order completed',
    ),
    substatus: LifecycleSubstatus.nullable(),
    reason: z.string().nullable(),
    orders: z.array(OrderStatus).min(1).describe('A swap: one; a batch: one per recipient, by index'),
    next: NextStep,
  })
  .meta({ id: 'SwapStatus' })
export type SwapStatusWire = z.infer<typeof SwapStatusWire>

/** POST /api/v1/swap/{ref}/transaction: the hash of the source transaction the user broadcast (optional; the tracker finds it anyway). */
export const TransactionHint = z
  .strictObject(
    { txHash: TxHash.describe('The source transaction: the one transactionRequest became when it was broadcast') },
    {
      error: unknownFieldsError({
        known: ['txHash'],
        elsewhere: { chain: "the chain is read from the swap's record, its source chain" },
      }),
    },
  )
  .meta({ id: 'TransactionHint' })
export type TransactionHint = z.infer<typeof TransactionHint>
