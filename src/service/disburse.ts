import { type Address, getAddress, hexToBigInt } from 'viem'
import {
  formatAtomic,
  MAX_TRANSACTION_GAS,
  MAX_UINT256,
  maxAmountIn,
  numberToFixed,
  PoolInflows,
  quoteAmounts,
  type Token,
} from '../engine/index.ts'
import type { DisbursementItem, DisbursementResult, DisburseRequest } from '../schemas/disburse.ts'
import type { FieldError } from '../schemas/problem.ts'
import type { QuoteParams } from '../schemas/quote.ts'
import type { SwapRecord } from '../store/createStore.ts'
import { buildDisbursementTransaction, type DisbursementLeg } from '../tx/buildDisbursementTransaction.ts'
import { type DestinationLeg, destinationLegOf, preflightBuild } from './preflightBuild.ts'
import { buildSwapTransaction } from './buildSwapTransaction.ts'
import type { ServiceDeps } from './deps.ts'
import { newDisbursementRef } from './disbursementRef.ts'
import { amountAboveMax, parseTokenAmount } from './parseTokenAmount.ts'
import {
  BAD_CHECKSUM,
  checkSender,
  hasValidChecksum,
  recipientRefusal,
  requireAgentCallable,
  resolveQuoteRequest,
  resolveToken,
} from './resolveQuoteRequest.ts'
import { isoOfDeadline } from './formatSwapResult.ts'
import { ServiceError } from './serviceError.ts'
import { swapRecordOf } from './swapRecordOf.ts'
import { swapRefToBytes32 } from './swapRef.ts'
import { inertRouterSteps } from './inertRouter.ts'

export type DisburseParameters = {
  params: DisburseRequest
  /** The API key the request was authenticated with (kept with the record). */
  keyId: string
}

/** A recipient once resolved: a transfer of the source token, or a route priced and built as a swap would be. */
type PlannedLeg = { index: number; address: Address; amountIn: bigint } & (
  | { kind: 'transfer' }
  | { kind: 'route'; params: QuoteParams; to: Token }
)

/**
 * POST /api/v1/batch/disburse: resolves every recipient (400 and 422 name the recipient's index), screens the sender
 * and every recipient (403), prices and builds each leg as a quote and swap would (a same-token leg is a plain
 * transfer of the amount less the 0.5% fee), then joins the legs into one `executeBatch` transaction and records the
 * disbursement before answering.
 */
export async function disburse(deps: ServiceDeps, parameters: DisburseParameters): Promise<DisbursementResult> {
  const { params, keyId } = parameters
  const from = resolveSource(deps, params)
  const slippageE18 = numberToFixed(params.slippage)
  if (slippageE18 === undefined) throw invalid([{ field: 'slippage', message: 'must be a plain fraction with at most 18 decimal places' }])
  const planned = planLegs(deps, params, from)
  await screen(deps, params.fromAddress, planned)

  const ref = newDisbursementRef(deps.clock())
  const refBytes32 = swapRefToBytes32(ref)
  /** The swap and bridge legs, recorded as swaps (`<dsb ref>.<index>`) for the tracker. */
  const trackedLegs: SwapRecord[] = []
  const legs: DisbursementLeg[] = []
  /** The route legs that swap on arrival: each is simulated on its destination chain too (issue 17 item 7). */
  const destinations: DestinationLeg[] = []
  const items: DisbursementItem[] = []
  // The router runs the legs in order, so each route leg is priced on the pools the legs before it leave.
  const inflows = new PoolInflows()
  let totalFee = 0n
  for (const leg of planned) {
    const recipient = params.recipients[leg.index]
    if (!recipient) throw new Error(`no recipient ${leg.index}`)
    if (leg.kind === 'transfer') {
      // Priced as a quote of the token to itself: the fee is 0.5% rounded up, the recipient gets exactly the rest.
      const { feeAmount, toAmount } = quoteAmounts(deps.catalogue, from, from, leg.amountIn, 0n)
      legs.push({ kind: 'transfer', amount: leg.amountIn, fee: feeAmount, recipient: leg.address })
      totalFee += feeAmount
      items.push({
        ...itemBase(leg, from, from),
        fee: formatAtomic(feeAmount, from.decimals),
        toAmount: formatAtomic(toAmount, from.decimals),
        toAmountMin: formatAtomic(toAmount, from.decimals),
        kind: 'transfer',
        bridge: 'none',
        estimatedDuration: deps.catalogue.chains.get(from.chain)?.blockTimeSec ?? 0,
      })
      continue
    }
    const built = atIndex(leg.index, recipient, () => buildSwapTransaction(deps, { params: leg.params, swapEaziRef: ref, inflows }))
    inflows.add(leg.index, built.build.sized)
    legs.push({ kind: 'route', build: built.build })
    const destination = destinationLegOf(built, deps.routerOn, `recipients[${leg.index}]`, leg.index)
    if (destination !== undefined) destinations.push(destination)
    trackedLegs.push({ ...swapRecordOf(built, 'disbursement', new Date(deps.clock())), ref: `${ref}.${leg.index}`, keyId })
    totalFee += quoteAmounts(deps.catalogue, from, leg.to, leg.amountIn, slippageE18).feeAmount
    items.push({
      ...itemBase(leg, from, leg.to),
      fee: built.quote.fee.amount,
      toAmount: built.quote.toAmount,
      toAmountMin: built.quote.toAmountMin,
      kind: leg.to.chain === from.chain ? 'swap' : 'bridge',
      bridge: built.quote.bridge,
      estimatedDuration: built.quote.estimatedDuration,
    })
  }

  const sender = getAddress(params.fromAddress)
  const batch = buildDisbursementTransaction({
    catalogue: deps.catalogue,
    routerOn: deps.routerOn,
    token: from,
    sender,
    ref: refBytes32,
    legs,
    nowSec: Math.floor(deps.clock() / 1000),
  })
  // A transaction above the per-transaction gas cap is refused by the chain's nodes: never answered as a promise.
  if (batch.legsWithinGasCap < legs.length)
    throw pastGasCap(from, legs.length, batch.legsWithinGasCap, hexToBigInt(batch.transactionRequest.gas))
  // Simulated as a whole on the source chain's live state before it is recorded and answered (issue 17 item 7).
  await preflightBuild(deps, {
    built: {
      chain: from.chain,
      transactionRequest: batch.transactionRequest,
      approval: { token: from.address, amount: batch.amountIn, spender: batch.transactionRequest.to },
      label: `batch of ${legs.length}`,
      destinations,
    },
    requestKey: `${ref}`,
    caller: `key:${keyId}`,
    isPaid: true,
  })
  const totals = {
    amount: formatAtomic(batch.amountIn, from.decimals),
    fee: formatAtomic(totalFee, from.decimals),
    recipients: items.length,
  }
  await deps.store.disbursements.recordDisbursement(
    {
      ref,
      fromChain: from.chain,
      fromToken: from.symbol,
      fromAddress: sender,
      items,
      totals,
      transactionRequest: batch.transactionRequest,
      keyId,
      createdAt: new Date(deps.clock()),
    },
    trackedLegs,
  )
  deps.log.info(
    {
      event: 'disbursement_built',
      disbursement_ref: ref,
      key_id: keyId,
      from_chain: from.chain,
      from_token: from.symbol,
      recipients: items.length,
      amount: batch.amountIn.toString(),
    },
    'disbursement_built',
  )

  const { chainId } = batch.transactionRequest
  const resetTx = batch.approvalResetTransactionRequest
  const isBridged = items.some((item) => item.kind === 'bridge')
  const deadline = isoOfDeadline(batch.deadline)
  // Against the inert default router the one step is not to sign (formatSwapResult).
  const doNotSign = inertRouterSteps([
    { chain: from.chain, address: batch.transactionRequest.to, role: 'router', valueWei: hexToBigInt(batch.transactionRequest.value) },
    ...destinations.map((leg) => ({ chain: leg.chain, address: leg.transactionRequest.to, role: 'executor' as const })),
  ])
  return {
    disbursementRef: ref,
    status: 'built',
    fromChain: from.chain,
    fromToken: from.symbol,
    fromAddress: sender,
    items,
    totals,
    approval: {
      token: batch.approval.token,
      spender: batch.approval.spender,
      amount: batch.approval.amount.toString(),
      resetFirst: batch.approval.resetFirst,
      transactionRequest: batch.approvalTransactionRequest,
      ...(resetTx ? { resetTransactionRequest: resetTx } : {}),
    },
    transactionRequest: batch.transactionRequest,
    deadline,
    nextSteps:
      doNotSign.length > 0
        ? doNotSign
        : [
            ...(resetTx ? [`Sign and send approval.resetTransactionRequest (approve 0) on chain ${chainId}.`] : []),
            `Sign and send approval.transactionRequest: approve ${totals.amount} ${from.symbol} (the sum of the amounts) to the router ${batch.approval.spender} (skip it if the allowance is already enough).`,
            `Sign and send transactionRequest on chain ${chainId} so that it is mined by ${deadline} (after that the router refuses it and nothing moves): one transaction makes all ${items.length} recipients' transfers, swaps and bridge deposits, each held to its own minimum, or none of them.`,
            ...(isBridged ? ["Recipients on other chains are paid when their bridge delivers: see each item's estimatedDuration."] : []),
          ],
  }
}

/** The recipient as resolved: checksummed address, canonical symbol, the amount in its canonical decimal form. */
function itemBase(leg: PlannedLeg, from: Token, to: Token): Pick<DisbursementItem, 'index' | 'address' | 'toChain' | 'toToken' | 'amount'> {
  return {
    index: leg.index,
    address: leg.address,
    toChain: to.chain,
    toToken: to.symbol,
    amount: formatAtomic(leg.amountIn, from.decimals),
  }
}

/**
 * The source side, checked once for the whole batch as a quote checks it: an agent-callable chain, a listed token
 * and a sender whose mixed-case checksum (if any) matches.
 */
function resolveSource(deps: ServiceDeps, params: DisburseRequest): Token {
  requireAgentCallable(deps, params.fromChain, 'fromChain')
  if (!hasValidChecksum(params.fromAddress)) throw invalid([{ field: 'fromAddress', message: BAD_CHECKSUM }])
  checkSender(deps, params.fromChain, 'fromAddress', params.fromAddress)
  return resolveToken(deps, params.fromChain, params.fromToken, 'fromToken')
}

/**
 * Every recipient's amount (in the source token: excess precision rejected, never rounded) and destination. All bad
 * fields of all recipients come back in one 400 (an amount, or the sum of the amounts, that a uint256 cannot hold in
 * atomic units among them); otherwise the first recipient that cannot be served is a 422, then a sum above what the
 * source token could ever hold. Nothing is priced or encoded before every amount and the sum are bounded.
 */
function planLegs(deps: ServiceDeps, params: DisburseRequest, from: Token): PlannedLeg[] {
  const errors: FieldError[] = []
  let unservable: ServiceError | undefined
  const planned: PlannedLeg[] = []
  /** The sum of every amount that parsed, what the signer approves: bounded like each amount. */
  let sum = 0n
  params.recipients.forEach((recipient, index) => {
    const at = `recipients.${index}`
    const amount = parseTokenAmount(deps, recipient.amount, from, `${at}.amount`)
    if (amount.ok || amount.reason === 'above_max') sum += amount.value
    else errors.push(amount.error)
    const hasChecksum = hasValidChecksum(recipient.address)
    if (!hasChecksum) errors.push({ field: `${at}.address`, message: BAD_CHECKSUM })
    // One leg to an address that cannot receive reverts the whole batch (the zero address) or loses its share.
    const refusal = hasChecksum ? recipientRefusal(deps, recipient.toChain, recipient.address, false) : undefined
    if (refusal !== undefined) errors.push({ field: `${at}.address`, message: refusal })
    if ((!amount.ok && amount.reason === 'invalid') || !hasChecksum || refusal !== undefined) return
    const address = getAddress(recipient.address)
    const isTransfer = recipient.toChain === from.chain && recipient.toToken.toLowerCase() === from.symbol.toLowerCase()
    if (isTransfer) {
      // A transfer carries what the token can hold, and at least what leaves the recipient something after the fee.
      const viable = { minIn: smallestTransfer(deps, from), maxIn: maxAmountIn(deps.catalogue, from) }
      if (!amount.ok) {
        unservable ??= atIndexError(
          index,
          recipient,
          amountAboveMax({ token: from, value: amount.value, maxIn: amount.maxIn, field: 'fromAmount', viable }),
        )
        return
      }
      if (amount.value < viable.minIn) {
        unservable ??= atIndexError(index, recipient, transferTooSmall(deps, from, amount.value, viable))
        return
      }
      planned.push({ index, address, amountIn: amount.value, kind: 'transfer' })
      return
    }
    const legParams: QuoteParams = {
      fromChain: from.chain,
      toChain: recipient.toChain,
      fromToken: from.symbol,
      toToken: recipient.toToken,
      fromAmount: recipient.amount,
      fromAddress: params.fromAddress,
      toAddress: recipient.address,
      slippage: params.slippage,
    }
    try {
      // Refuses an amount above what the token can hold as the quote does, with the range of this leg's route.
      const resolved = resolveQuoteRequest(deps, legParams)
      planned.push({ index, address, amountIn: resolved.amountIn, kind: 'route', params: legParams, to: resolved.to })
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error
      const wrapped = atIndexError(index, recipient, error)
      if (wrapped.code === 'invalid_request') errors.push(...((wrapped.detail['errors'] as FieldError[] | undefined) ?? []))
      else unservable ??= wrapped
    }
  })
  if (sum > MAX_UINT256)
    errors.push({
      field: 'recipients',
      message: `the amounts add up to more than a uint256 can hold in atomic units of ${from.symbol}, so no transaction can carry them; send whole tokens ("1000" is 1000 ${from.symbol})`,
    })
  if (errors.length > 0) throw invalid(errors)
  if (unservable) throw unservable
  const maxIn = maxAmountIn(deps.catalogue, from)
  if (sum > maxIn) throw sumAboveMax(from, sum, maxIn)
  return planned
}

/** The smallest amount whose transfer leaves the recipient something after the fee (rounded up) is taken. */
function smallestTransfer(deps: ServiceDeps, token: Token): bigint {
  let min = 1n
  while (quoteAmounts(deps.catalogue, token, token, min, 0n).toAmount <= 0n) min += 1n
  return min
}

function transferTooSmall(deps: ServiceDeps, token: Token, amount: bigint, viable: { minIn: bigint; maxIn: bigint }): ServiceError {
  const range = { min: formatAtomic(viable.minIn, token.decimals), max: formatAtomic(viable.maxIn, token.decimals), token: token.symbol }
  return new ServiceError(
    'amount_out_of_range',
    `${formatAtomic(amount, token.decimals)} ${token.symbol} leaves nothing after the ${Number(deps.catalogue.pricing.feeBps) / 100}% fee. Send at least ${range.min} ${token.symbol}.`,
    { field: 'fromAmount', limit: 'fee', viableRange: range },
  )
}

/** The 422 for a batch whose amounts each fit but add up to more than the source token could ever hold. */
function sumAboveMax(token: Token, sum: bigint, maxIn: bigint): ServiceError {
  const max = formatAtomic(maxIn, token.decimals)
  return new ServiceError(
    'amount_out_of_range',
    `The recipients' amounts add up to ${formatAtomic(sum, token.decimals)} ${token.symbol}, more than ${token.symbol} on ${token.chain} could ever hold: one disbursement carries at most ${max} ${token.symbol} in all, more than the token's whole supply. Check the amounts (whole tokens, not atomic units), or split the recipients into disbursements of at most ${max} ${token.symbol} each.`,
    { field: 'recipients', limit: 'token_supply', maxAmount: max },
  )
}

/** DESIGN 7.18: the sender, then every recipient, before anything is built. A hit names the recipient, never the list. */
async function screen(deps: ServiceDeps, fromAddress: string, planned: readonly PlannedLeg[]): Promise<void> {
  const subjects: { index: number | 'sender'; field: string; address: string }[] = [
    { index: 'sender', field: 'fromAddress', address: fromAddress },
    ...planned.map((leg) => ({ index: leg.index, field: `recipients.${leg.index}.address`, address: leg.address })),
  ]
  const results = await Promise.all(subjects.map((subject) => deps.screener.screen(subject.address)))
  const hit = results.findIndex((result) => result.isListed)
  const subject = subjects[hit]
  const result = results[hit]
  if (!subject || !result?.isListed) return
  deps.log.warn(
    { event: 'address_screened', field: subject.field, address: subject.address.toLowerCase(), list: result.list },
    'address_screened',
  )
  const who = subject.index === 'sender' ? 'The sender (fromAddress)' : `Recipient ${subject.index}`
  throw new ServiceError(
    'address_screened',
    `${who} cannot be served: it failed compliance screening. No disbursement was built and nothing was charged.`,
    {
      field: subject.field,
      index: subject.index,
    },
  )
}

/** Runs one recipient's build; a ServiceError comes back naming that recipient. */
function atIndex<T>(index: number, recipient: DisburseRequest['recipients'][number], build: () => T): T {
  try {
    return build()
  } catch (error) {
    if (error instanceof ServiceError) throw atIndexError(index, recipient, error)
    throw error
  }
}

/** The per-swap field names of a leg's error, as the disbursement body names them. */
const LEG_FIELDS: Readonly<Record<string, string>> = { toChain: 'toChain', toToken: 'toToken', toAddress: 'address', fromAmount: 'amount' }

/** A leg's ServiceError with the recipient's `index`, its fields renamed to `recipients.<index>.<field>`. */
function atIndexError(index: number, recipient: DisburseRequest['recipients'][number], error: ServiceError): ServiceError {
  const rename = (field: unknown): unknown => {
    const leg = typeof field === 'string' ? LEG_FIELDS[field] : undefined
    return leg === undefined ? field : `recipients.${index}.${leg}`
  }
  const errors = error.detail['errors'] as FieldError[] | undefined
  const detail = {
    ...error.detail,
    ...(error.detail['field'] === undefined ? {} : { field: rename(error.detail['field']) }),
    ...(errors === undefined ? {} : { errors: errors.map((e) => ({ field: String(rename(e.field)), message: e.message })) }),
    index,
  }
  return new ServiceError(
    error.code,
    `Recipient ${index} (${recipient.amount} to ${recipient.toToken} on ${recipient.toChain}): ${error.message}`,
    detail,
    { cause: error },
  )
}

/** 400 on `recipients`: the legs need more gas together than one transaction may ask for (MAX_TRANSACTION_GAS). */
function pastGasCap(from: Token, legs: number, fitting: number, gas: bigint): ServiceError {
  const message = `the ${legs} legs need ${gas} gas on ${from.chain}, more than the ${MAX_TRANSACTION_GAS} one transaction may ask for (Ethereum's cap per transaction, EIP-7825, held on every chain); nodes refuse such a transaction. ${fitting > 0 ? `Split the batch: the first ${fitting} recipients fit in one` : 'Not even the first recipient fits in one: send it alone as a swap'}`
  return new ServiceError('invalid_request', `Not built, and nothing was charged: ${message}.`, {
    errors: [{ field: 'recipients', message }],
    recipientsWithinGasCap: fitting,
  })
}

function invalid(errors: FieldError[]): ServiceError {
  return new ServiceError(
    'invalid_request',
    `The request body failed validation: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`,
    { errors },
  )
}
