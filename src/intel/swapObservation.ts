import * as z from 'zod'
import { type Catalogue, parseUnitsExact } from '../engine/index.ts'
import { ChainCode } from '../schemas/catalogue.ts'
import type { SwapOutcome } from '../schemas/intelligence.ts'
import type { BuiltSwap, Observation } from '../store/createIntelStore.ts'
import { corridorPart, outcomePart } from './observationParts.ts'

/** What an observation needs of the QuoteResult stored with a swap: its bridge and the p50 duration it promised. */
const StoredQuote = z.object({
  bridge: z.string().min(1),
  estimatedDuration: z.number().int().min(0),
})

/**
 * The observation a completed swap becomes: its corridor and amount from the swap row, the bridge and quoted
 * duration from the quote it was built on, the outcome from the tracker. Its id is the swap ref, and it is dated
 * when the swap was built. Throws when the stored swap no longer matches the catalogue.
 */
export function swapObservation(catalogue: Catalogue, swap: BuiltSwap, outcome: SwapOutcome): Observation {
  const quote = StoredQuote.parse(swap.quote)
  const fromChain = ChainCode.parse(swap.fromChain)
  const toChain = ChainCode.parse(swap.toChain)
  const from = catalogue.tokens.get(`${fromChain}:${swap.fromToken}`)
  const to = catalogue.tokens.get(`${toChain}:${swap.toToken}`)
  if (from === undefined || to === undefined)
    throw new Error(`swap ${swap.ref}: ${swap.fromToken} on ${fromChain} or ${swap.toToken} on ${toChain} is no longer in the catalogue`)
  const amount = parseUnitsExact(swap.fromAmount, from.decimals, { strict: false })
  if (!amount.ok) throw new Error(`swap ${swap.ref}: from_amount ${swap.fromAmount} is not an amount of ${from.symbol}`)
  return {
    id: swap.ref,
    observedAt: new Date(swap.createdAt),
    ...corridorPart(from, to, { text: swap.fromAmount, atomic: amount.value }),
    bridge: quote.bridge,
    quotedDurationSec: quote.estimatedDuration,
    ...outcomePart(outcome),
    source: 'tracker',
  }
}
