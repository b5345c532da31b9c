import * as z from 'zod'
import { type ChainAmount, type OrderStatus, SwapStatusWire, TRACKED_REF_PATTERN } from '../../schemas/swapStatus.ts'
import { defineTool, failedCall, failed, READ_ONLY } from '../tool.ts'

const amountText = (amount: ChainAmount): string => `${amount.amount} ${amount.token} on ${amount.chain}`

/** The latest transaction of an order, with its explorer link when there is one. */
function lastTransaction(order: OrderStatus): string {
  const leg = order.legs.at(-1)
  if (leg === undefined) return ''
  return ` (${leg.role} transaction ${leg.explorerUrl ?? `${leg.txHash} on ${leg.chain}`})`
}

/** Where the money of one order is, in words a user can be told. */
export function whereTheMoneyIs(order: OrderStatus): string {
  // A transaction that must not be signed: the one thing to say is that (the next step says why).
  if (order.state === 'built' && order.next.action === 'do_not_sign') return 'It must never be signed.'
  switch (order.state) {
    case 'built':
      // Untracked, a mined transaction leaves the state built: the status cannot tell whether the money left.
      return order.isTracked
        ? "Nothing has moved yet: the money is still in the sender's wallet."
        : `No tracker is known to follow this order on ${order.fromChain}, so this status cannot show whether its transaction was sent: the money is still in the sender's wallet only if it was never broadcast (the next step says where to look before building again).`
    case 'pending':
      return `${order.sent === null ? 'The money left the sender' : `${amountText(order.sent)} left the sender`}${lastTransaction(order)} and is on its way to ${order.toChain}.`
    case 'done':
      if (order.substatus === 'refunded')
        return `The bridge refunded the money to the sender${order.received === null ? '' : ` (${amountText(order.received)})`}${lastTransaction(order)}.`
      if (order.substatus === 'partial')
        return `The recipient got ${order.received === null ? 'the bridged token' : amountText(order.received)} instead of the token asked for${lastTransaction(order)}.`
      return `The recipient got ${order.received === null ? 'the money' : amountText(order.received)}${lastTransaction(order)}.`
    case 'failed':
      return `It failed${order.reason === null ? '' : ` (${order.reason})`}${lastTransaction(order)}.`
    case 'expired':
      return "It was never mined before its deadline, so nothing moved: the money is still in the sender's wallet."
  }
}

const stateText = (state: string, substatus: string | null): string => (substatus === null ? state : `${state} (${substatus})`)

/** The status as a user can be told it: the state, where the money is, and what to do next. */
export function describeSwapStatus(status: SwapStatusWire): string {
  const [first] = status.orders
  if (status.kind === 'swap' && first !== undefined)
    return `Swap ${status.ref} is ${stateText(status.state, status.substatus)}. ${whereTheMoneyIs(first)} Next: ${status.next.message}`
  const recipients = status.orders.map((order) => `${order.ref}: ${stateText(order.state, order.substatus)}. ${whereTheMoneyIs(order)}`)
  return `Batch ${status.ref} (${status.orders.length} recipients) is ${stateText(status.state, status.substatus)}. ${recipients.join(' ')} Next: ${status.next.message}`
}

export const trackSwap = defineTool({
  name: 'track_swap',
  title: 'Where a swap is and what to do next',
  description:
    "Follows a swap after build_swap, from its reference (swapEaziRef, swp_…, or a batch's disbursementRef, dsb_…): whether it is still unsigned (built), on its way (pending), delivered (done: completed, or partial when the recipient got the bridged token instead, or refunded), failed or expired; where the money is, each transaction with its explorer link, the amounts sent and received, and what to do next (sign before the deadline, wait and check again, use the delivered token, quote again). Answers what the chains show and nothing else; free and changes nothing.",
  inputSchema: {
    ref: z
      .string()
      // Its ULID in any case, as the service reads it.
      .regex(new RegExp(TRACKED_REF_PATTERN.source, 'i'), 'must be swp_ or dsb_ and 26 characters, as build_swap answered it (swapEaziRef)')
      .describe('The swapEaziRef build_swap answered (swp_…), or a batch disbursementRef (dsb_…)'),
  },
  outputSchema: SwapStatusWire.shape,
  annotations: { ...READ_ONLY, title: 'Where a swap is and what to do next' },
  async run({ client }, args) {
    const response = await client.get(`/api/v1/swap/${encodeURIComponent(args.ref)}/status`)
    if (response.status !== 200) return failedCall(response)
    const parsed = SwapStatusWire.safeParse(response.body)
    if (!parsed.success) return failed('SwapEazi answered with a swap status this server cannot read; check SWAPEAZI_BASE_URL.')
    return { ok: true, structured: parsed.data, summary: describeSwapStatus(parsed.data) }
  },
})
