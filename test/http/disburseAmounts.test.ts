import fc from 'fast-check'
import { decodeFunctionData, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiKeyClaims, signApiKey } from '../../src/auth/apiKey.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import { Problem } from '../../src/schemas/problem.ts'
import type { RouterOrder } from '../../src/tx/buildRouteTransaction.ts'
import { decimalToUnits, FROM_ADDRESS, KEY_SECRET, lazyMemoryStore, postJson, quoteBody, readJson, testApp } from './testApp.ts'

/**
 * Issue 15 item 3: every amount of a disbursement, and their sum, is bounded by what a uint256 and the source token
 * can hold (and a bridged leg by what its route carries), and the answer is 200 exactly when all of them are within
 * bounds, else a 400 or 422 naming the field; never a 5xx. The bounds are written out here as docs/money.md states
 * them, not read from the code under test.
 */

const PATH = '/api/v1/batch/disburse'
const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })
const claims: ApiKeyClaims = { v: 1, id: 'key_a0a0a0a0a0a0a0a0a0a0a0a0', tier: 'pro', iat: 1_795_000_000 }
const KEY = signApiKey(KEY_SECRET, claims)

/** USDC on Base: 6 decimals; one amount, and a batch, carries at most 10^12 USDC (docs/money.md). */
const DECIMALS = 6
const UNIT = 10n ** BigInt(DECIMALS)
const MAX_IN = 10n ** 12n * UNIT
const MAX_UINT256 = 2n ** 256n - 1n
/** The schema's longest amount text. */
const MAX_TEXT = 80

/** Atomic units as a decimal string with exactly `places` fraction digits (or none), as a client might write it. */
function decimalText(atomic: bigint, places: number): string {
  const whole = (atomic / UNIT).toString()
  if (places === 0) return whole
  return `${whole}.${(atomic % UNIT).toString().padStart(DECIMALS, '0').padEnd(places, '0').slice(0, places)}`
}

/** Atomic amounts within the bounds: 1 and 2 units, everyday sizes, the ceiling and the shares of it that sum past it. */
const boundedAtomic = fc.oneof(
  { weight: 2, arbitrary: fc.bigInt({ min: 1n, max: 10n ** 9n * UNIT }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(1n, 2n, UNIT, MAX_IN - 1n, MAX_IN, MAX_IN / 2n, MAX_IN / 2n + 1n, MAX_IN / 50n, MAX_IN / 50n + 1n),
  },
)

/** Above the ceiling but within uint256, then beyond what a uint256 holds (and 0): each on its own side of a bound. */
const aboveCeilingAtomic = fc.oneof(
  fc.constantFrom(MAX_IN + 1n, 2n ** 255n, MAX_UINT256 / 3n + 1n, MAX_UINT256 / 50n + 1n, MAX_UINT256 - 1n, MAX_UINT256),
  fc.bigInt({ min: MAX_IN + 1n, max: MAX_UINT256 }),
)
const invalidAtomic = fc.oneof(fc.constantFrom(0n, MAX_UINT256 + 1n), fc.bigInt({ min: MAX_UINT256 + 1n, max: 2n ** 260n }))

type Leg = { atomic: bigint; text: string; toChain: 'BAS' | 'POL' }

function canonical(atomic: bigint): string {
  const fraction = (atomic % UNIT).toString().padStart(DECIMALS, '0').replace(/0+$/, '')
  return fraction === '' ? (atomic / UNIT).toString() : `${atomic / UNIT}.${fraction}`
}

/** A leg of `atomic`: canonical text, trailing zeros up to 6 places, or (when `isExcessAllowed`) 7 to 9 places. */
function legOf(atomic: fc.Arbitrary<bigint>, isExcessAllowed: boolean): fc.Arbitrary<Leg> {
  const places = isExcessAllowed
    ? fc.oneof(
        { weight: 6, arbitrary: fc.constant(-1) },
        { weight: 3, arbitrary: fc.integer({ min: 0, max: 6 }) },
        fc.integer({ min: 7, max: 9 }),
      )
    : fc.oneof({ weight: 2, arbitrary: fc.constant(-1) }, fc.integer({ min: 0, max: 6 }))
  return fc
    .record({ atomic, places, toChain: fc.constantFrom('BAS', 'BAS', 'BAS', 'BAS', 'BAS', 'BAS', 'BAS', 'POL') })
    .map(({ atomic: value, places: count, toChain }) => {
      if (count === -1) return { atomic: value, text: canonical(value), toChain }
      // Fewer places than the amount needs would change it: keep the digits it has, add zeros (or excess) after.
      const needed = canonical(value).split('.')[1]?.length ?? 0
      return { atomic: value, text: decimalText(value, Math.max(count, needed)), toChain }
    })
}

const anyLeg = legOf(
  fc.oneof({ weight: 8, arbitrary: boundedAtomic }, { weight: 1, arbitrary: aboveCeilingAtomic }, { weight: 1, arbitrary: invalidAtomic }),
  true,
)
const boundedLeg = legOf(boundedAtomic, false)

/** 1 to 50 recipients: a few of any kind, the most a call takes of any kind, up to 50 within the bounds, or 45 to 50 everyday sizes. */
const legs = fc.oneof(
  { weight: 3, arbitrary: fc.array(anyLeg, { minLength: 1, maxLength: 6 }) },
  { weight: 1, arbitrary: fc.array(anyLeg, { minLength: 45, maxLength: 50 }) },
  { weight: 2, arbitrary: fc.array(boundedLeg, { minLength: 1, maxLength: 50 }) },
  { weight: 1, arbitrary: fc.array(legOf(fc.bigInt({ min: 2n, max: 10n ** 6n * UNIT }), false), { minLength: 45, maxLength: 50 }) },
)

const recipientAddress = (k: number): string => `0x${(k + 1).toString(16).padStart(40, '0')}`
const disbursement = (list: readonly Leg[]) => ({
  fromChain: 'BAS',
  fromToken: 'USDC',
  fromAddress: FROM_ADDRESS,
  recipients: list.map((l, k) => ({ address: recipientAddress(k), toChain: l.toChain, toToken: 'USDC', amount: l.text })),
})

/** What the free quote answers for USDC Base → Polygon at `text`: a bridged leg is carried exactly when it quotes. */
const bridgeVerdicts = new Map<string, number>()
async function bridgeQuotes(text: string): Promise<boolean> {
  let status = bridgeVerdicts.get(text)
  if (status === undefined) {
    const response = await postJson(
      app,
      '/api/x402/quote',
      quoteBody({ fromChain: 'BAS', toChain: 'POL', toToken: 'USDC', fromAmount: text }),
    )
    status = response.status
    bridgeVerdicts.set(text, status)
  }
  return status === 200
}

type Expected = { status: 200 } | { status: 400; fields: string[] } | { status: 422; field: string; limit: string; index?: number }

/** The answer the bounds call for, in the order the endpoint checks them (docs/endpoints.md). */
async function expected(list: readonly Leg[]): Promise<Expected> {
  const tooLong = list.flatMap((l, k) => (l.text.length > MAX_TEXT ? [`recipients.${k}.amount`] : []))
  if (tooLong.length > 0) return { status: 400, fields: tooLong }
  const isExact = (l: Leg): boolean => (l.text.split('.')[1]?.length ?? 0) <= DECIMALS
  const invalid = list.flatMap((l, k) => (!isExact(l) || l.atomic === 0n || l.atomic > MAX_UINT256 ? [`recipients.${k}.amount`] : []))
  const sum = list.filter((l) => isExact(l) && l.atomic <= MAX_UINT256).reduce((total, l) => total + l.atomic, 0n)
  if (sum > MAX_UINT256) invalid.push('recipients')
  if (invalid.length > 0) return { status: 400, fields: invalid }
  // One amount: more than the token holds, or (a transfer) so little the fee leaves nothing.
  for (const [k, l] of list.entries()) {
    if (l.atomic > MAX_IN) return { status: 422, field: `recipients.${k}.amount`, limit: 'token_supply', index: k }
    if (l.toChain === 'BAS' && l.atomic === 1n) return { status: 422, field: `recipients.${k}.amount`, limit: 'fee', index: k }
  }
  if (sum > MAX_IN) return { status: 422, field: 'recipients', limit: 'token_supply' }
  // A bridged leg is built like a swap of its amount: refused where the quote is, with the route's own limit.
  for (const [k, l] of list.entries())
    if (l.toChain === 'POL' && !(await bridgeQuotes(l.text)))
      return { status: 422, field: `recipients.${k}.amount`, limit: 'route', index: k }
  return { status: 200 }
}

describe('POST /api/v1/batch/disburse: amounts at the edges (property)', () => {
  const bridgeEdges: bigint[] = []
  beforeAll(async () => {
    // The bridge's own range joins the edges, so legs land on either side of it.
    const response = await postJson(
      app,
      '/api/x402/quote',
      quoteBody({ fromChain: 'BAS', toChain: 'POL', toToken: 'USDC', fromAmount: '0.000001' }),
    )
    const { viableRange } = Problem.parse(await readJson(response))
    expect(viableRange?.token).toBe('USDC')
    const min = decimalToUnits(viableRange?.min ?? '', DECIMALS)
    const max = decimalToUnits(viableRange?.max ?? '', DECIMALS)
    bridgeEdges.push(min - 1n, min, max, max + 1n)
  })

  it('is 200 exactly when every amount and the sum are within bounds, else 400 or 422 naming the field; never a 5xx', async () => {
    const bridgeLeg = fc.constantFrom(0, 1, 2, 3).map((k): Leg => {
      const atomic = bridgeEdges[k] ?? 0n
      return { atomic, text: canonical(atomic), toChain: 'POL' }
    })
    const withBridgeEdges = fc
      .tuple(legs, fc.option(bridgeLeg, { freq: 3 }))
      .map(([list, extra]) => (extra === null || list.length >= 50 ? list : [...list, extra]))
    await fc.assert(
      fc.asyncProperty(withBridgeEdges, async (list) => {
        const response = await postJson(app, PATH, disbursement(list), { 'x-swapeazi-key': KEY })
        const text = await response.text()
        const context = `${list.map((l) => `${l.toChain}:${l.text}`).join(', ')} -> ${response.status} ${text.slice(0, 600)}`
        const want = await expected(list)
        expect(response.status, context).toBe(want.status)
        const answer: unknown = JSON.parse(text)
        if (want.status === 400) {
          const problem = Problem.parse(answer)
          expect(problem.code, context).toBe('invalid_request')
          expect(new Set(problem.errors?.map((e) => e.field)), context).toEqual(new Set(want.fields))
          return
        }
        if (want.status === 422) {
          const problem = Problem.parse(answer)
          expect(problem, context).toMatchObject({ code: 'amount_out_of_range', field: want.field })
          if (want.index !== undefined) expect(problem['index'], context).toBe(want.index)
          if (want.limit === 'route') expect(['fee', 'bridge_minimum', 'bridge_maximum', 'liquidity'], context).toContain(problem.limit)
          else expect(problem.limit, context).toBe(want.limit)
          if (want.limit === 'token_supply') expect(problem.maxAmount, context).toBe('1000000000000')
          expect(problem.detail, context).toMatch(/Send (between|at least)|split the recipients/)
          return
        }
        // 200: every amount echoed exactly, and they add up to the totals, the approval and the orders' inputs.
        const result = DisbursementResult.parse(answer)
        const sum = list.reduce((total, l) => total + l.atomic, 0n)
        expect(
          result.items.map((item) => item.amount),
          context,
        ).toEqual(list.map((l) => canonical(l.atomic)))
        expect(decimalToUnits(result.totals.amount, DECIMALS), context).toBe(sum)
        expect(
          result.items.reduce((total, item) => total + decimalToUnits(item.amount, DECIMALS), 0n),
          context,
        ).toBe(sum)
        expect(BigInt(result.approval.amount), context).toBe(sum)
        const orders = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
          .args[0] as readonly RouterOrder[]
        expect(
          orders.map((order) => order.amountIn),
          context,
        ).toEqual(list.map((l) => l.atomic))
      }),
      { numRuns: 100 },
    )
  })
})
