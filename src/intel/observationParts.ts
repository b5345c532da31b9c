import { type CatalogueToken, usdValue } from '../engine/index.ts'
import type { SwapOutcome } from '../schemas/intelligence.ts'
import type { Observation } from '../store/createIntelStore.ts'
import { formatUsd } from './sizeBand.ts'

/** The corridor part of an observation: chains, canonical tokens, their currencies, and the amount with its USD value. */
export function corridorPart(
  from: CatalogueToken,
  to: CatalogueToken,
  amount: { text: string; atomic: bigint },
): Pick<Observation, 'fromChain' | 'toChain' | 'fromToken' | 'toToken' | 'fromCurrency' | 'toCurrency' | 'amount' | 'amountUsd'> {
  return {
    fromChain: from.chain,
    toChain: to.chain,
    fromToken: from.symbol,
    toToken: to.symbol,
    fromCurrency: from.currency,
    toCurrency: to.currency,
    amount: amount.text,
    amountUsd: formatUsd(usdValue(from, amount.atomic)),
  }
}

/** The outcome part: how the transfer ended, as an imported line or a tracker reports it. */
export function outcomePart(
  outcome: SwapOutcome,
): Pick<Observation, 'status' | 'substatus' | 'settledDurationSec' | 'realisedSlippageBps' | 'failureReason'> {
  return {
    status: outcome.status,
    substatus: outcome.substatus ?? null,
    settledDurationSec: outcome.settledDurationSec ?? null,
    realisedSlippageBps: outcome.realisedSlippageBps ?? null,
    failureReason: outcome.failureReason ?? null,
  }
}
