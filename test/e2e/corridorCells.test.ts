import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { wrapFetchWithPayment } from 'x402-fetch'
import { decodeXPaymentResponse } from 'x402/shared'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { cellStatus, corridorPairs, formatAtomic, pow10, type TokenPair, viableRange } from '../../src/engine/index.ts'
import type { ChainCode, CorridorEntry } from '../../src/schemas/catalogue.ts'
import { CorridorsResponse } from '../../src/schemas/discovery.ts'
import { QuoteResult, UnsupportedPair } from '../../src/schemas/quote.ts'
import { SwapResult } from '../../src/schemas/swap.ts'
import { MANIFEST_DIR, PUBLIC_URL, get, lazyMemoryStore, postJson, quoteBody, readJson, testApp } from '../http/testApp.ts'

/**
 * Issue 14 item 10: every agent-callable corridor row × chain of the shipped manifest, through every pair the rule of
 * DESIGN 4 gives it, at the reference amount and at both ends of the viable range: the free quote and a paid build
 * (real x402-fetch, ledger settlement) agree. Both succeed, or both refuse with the same reason; nothing quotes and then
 * refuses to build.
 */

const QUOTE = '/api/x402/quote'
const SWAP = '/api/x402/swap'
const FEE = 20_000n
/** Whole tokens of the source the corridors are described at. */
const REFERENCE_UNITS = 1000n

const { catalogue } = loadCatalogue(MANIFEST_DIR)
// One store and one app for the file; the wall clock, because x402-fetch signs with the real time.
const store = lazyMemoryStore()
const app = testApp({ clock: Date.now, store })
afterAll(() => store.sql.close())

/** What an endpoint answered, reduced to what the two must agree on. */
type Outcome =
  | { kind: 'ok'; toAmount: string; toAmountMin: string }
  | { kind: 'unsupported'; reason?: string }
  | { kind: 'refused'; status: number; code: string }

type Combination = { pair: TokenPair; amount: string; label: string }

const describePair = ({ from, to }: TokenPair): string => `${from.symbol}@${from.chain} -> ${to.symbol}@${to.chain}`

function paramsOf({ pair, amount }: Combination, fromAddress: string): Record<string, unknown> {
  return quoteBody({
    fromChain: pair.from.chain,
    toChain: pair.to.chain,
    fromToken: pair.from.symbol,
    toToken: pair.to.symbol,
    fromAmount: amount,
    fromAddress,
  })
}

/** The reference amount clamped into the viable range, and both ends of it; the reference alone without a range. */
function amountsOf(pair: TokenPair): { amount: string; label: string }[] {
  const reference = REFERENCE_UNITS * pow10(pair.from.decimals)
  const range = viableRange(catalogue, pair.from, pair.to)
  const points: [string, bigint][] = range
    ? [
        ['reference', reference < range.minIn ? range.minIn : reference > range.maxIn ? range.maxIn : reference],
        ['min', range.minIn],
        ['max', range.maxIn],
      ]
    : [['reference (no viable range)', reference]]
  const seen = new Map<string, string>()
  for (const [label, atomic] of points) {
    const amount = formatAtomic(atomic, pair.from.decimals)
    seen.set(amount, seen.has(amount) ? `${seen.get(amount)}=${label}` : label)
  }
  return [...seen].map(([amount, label]) => ({ amount, label }))
}

async function freeQuote(combination: Combination, fromAddress: string): Promise<{ outcome: Outcome; body: unknown }> {
  const response = await postJson(app, QUOTE, paramsOf(combination, fromAddress))
  const body = await readJson(response)
  if (response.status === 200 && 'quoteId' in body) {
    const quote = QuoteResult.parse(body)
    return { outcome: { kind: 'ok', toAmount: quote.toAmount, toAmountMin: quote.toAmountMin }, body }
  }
  if (response.status === 200) {
    const unsupported = UnsupportedPair.parse(body)
    return { outcome: { kind: 'unsupported', ...(unsupported.notServed ? { reason: unsupported.notServed.reason } : {}) }, body }
  }
  return { outcome: { kind: 'refused', status: response.status, code: String(body['code']) }, body }
}

/** A paid build through x402-fetch 1.2.0 with a fresh payer, hence a fresh authorization and nonce. */
async function paidBuild(combination: Combination): Promise<{ outcome: Outcome; body: unknown; paid: boolean }> {
  const payer = privateKeyToAccount(generatePrivateKey())
  let paid = false
  const pay = wrapFetchWithPayment(
    (input, init) => {
      if (new Headers(init?.headers).get('x-payment') !== null) paid = true
      return Promise.resolve(app.request(String(input), init))
    },
    payer,
    FEE,
  )
  const response = await pay(`${PUBLIC_URL}${SWAP}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(paramsOf(combination, payer.address.toLowerCase())),
  })
  const body = await readJson(response)
  if (response.status === 200) {
    const result = SwapResult.parse(body)
    expect(result.transactionRequest.from.toLowerCase()).toBe(payer.address.toLowerCase())
    const receipt = decodeXPaymentResponse(response.headers.get('x-payment-response') ?? '')
    expect(receipt).toMatchObject({ success: true, payer: payer.address, transaction: `ledger:${result.swapEaziRef}` })
    return { outcome: { kind: 'ok', toAmount: result.toAmount, toAmountMin: result.toAmountMin }, body, paid }
  }
  expect(response.headers.get('x-payment-response')).toBeNull()
  return { outcome: { kind: 'refused', status: response.status, code: String(body['code']) }, body, paid }
}

/** Whether the two answers agree: both built (same amounts), or both refused for the same reason. */
function agree(quote: Outcome, build: Outcome): boolean {
  if (quote.kind === 'ok') return build.kind === 'ok' && build.toAmount === quote.toAmount && build.toAmountMin === quote.toAmountMin
  if (quote.kind === 'unsupported') return build.kind === 'refused' && build.status === 422 && build.code === 'no_route_found'
  return build.kind === 'refused' && build.status === quote.status && build.code === quote.code
}

/** A corridor row (with its index in the catalogue, the order /api/v1/corridors lists them in) on one of its chains. */
type Cell = { row: CorridorEntry; index: number; chain: ChainCode }

const cells: Cell[] = catalogue.corridors.flatMap((row, index) =>
  row.agentCallable ? row.chains.map((chain) => ({ row, index, chain })) : [],
)

describe('every agent-callable corridor cell: the free quote and a paid build agree', () => {
  it('walks rows × chains × pairs × {reference, min, max}', { timeout: 240_000 }, async () => {
    expect(cells.length).toBeGreaterThan(0)
    const fromAddress = privateKeyToAccount(generatePrivateKey()).address.toLowerCase()
    // One run per distinct pair and amount; a pair two cells share is asked once and counts for both.
    const results = new Map<string, { quote: Outcome; build: Outcome }>()
    const disagreements: string[] = []
    const quotedThenRefused: string[] = []
    let combinationsChecked = 0
    let cellsServed = 0
    const servedWithoutBuild: string[] = []
    const notServedCells: Cell[] = []

    for (const cell of cells) {
      const { row, chain } = cell
      const status = cellStatus(catalogue, row, chain)
      if (status.isServed) cellsServed += 1
      else notServedCells.push(cell)
      let built = 0
      for (const pair of corridorPairs(catalogue, row, chain)) {
        for (const { amount, label } of amountsOf(pair)) {
          const combination = { pair, amount, label }
          const key = `${pair.from.key}>${pair.to.key}@${amount}`
          let result = results.get(key)
          if (!result) {
            const quote = await freeQuote(combination, fromAddress)
            const build = await paidBuild(combination)
            result = { quote: quote.outcome, build: build.outcome }
            results.set(key, result)
            combinationsChecked += 1
            const what = `${row.from}->${row.to} on ${chain}: ${describePair(pair)} at ${amount} (${label})`
            if (!agree(quote.outcome, build.outcome)) {
              disagreements.push(`${what}\n  quote: ${JSON.stringify(quote.body)}\n  build: ${JSON.stringify(build.body)}`)
              if (quote.outcome.kind === 'ok' && build.outcome.kind !== 'ok') quotedThenRefused.push(what)
            }
            // x402-fetch pays only a 402 challenge: a build that can succeed is paid for, one refused up front is not.
            if (build.outcome.kind === 'ok') expect(build.paid, what).toBe(true)
          }
          if (result.quote.kind === 'ok' && result.build.kind === 'ok') built += 1
        }
      }
      if (status.isServed && built === 0) servedWithoutBuild.push(`${row.from}->${row.to} on ${chain}`)
    }

    const corridors = CorridorsResponse.parse(await readJson(await get(app, '/api/v1/corridors')))
    const missingReason = notServedCells.filter(({ row, index, chain }) => {
      const listed = corridors.corridors[index]
      expect(listed).toMatchObject({ from: row.from, to: row.to })
      const byChain = listed?.byChain.find((entry) => entry.chain === chain)
      return !byChain || byChain.live || byChain.notServed === undefined
    })

    const ok = [...results.values()].filter((result) => result.build.kind === 'ok').length
    console.log(
      `corridor cells: ${cells.length} agent-callable, ${cellsServed} served, ${notServedCells.length} not served; ` +
        `pairs × amounts checked: ${combinationsChecked} (${ok} built, ${combinationsChecked - ok} refused by both); ` +
        `quoted then refused: ${quotedThenRefused.length}`,
    )
    for (const { row, index, chain } of notServedCells) {
      const notServed = corridors.corridors[index]?.byChain.find((entry) => entry.chain === chain)?.notServed
      console.log(`not served: ${row.from}->${row.to} on ${chain}: ${notServed?.reason ?? 'no reason'} (${notServed?.detail ?? ''})`)
    }
    if (disagreements.length > 0) console.log(`disagreements:\n${disagreements.join('\n')}`)

    expect(cellsServed).toBeGreaterThan(0)
    expect(quotedThenRefused).toEqual([])
    expect(disagreements).toEqual([])
    expect(servedWithoutBuild).toEqual([])
    expect(missingReason.map(({ row, chain }) => `${row.from}->${row.to} on ${chain}`)).toEqual([])
  })
})
