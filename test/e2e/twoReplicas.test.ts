import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeXPaymentResponse } from 'x402/shared'
import { SwapResult } from '../../src/schemas/swap.ts'
import { quoteBody } from '../http/testApp.ts'
import { signPayment } from '../payments/signPayment.ts'
import { TEST_DATABASE_URL, adminQuery, dropSchema, uniqueSchemaName, urlWithSearchPath } from '../store/storeDrivers.ts'
import { type Replica, startReplica } from './replicaProcess.ts'

const START_TIMEOUT_MS = 180_000
const TEST_TIMEOUT_MS = 90_000
const SWAP = '/api/x402/swap'
const PAY_TO = '0x2222222222222222222222222222222222222222'
const QUOTE_SECRET = 'two-replicas-share-this-quote-secret'
const REQUESTS_PER_REPLICA = 20

const nowSec = (): number => Math.floor(Date.now() / 1000)

type Answer = { replica: number; status: number; body: Record<string, unknown>; receipt: string | null }

describe.skipIf(TEST_DATABASE_URL === undefined)('two server processes on one PostgreSQL', () => {
  const url = TEST_DATABASE_URL ?? ''
  const schema = uniqueSchemaName()
  const replicas: Replica[] = []
  const payer = privateKeyToAccount(generatePrivateKey())
  const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
  /** Which replica answered 200 to the shared payment (the other one is asked next). */

  beforeAll(async () => {
    await adminQuery(url, `create schema ${schema}`)
    // Both replicas start (and migrate) at once on the same schema, chosen through the URL as an operator would.
    const env = {
      SWAPEAZI_PORT: '0',
      SWAPEAZI_HOST: '127.0.0.1',
      DATABASE_URL: urlWithSearchPath(url, schema),
      SWAPEAZI_PAY_TO: PAY_TO,
      // A router of the operator's own: a ledger to a real wallet is money, never asked for swaps against the inert one.
      SWAPEAZI_ROUTER_ADDRESS: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e',
      SWAPEAZI_QUOTE_SECRET: QUOTE_SECRET,
      SWAPEAZI_LOG_LEVEL: 'info',
    }
    const started = await Promise.allSettled([startReplica({ env }), startReplica({ env })])
    for (const outcome of started) if (outcome.status === 'fulfilled') replicas.push(outcome.value)
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason
  }, START_TIMEOUT_MS)

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()))
    await dropSchema(url, schema)
  }, TEST_TIMEOUT_MS)

  const replica = (index: number): Replica => {
    const found = replicas[index]
    if (found === undefined) throw new Error(`replica ${index} did not start`)
    return found
  }

  async function post(index: number, xPayment: string, request: object = body): Promise<Answer> {
    const response = await fetch(`${replica(index).url}${SWAP}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payment': xPayment },
      body: JSON.stringify(request),
    })
    return {
      replica: index,
      status: response.status,
      body: (await response.json()) as Record<string, unknown>,
      receipt: response.headers.get('x-payment-response'),
    }
  }

  const rows = <Row extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<Row[]> =>
    adminQuery<Row>(url, text, params)

  it(
    'charges one payment sent 20 times to each at once exactly once: every answer is the one swap it bought',
    async () => {
      const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
      const answers = await Promise.all(Array.from({ length: 2 * REQUESTS_PER_REPLICA }, (_, i) => post(i % 2, header)))

      // Whichever request won the payment, the others are its retries: the same swap and the same receipt.
      expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 2 * REQUESTS_PER_REPLICA }, () => 200))
      const refs = new Set(answers.map((answer) => SwapResult.parse(answer.body).swapEaziRef))
      expect(refs.size).toBe(1)
      const [first] = answers
      if (first === undefined) throw new Error('no answer')
      const result = SwapResult.parse(first.body)
      for (const answer of answers)
        expect(decodeXPaymentResponse(answer.receipt ?? '')).toMatchObject({
          success: true,
          transaction: `ledger:${result.swapEaziRef}`,
          payer: payer.address,
        })

      const payments = await rows(`select payer, status, swap_ref, transaction from ${schema}.x402_payments`)
      expect(payments).toEqual([
        {
          payer: payer.address.toLowerCase(),
          status: 'settled',
          swap_ref: result.swapEaziRef,
          transaction: `ledger:${result.swapEaziRef}`,
        },
      ])
      const swaps = await rows(`select ref, payer, from_address from ${schema}.swaps`)
      expect(swaps).toEqual([{ ref: result.swapEaziRef, payer: payer.address.toLowerCase(), from_address: payer.address.toLowerCase() }])
    },
    TEST_TIMEOUT_MS,
  )

  it(
    'serves on both: a fresh payment on the other replica gets 200',
    async () => {
      const other = 1
      const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: nowSec() })
      const answer = await post(other, header)
      expect({ status: answer.status, error: answer.body['error'] }).toEqual({ status: 200, error: undefined })
      const { swapEaziRef } = SwapResult.parse(answer.body)

      const settled = await rows<{ swap_ref: string }>(
        `select swap_ref from ${schema}.x402_payments where status = 'settled' order by reserved_at, swap_ref`,
      )
      expect(settled).toHaveLength(2)
      expect(settled.map((row) => row.swap_ref)).toContain(swapEaziRef)
      expect(await rows(`select count(*)::int as n from ${schema}.swaps`)).toEqual([{ n: 2 }])
      // They share the ledger: on the first replica, the same payment gets the swap the second built, and cannot buy
      // another one.
      const retry = await post(1 - other, header)
      expect([retry.status, retry.body['swapEaziRef']]).toEqual([200, swapEaziRef])
      const replay = await post(1 - other, header, { ...body, fromAmount: '3' })
      expect([replay.status, replay.body['error']]).toEqual([402, 'payment_already_used'])
    },
    TEST_TIMEOUT_MS,
  )
})
