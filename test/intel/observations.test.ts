import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { completeTrackedSwap } from '../../src/intel/completeTrackedSwap.ts'
import { ObservationImportError, importObservations } from '../../src/intel/importObservations.ts'
import { observationFromLine } from '../../src/intel/observationFromLine.ts'
import { ObservationLine, SwapOutcome } from '../../src/schemas/intelligence.ts'
import { QuoteParams } from '../../src/schemas/quote.ts'
import { buildSwapTransaction } from '../../src/service/buildSwapTransaction.ts'
import { newSwapRef } from '../../src/service/swapRef.ts'
import { swapRecordOf } from '../../src/service/swapRecordOf.ts'
import { FROM_ADDRESS, lazyMemoryStore, NOW_MS, testDeps } from '../http/testApp.ts'

export const FIXTURE = new URL('./fixtures/observations.jsonl', import.meta.url).pathname

const store = lazyMemoryStore()
const deps = testDeps({ store })
afterAll(() => store.sql.close())

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
const line = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: `0x${hex(32)}`,
  observedAt: '2026-11-10T10:00:00Z',
  fromChain: 'BAS',
  toChain: 'ARB',
  fromToken: 'USDC',
  toToken: 'USDC',
  bridge: 'across',
  amount: '1500.25',
  quotedDurationSec: 4,
  settledDurationSec: 6,
  realisedSlippageBps: 2,
  status: 'DONE',
  substatus: 'COMPLETED',
  ...overrides,
})
const firstIssue = (value: unknown): string | undefined => {
  const parsed = ObservationLine.safeParse(value)
  if (parsed.success) return undefined
  const issue = parsed.error.issues[0]
  return `${issue?.path.join('.')}: ${issue?.message}`
}
const countWhere = async (condition: string, params: unknown[] = []): Promise<number> => {
  const [row] = await store.sql.query<{ n: number }>(`select count(*)::int as n from observations where ${condition}`, params)
  return row?.n ?? -1
}

describe('ObservationLine', () => {
  it('takes LI.FI statuses with the substatuses each allows', () => {
    expect(firstIssue(line())).toBeUndefined()
    expect(
      firstIssue(line({ status: 'FAILED', substatus: 'SLIPPAGE_EXCEEDED', settledDurationSec: null, failureReason: 'moved' })),
    ).toBeUndefined()
    expect(firstIssue(line({ status: 'DONE', substatus: 'REFUNDED', settledDurationSec: undefined }))).toBeUndefined()
    expect(
      firstIssue(line({ status: 'PENDING', substatus: 'NOT_PROCESSABLE_REFUND_NEEDED', settledDurationSec: undefined })),
    ).toBeUndefined()
    expect(firstIssue(line({ status: 'NOT_FOUND', substatus: undefined }))).toBeUndefined()
  })

  it.each([
    [{ status: 'INVALID' }, 'status: Invalid option: expected one of "DONE"|"FAILED"|"PENDING"|"NOT_FOUND"'],
    [{ substatus: 'SLIPPAGE_EXCEEDED' }, 'substatus: must be one of COMPLETED, PARTIAL, REFUNDED when status is DONE'],
    [
      { status: 'FAILED', substatus: undefined },
      'substatus: must be one of INSUFFICIENT_ALLOWANCE, INSUFFICIENT_BALANCE, OUT_OF_GAS, EXPIRED, SLIPPAGE_EXCEEDED, UNKNOWN_FAILED_ERROR when status is FAILED',
    ],
    [{ status: 'NOT_FOUND', substatus: 'COMPLETED' }, 'substatus: must be absent when status is NOT_FOUND'],
    [{ settledDurationSec: undefined }, 'settledDurationSec: is required when the transfer was delivered (DONE, not REFUNDED)'],
    [{ amount: 1500 }, 'amount: Invalid input: expected string, received number'],
    [{ amount: '1e3' }, 'amount: must be a decimal string such as "1500.25"'],
    [{ amount: '-5' }, 'amount: must be a decimal string such as "1500.25"'],
    [{ observedAt: '2026-11-10' }, 'observedAt: Invalid ISO datetime'],
    [{ fromChain: 'bas' }, 'fromChain: Invalid option: expected one of "ETH"|"BAS"|"POL"|"ARB"|"OPT"|"BNB"|"GNO"|"CEL"|"SOL"|"TRX"'],
    [{ realisedSlippageBps: 1.5 }, 'realisedSlippageBps: Invalid input: expected int, received number'],
    [{ settledDurationSec: -1 }, 'settledDurationSec: Too small: expected number to be >=0'],
    [{ extra: true }, ': Unrecognized key: "extra"'],
  ])('refuses %o', (overrides, issue) => {
    expect(firstIssue(line(overrides))).toBe(issue)
  })
})

describe('observationFromLine', () => {
  const from = (overrides: Record<string, unknown>) => observationFromLine(deps.catalogue, ObservationLine.parse(line(overrides)))

  it("canonicalises symbols and bridge, and adds currencies and the USD value at the snapshot's prices", () => {
    expect(
      from({ fromToken: 'usdc', toToken: 'eurc', toChain: 'BAS', fromChain: 'ETH', bridge: 'CCTP-v2-fast', amount: '2000.5' }),
    ).toMatchObject({
      ok: true,
      observation: {
        fromToken: 'USDC',
        toToken: 'EURC',
        fromCurrency: 'USD',
        toCurrency: 'EUR',
        bridge: 'cctp-v2-fast',
        amount: '2000.5',
        amountUsd: '2000.5',
        source: 'import',
      },
    })
    // manifest/market.json: 1 EUR = 1.16 USD, and EURe at par with the euro.
    const eur = from({
      fromChain: 'GNO',
      fromToken: 'EURe',
      toChain: 'ETH',
      toToken: 'EURe',
      bridge: 'stargate-v2-taxi',
      amount: '100.000000000000000001',
    })
    expect(eur).toMatchObject({ ok: true, observation: { amount: '100.000000000000000001', amountUsd: '116', fromCurrency: 'EUR' } })
  })

  it.each([
    [{ fromToken: 'cKES' }, 'fromToken', 'cKES is not listed on BAS in the catalogue'],
    [{ toToken: 'EURe' }, 'toToken', 'EURe is not listed on ARB in the catalogue'],
    [
      { bridge: 'relay' },
      'bridge',
      'must be one of across, cctp-v2-fast, cctp-v2-standard, none, stargate-v2-bus, stargate-v2-taxi, usdt0-oft, usdt0-oft-legacy-mesh',
    ],
    [{ bridge: 'none' }, 'bridge', 'a transfer from BAS to ARB needs a bridge, not none'],
    [{ toChain: 'BAS', toToken: 'USDT' }, 'bridge', 'must be none for a same-chain swap'],
    [{ amount: '1.1234567' }, 'amount', 'has more than 6 fraction digits, the decimals of USDC'],
    [{ amount: '0.000' }, 'amount', 'must be greater than 0'],
  ])('refuses %o', (overrides, field, message) => {
    expect(from(overrides)).toEqual({ ok: false, field, message })
  })
})

describe('importObservations', () => {
  it('imports the sample file, then skips every line when it is imported again', async () => {
    const text = readFileSync(FIXTURE, 'utf8')
    const count = text.trim().split('\n').length
    expect(await importObservations(deps, text.split('\n'))).toEqual({ lines: count + 1, inserted: count, skipped: 0 })
    expect(await importObservations(deps, text.split('\n'))).toEqual({ lines: count + 1, inserted: 0, skipped: count })
    expect(await countWhere(`from_chain = 'BAS' and to_chain = 'ARB' and bridge = 'stargate-v2-taxi' and from_token = 'USDC'`)).toBe(4)
  })

  it('stops at the first bad line with its number and field, and writes nothing', async () => {
    const good = line()
    const lines = [JSON.stringify(good), '', JSON.stringify(line({ bridge: 'relay' })), JSON.stringify(line())]
    const failure = await importObservations(deps, lines).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(ObservationImportError)
    expect(failure).toMatchObject({
      line: 3,
      field: 'bridge',
      message: expect.stringMatching(/^line 3: bridge must be one of across, .*; nothing was imported$/),
    })
    expect(await countWhere('id = $1', [good['id']])).toBe(0)

    await expect(importObservations(deps, [JSON.stringify(good), '{"id":'])).rejects.toThrow(
      'line 2: (line) is not valid JSON; nothing was imported',
    )
    await expect(
      importObservations(deps, [JSON.stringify(line({ status: 'DONE', substatus: 'PARTIAL', settledDurationSec: null }))]),
    ).rejects.toThrow('line 1: settledDurationSec is required when the transfer was delivered (DONE, not REFUNDED); nothing was imported')
    expect(await countWhere('id = $1', [good['id']])).toBe(0)
  })

  it('takes a batch boundary in its stride: 2,500 lines in one transaction', async () => {
    const tag = hex(4)
    const lines = Array.from({ length: 2_500 }, (_, i) => JSON.stringify(line({ id: `${tag}-${i}`, settledDurationSec: i % 50 })))
    expect(await importObservations(deps, lines)).toEqual({ lines: 2_500, inserted: 2_500, skipped: 0 })
    expect(await countWhere(`left(id, 8) = $1`, [tag])).toBe(2_500)
  })
})

describe('completeTrackedSwap', () => {
  async function recordBuiltSwap(params: Record<string, unknown>): Promise<{ ref: string; bridge: string; estimatedDuration: number }> {
    const ref = newSwapRef(NOW_MS)
    const built = buildSwapTransaction(deps, { params: QuoteParams.parse(params), swapEaziRef: ref })
    const createdAt = new Date(NOW_MS - 60_000)
    const payer = `0x${hex(20)}`
    const recorded = await store.recordSettledSwap(
      {
        payer,
        nonce: `0x${hex(32)}`,
        value: 20_000n,
        asset: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
        payTo: '0x2222222222222222222222222222222222222222',
        validAfter: 0n,
        validBefore: 2n ** 40n,
        signature: `0x${hex(65)}`,
        settlementMode: 'ledger',
        swapRef: ref,
        reservedAt: createdAt,
      },
      { transaction: `ledger:${ref}`, settledAt: createdAt },
      swapRecordOf(built, 'x402', createdAt),
    )
    expect(recorded).toBe(true)
    return { ref, bridge: built.quote.bridge, estimatedDuration: built.quote.estimatedDuration }
  }

  it("turns a built cross-chain swap into an observation of its corridor, with the quote's bridge and duration", async () => {
    const swap = await recordBuiltSwap({
      fromChain: 'BAS',
      toChain: 'OPT',
      fromToken: 'USDC',
      toToken: 'USDC',
      fromAmount: '2500.5',
      fromAddress: FROM_ADDRESS,
    })
    expect(swap.bridge).not.toBe('none')
    expect((await store.intel.pendingSwaps({ createdBefore: new Date(NOW_MS), limit: 100 })).map((p) => p.ref)).toContain(swap.ref)
    const result = await completeTrackedSwap(
      deps,
      swap.ref,
      SwapOutcome.parse({ status: 'DONE', substatus: 'COMPLETED', settledDurationSec: 9, realisedSlippageBps: -1 }),
    )
    expect(result).toEqual({
      ok: true,
      swapStatus: 'done',
      observation: {
        id: swap.ref,
        observedAt: new Date(NOW_MS - 60_000),
        fromChain: 'BAS',
        toChain: 'OPT',
        fromToken: 'USDC',
        toToken: 'USDC',
        fromCurrency: 'USD',
        toCurrency: 'USD',
        bridge: swap.bridge,
        amount: '2500.5',
        amountUsd: '2500.5',
        quotedDurationSec: swap.estimatedDuration,
        settledDurationSec: 9,
        realisedSlippageBps: -1,
        status: 'DONE',
        substatus: 'COMPLETED',
        failureReason: null,
        source: 'tracker',
      },
    })
    expect(await countWhere(`id = $1 and source = 'tracker' and bridge = $2`, [swap.ref, swap.bridge])).toBe(1)
    expect((await store.intel.pendingSwaps({ createdBefore: new Date(NOW_MS), limit: 100 })).map((p) => p.ref)).not.toContain(swap.ref)
    expect(await completeTrackedSwap(deps, swap.ref, { status: 'NOT_FOUND' })).toEqual({ ok: false, reason: 'not_pending', status: 'done' })
  })

  it('records a same-chain swap as bridge none, and a failure with its reason', async () => {
    const swap = await recordBuiltSwap({
      fromChain: 'ETH',
      toChain: 'ETH',
      fromToken: 'USDC',
      toToken: 'USDT',
      fromAmount: '1000',
      fromAddress: FROM_ADDRESS,
    })
    const result = await completeTrackedSwap(deps, swap.ref, {
      status: 'FAILED',
      substatus: 'SLIPPAGE_EXCEEDED',
      failureReason: 'pool moved',
    })
    expect(result).toMatchObject({
      ok: true,
      swapStatus: 'failed',
      observation: {
        bridge: 'none',
        status: 'FAILED',
        substatus: 'SLIPPAGE_EXCEEDED',
        failureReason: 'pool moved',
        settledDurationSec: null,
      },
    })
    expect((await store.getSwap(swap.ref))?.status).toBe('failed')
  })

  it('refuses PENDING and an outcome outside the taxonomy before touching the swap', async () => {
    const swap = await recordBuiltSwap({
      fromChain: 'ARB',
      toChain: 'BAS',
      fromToken: 'USDC',
      toToken: 'USDC',
      fromAmount: '300',
      fromAddress: FROM_ADDRESS,
    })
    await expect(completeTrackedSwap(deps, swap.ref, { status: 'PENDING', substatus: 'WAIT_DESTINATION_TRANSACTION' })).rejects.toThrow(
      'PENDING is not an outcome',
    )
    await expect(completeTrackedSwap(deps, swap.ref, { status: 'DONE', substatus: 'COMPLETED' })).rejects.toThrow('settledDurationSec')
    expect((await store.getSwap(swap.ref))?.status).toBe('built')
    expect(await completeTrackedSwap(deps, 'swp_0000000000000000', { status: 'NOT_FOUND' })).toEqual({ ok: false, reason: 'not_found' })
  })
})
