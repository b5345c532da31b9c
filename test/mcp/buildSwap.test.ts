import { decodeFunctionData, getAddress, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { utcDay } from '../../src/mcp/payer.ts'
import type { FetchLike } from '../../src/mcp/serviceClient.ts'
import type { ToolContext } from '../../src/mcp/tool.ts'
import { createToolContext } from '../../src/mcp/toolContext.ts'
import { createStore, type Store } from '../../src/store/createStore.ts'
import { migrate } from '../../src/store/migrations.ts'
import { openPostgresSql } from '../../src/store/openPostgresSql.ts'
import { PAY_TO, ROUTER_ADDRESS, lazyMemoryStore, quoteBody, testApp } from '../http/testApp.ts'
import { TEST_DATABASE_URL, dropSchema, uniqueSchemaName } from '../store/storeDrivers.ts'
import {
  type ConnectedClient,
  LEAK_PATTERNS,
  callTool,
  captureLogger,
  clientOver,
  connectInMemory,
  inProcessClient,
  textOf,
} from './mcpHarness.ts'

const FEE = 20_000n
const { log, lines: logLines } = captureLogger()
// One PGlite for the file (it opens slowly); every test pays from its own throwaway wallet, so counts never mix.
const store = lazyMemoryStore()
// The app verifies x402 authorizations against its clock, and x402-fetch signs with the wall clock.
const app = testApp({ clock: Date.now, store, log })
/** Every private key used and everything a tool answered, for the leak check at the end of the file. */
const keysUsed: string[] = []
const transcript: string[] = []
const opened: ConnectedClient[] = []
afterAll(async () => {
  for (const each of opened) await each.close()
  await store.sql.close()
})

type Wallet = { privateKey: `0x${string}`; address: `0x${string}` }
function throwawayWallet(): Wallet {
  const privateKey = generatePrivateKey()
  keysUsed.push(privateKey)
  return { privateKey, address: privateKeyToAccount(privateKey).address }
}

/** An MCP client whose build_swap pays from `wallet`, through `fetch` (default: the in-process app). */
async function payingClient(
  wallet: Wallet,
  options: {
    dailyBudgetAtomic?: bigint
    clock?: () => number
    fetch?: FetchLike
    on?: { app: ReturnType<typeof testApp>; store: Store }
  } = {},
): Promise<ConnectedClient> {
  const target = options.on ?? { app, store }
  const context: ToolContext = createToolContext({
    client: options.fetch === undefined ? inProcessClient(target.app) : clientOver(options.fetch),
    settings: { walletPrivateKey: wallet.privateKey, dailyBudgetAtomic: options.dailyBudgetAtomic ?? 1_000_000n },
    budget: target.store.budget,
    clock: options.clock ?? Date.now,
    log,
  })
  const connected = await connectInMemory(context, log)
  opened.push(connected)
  return connected
}

async function buildSwap(client: ConnectedClient, args: Record<string, unknown>): Promise<Awaited<ReturnType<typeof callTool>>> {
  const result = await callTool(client.client, 'build_swap', args)
  transcript.push(JSON.stringify(result))
  return result
}

async function paymentRows(on: Store, wallet: Wallet): Promise<{ status: string; value: string; pay_to: string; swap_ref: string }[]> {
  return on.sql.query(`select status, value::text as value, pay_to, swap_ref from x402_payments where payer = $1`, [
    wallet.address.toLowerCase(),
  ])
}

describe('build_swap end to end: pays the embedded server on the ledger', () => {
  it("returns a transaction that decodes to the router's execute for fromAmount, and a ledger receipt the store holds", async () => {
    const wallet = throwawayWallet()
    const client = await payingClient(wallet)
    const result = await buildSwap(client, quoteBody({ fromAmount: '250.5' }))
    expect(result.isError, textOf(result)).toBeFalsy()
    const swap = result.structuredContent as {
      swapEaziRef: string
      fromAmount: string
      toAddress: string
      toAmountMin: string
      transactionRequest: { chainId: number; from: string; to: string; data: `0x${string}`; value: string }
      approval: { token: string; spender: string; amount: string }
      payment: { success: boolean; transaction: string; network: string; payer: string }
      budget: { spentToday: string; dailyBudget: string; currency: string }
      fee: { agentCallFee: string }
      deadline: string
    }
    expect(swap.fromAmount).toBe('250.5')
    expect(swap.transactionRequest).toMatchObject({ chainId: 1, to: getAddress(ROUTER_ADDRESS), value: '0x0' })
    expect(swap.transactionRequest.from.toLowerCase()).toBe(quoteBody()['fromAddress'])

    const call = decodeFunctionData({ abi: swapEaziRouterAbi, data: swap.transactionRequest.data })
    if (call.functionName !== 'execute') throw new Error(`decoded ${call.functionName}, not execute`)
    const [order] = call.args
    expect(order.amountIn).toBe(parseUnits('250.5', 6)) // USDC has 6 decimals
    expect(order.amountIn).toBe(BigInt(swap.approval.amount))
    expect(order.tokenIn.toLowerCase()).toBe(swap.approval.token.toLowerCase())
    expect(order.recipient.toLowerCase()).toBe(swap.toAddress.toLowerCase())
    expect(swap.approval.spender.toLowerCase()).toBe(ROUTER_ADDRESS)

    expect(swap.payment).toEqual({
      success: true,
      transaction: `ledger:${swap.swapEaziRef}`,
      network: 'base',
      payer: wallet.address,
      settlement: 'ledger',
    })
    expect(swap.fee.agentCallFee).toBe('0.02')
    expect(swap.budget).toEqual({ spentToday: '0.02', dailyBudget: '1', currency: 'USDC' })
    expect(textOf(result)).toMatch(
      new RegExp(
        `^Built ${swap.swapEaziRef}: 250\\.5 USDC on ETH → [0-9.]+ USDT expected on ETH \\(the last of nextSteps says what is sure to arrive\\); the 0\\.02 USDC payment was recorded, not transferred \\(ledger:${swap.swapEaziRef}: this service's ledger holds the signed authorization\\)\\.`,
      ),
    )
    expect(textOf(result)).not.toContain('\n')
    // By when the user must sign: the order's deadline, in the structured result and in the summary.
    expect(BigInt(Date.parse(swap.deadline) / 1000)).toBe(order.deadline)
    expect(textOf(result)).toContain(`must be mined by ${swap.deadline}`)

    const stored = await store.getSwap(swap.swapEaziRef)
    expect(stored).toMatchObject({
      ref: swap.swapEaziRef,
      channel: 'x402',
      fromAmount: '250.5',
      payment: { payer: wallet.address.toLowerCase() },
    })
    expect(stored?.transactionRequest).toEqual(swap.transactionRequest)
    const payment = await store.getPayment(wallet.address, stored?.payment?.nonce ?? '')
    expect(payment).toMatchObject({
      status: 'settled',
      value: FEE,
      payTo: PAY_TO,
      swapRef: swap.swapEaziRef,
      transaction: `ledger:${swap.swapEaziRef}`,
      settlementMode: 'ledger',
    })
    expect(await store.budget.spent(wallet.address, utcDay(Date.now()))).toBe(FEE)
  })

  it("a swap the service refuses before the challenge costs nothing: isError with the service's reason, no payment, budget untouched", async () => {
    const wallet = throwawayWallet()
    const client = await payingClient(wallet)
    for (const [args, reason] of [
      [quoteBody({ toToken: 'DOGE' }), /^Not built and not paid: SwapEazi answered 422 \(unsupported_token\): DOGE is not listed on ETH/],
      [quoteBody({ fromChain: 'TRX', fromToken: 'USDT', toToken: 'USDC' }), /\(not_agent_callable\)/],
      [quoteBody({ fromAmount: '0.000001' }), /\(amount_out_of_range\).*Send between/],
    ] as const) {
      const result = await buildSwap(client, args)
      expect(result.isError).toBe(true)
      expect(result.structuredContent).toBeUndefined()
      expect(textOf(result)).toMatch(reason)
    }
    expect(await paymentRows(store, wallet)).toEqual([])
    expect(await store.budget.spent(wallet.address, utcDay(Date.now()))).toBe(0n)
  })

  it('a refused payment (the paid retry reaches a server with another payTo) gives the reservation back', async () => {
    const wallet = throwawayWallet()
    // The challenge comes from a server asking for another payTo; the signed retry reaches ours, which refuses it.
    const otherPayTo = '0x3333333333333333333333333333333333333333'
    const elsewhere = testApp({ clock: Date.now, store, log, payTo: otherPayTo })
    const split: FetchLike = async (input, init) => {
      const isPaid = Object.keys((init?.headers ?? {}) as Record<string, string>).some((name) => name.toLowerCase() === 'x-payment')
      return (isPaid ? app : elsewhere).fetch(new Request(input, init))
    }
    const client = await payingClient(wallet, { fetch: split })
    const result = await buildSwap(client, quoteBody())
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(textOf(result)).toBe(
      `Not built: the payment was refused (recipient_mismatch): The authorization pays ${getAddress(otherPayTo)}; it must pay ${PAY_TO}, the challenge's payTo. Nothing was charged.`,
    )
    expect(await store.budget.spent(wallet.address, utcDay(Date.now()))).toBe(0n)
    expect(await paymentRows(store, wallet)).toEqual([])
  })

  it('a lost answer after the payment was sent keeps the reservation and says not to call again', async () => {
    const wallet = throwawayWallet()
    const lostAfterPaying: FetchLike = async (input, init) => {
      const isPaid = Object.keys((init?.headers ?? {}) as Record<string, string>).some((name) => name.toLowerCase() === 'x-payment')
      if (isPaid) throw new TypeError('fetch failed: socket hang up')
      return app.fetch(new Request(input, init))
    }
    const client = await payingClient(wallet, { fetch: lostAfterPaying })
    const result = await buildSwap(client, quoteBody())
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(textOf(result)).toBe(
      `The USD 0.02 payment was sent but its outcome is unknown (fetch failed: socket hang up; the retry with the same payment: fetch failed: socket hang up). Do not call build_swap again for this swap right away: a new call signs a new payment. The budget counts this payment. Check the wallet's USDC transfers on Base, or ask the SwapEazi operator about payer ${wallet.address}.`,
    )
    expect(await store.budget.spent(wallet.address, utcDay(Date.now()))).toBe(FEE)
  })

  it('an answer lost after the swap was paid and recorded: the same payment once more gets that swap, charged once', async () => {
    const wallet = throwawayWallet()
    const paidRequests: string[] = []
    const loseFirstPaidAnswer: FetchLike = async (input, init) => {
      const headers = (init?.headers ?? {}) as Record<string, string>
      const payment = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-payment')?.[1]
      const response = await app.fetch(new Request(input, init))
      if (payment === undefined) return response
      paidRequests.push(payment)
      // The service answered (the swap is paid and recorded), and the answer is lost on the way back.
      if (paidRequests.length === 1) throw new TypeError('fetch failed: socket hang up')
      return response
    }
    const client = await payingClient(wallet, { fetch: loseFirstPaidAnswer })
    const result = await buildSwap(client, quoteBody())
    expect(result.isError, textOf(result)).toBeFalsy()
    expect(paidRequests).toHaveLength(2)
    expect(paidRequests[1]).toBe(paidRequests[0])
    const rows = await paymentRows(store, wallet)
    expect(rows).toHaveLength(1)
    expect(result.structuredContent).toMatchObject({ swapEaziRef: rows[0]?.swap_ref })
    expect(await store.budget.spent(wallet.address, utcDay(Date.now()))).toBe(FEE)
  })
})

type Driver = { name: string; open(): Promise<{ store: Store; cleanup(): Promise<void> }> }
const drivers: Driver[] = [
  { name: 'pglite', open: async () => ({ store, cleanup: async () => {} }) },
  ...(TEST_DATABASE_URL === undefined
    ? []
    : [
        {
          name: 'postgresql',
          async open() {
            const url = TEST_DATABASE_URL ?? ''
            const schema = uniqueSchemaName()
            const sql = await openPostgresSql(url, { schema })
            await migrate(sql)
            return {
              store: createStore(sql),
              cleanup: async () => {
                await sql.close()
                await dropSchema(url, schema)
              },
            }
          },
        },
      ]),
]

describe.each(drivers)('the daily budget on $name', (driver) => {
  it('20 concurrent build_swap calls against a budget of 5 fees: exactly 5 are paid, and the budget resets the next UTC day', async () => {
    const { store: on, cleanup } = await driver.open()
    try {
      const served = on === store ? app : testApp({ clock: Date.now, store: on, log })
      const wallet = throwawayWallet()
      // The payer's day is ours to move; the server's clock stays the wall clock, so signatures stay valid.
      let payerNow = Date.parse('2026-11-20T23:59:30Z')
      const client = await payingClient(wallet, { dailyBudgetAtomic: 5n * FEE, clock: () => payerNow, on: { app: served, store: on } })

      const results = await Promise.all(Array.from({ length: 20 }, () => buildSwap(client, quoteBody())))
      const paid = results.filter((result) => result.isError !== true)
      const refused = results.filter((result) => result.isError === true)
      expect(paid).toHaveLength(5)
      expect(refused).toHaveLength(15)
      for (const result of refused) {
        expect(result.structuredContent).toBeUndefined()
        expect(textOf(result)).toBe(
          "Not built and not paid: today's build_swap budget of 0.1 USDC leaves less than the 0.02 USDC a build costs (0.1 USDC spent so far, UTC day). It resets at 00:00 UTC, or the operator can raise SWAPEAZI_DAILY_BUDGET_USDC. get_quote stays free.",
        )
      }
      // With the budget spent, a request the service refuses anyway is told why, not that the budget is spent.
      const invalid = await buildSwap(client, quoteBody({ fromAmount: '0.0000001' }))
      expect(invalid.isError).toBe(true)
      expect(textOf(invalid)).not.toContain('budget')
      expect(textOf(invalid)).toContain('fromAmount')
      const refs = paid.map((result) => (result.structuredContent as { swapEaziRef: string }).swapEaziRef)
      expect(new Set(refs).size).toBe(5)
      expect(paid.map((result) => (result.structuredContent as { budget: { spentToday: string } }).budget.spentToday).sort()).toEqual([
        '0.02',
        '0.04',
        '0.06',
        '0.08',
        '0.1',
      ])
      const rows = await paymentRows(on, wallet)
      expect(rows).toHaveLength(5)
      expect(rows.every((row) => row.status === 'settled' && row.value === '20000' && row.pay_to === PAY_TO)).toBe(true)
      expect(await on.budget.spent(wallet.address, '2026-11-20')).toBe(5n * FEE)

      // Still the same day: refused without touching the service.
      expect((await buildSwap(client, quoteBody())).isError).toBe(true)
      // Past midnight UTC the wallet has its full budget again.
      payerNow = Date.parse('2026-11-21T00:00:05Z')
      const nextDay = await buildSwap(client, quoteBody())
      expect(nextDay.isError, textOf(nextDay)).toBeFalsy()
      expect(nextDay.structuredContent).toMatchObject({ budget: { spentToday: '0.02', dailyBudget: '0.1', currency: 'USDC' } })
      expect(await on.budget.spent(wallet.address, '2026-11-21')).toBe(FEE)
      expect(await on.budget.spent(wallet.address, '2026-11-20')).toBe(5n * FEE)
      expect(await paymentRows(on, wallet)).toHaveLength(6)
    } finally {
      await cleanup()
    }
  }, 60_000)
})

describe('the wallet key stays secret', () => {
  it('appears in no result text, structuredContent, error or log line of this file', () => {
    expect(keysUsed.length).toBeGreaterThanOrEqual(5)
    expect(transcript.length).toBeGreaterThan(20)
    // The app's and the payer's logs: paid swaps, refusals and the unknown outcome were all logged.
    const events = new Set(logLines.map((line) => (JSON.parse(line) as { event?: string }).event))
    for (const event of ['http_request', 'swap_paid', 'swap_paid_by_mcp', 'payment_rejected', 'payment_outcome_unknown'])
      expect(events).toContain(event)
    const everything = [...transcript, ...logLines].join('\n').toLowerCase()
    for (const key of keysUsed) expect(everything).not.toContain(key.slice(2).toLowerCase())
    for (const text of transcript) for (const leak of LEAK_PATTERNS) expect(text).not.toMatch(leak)
  })
})
