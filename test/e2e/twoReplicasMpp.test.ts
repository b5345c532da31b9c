import { Challenge, Receipt } from 'mppx'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATH_USD } from '../../src/payments/mpp/tempoConstants.ts'
import { quoteBody } from '../http/testApp.ts'
import { attributionMemo, pushCredential, sendTransfers, tempoClient } from '../payments/mppPayer.ts'
import { startTempoRpcStandIn, type TempoRpcStandIn } from '../payments/tempoRpcStandIn.ts'
import { TEST_DATABASE_URL, adminQuery, dropSchema, uniqueSchemaName, urlWithSearchPath } from '../store/storeDrivers.ts'
import { type Replica, startReplica } from './replicaProcess.ts'

const START_TIMEOUT_MS = 180_000
const TEST_TIMEOUT_MS = 90_000
const SWAP = '/api/mpp/swap'
const CHAIN_ID = 4217
const REALM = 'replicas.swapeazi.test'
const TEMPO_PAY_TO = '0x3333333333333333333333333333333333333333'
const REQUESTS_PER_REPLICA = 10

describe.skipIf(TEST_DATABASE_URL === undefined)('MPP on two server processes sharing one PostgreSQL', () => {
  const url = TEST_DATABASE_URL ?? ''
  const schema = uniqueSchemaName()
  const replicas: Replica[] = []
  const payer = privateKeyToAccount(generatePrivateKey())
  const body = quoteBody({ fromAddress: payer.address.toLowerCase() })
  let rpc: TempoRpcStandIn | undefined

  beforeAll(async () => {
    rpc = await startTempoRpcStandIn({ chainId: CHAIN_ID, token: PATH_USD })
    rpc.fund(payer.address, 1_000_000n)
    await adminQuery(url, `create schema ${schema}`)
    // No SWAPEAZI_MPP_SECRET_KEY: the replicas must agree on the one generated and kept in the store.
    const env = {
      SWAPEAZI_PORT: '0',
      SWAPEAZI_HOST: '127.0.0.1',
      DATABASE_URL: urlWithSearchPath(url, schema),
      SWAPEAZI_TEMPO_RPC_URL: rpc.url,
      SWAPEAZI_TEMPO_PAY_TO: TEMPO_PAY_TO,
      SWAPEAZI_MPP_REALM: REALM,
      // A router of the operator's own: MPP takes real money, which is never asked for swaps against the inert default.
      SWAPEAZI_ROUTER_ADDRESS: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e',
    }
    const started = await Promise.allSettled([startReplica({ env }), startReplica({ env })])
    for (const outcome of started) if (outcome.status === 'fulfilled') replicas.push(outcome.value)
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason
  }, START_TIMEOUT_MS)

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()))
    await rpc?.close()
    await dropSchema(url, schema)
  }, TEST_TIMEOUT_MS)

  const replica = (index: number): Replica => {
    const found = replicas[index]
    if (found === undefined) throw new Error(`replica ${index} did not start`)
    return found
  }
  const post = (index: number, headers: Record<string, string> = {}, request: object = body): Promise<Response> =>
    fetch(`${replica(index).url}${SWAP}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(request),
    })

  it(
    'takes a challenge from one replica and its payment on the other, 10 times to each at once: one swap, one claim, paid once',
    async () => {
      const unpaid = await post(0)
      expect(unpaid.status).toBe(402)
      const memo = attributionMemo(REALM, Challenge.fromResponse(unpaid).id)
      const balance = rpc?.balanceOf(payer.address) ?? 0n
      const hash = await sendTransfers(tempoClient(rpc?.url ?? '', CHAIN_ID), payer, [{ to: TEMPO_PAY_TO, amountAtomic: 20_000n, memo }])
      const authorization = pushCredential(unpaid, hash, payer.address, CHAIN_ID)

      const answers = await Promise.all(Array.from({ length: 2 * REQUESTS_PER_REPLICA }, (_, i) => post(i % 2, { authorization })))
      expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 2 * REQUESTS_PER_REPLICA }, () => 200))
      const refs = new Set(
        await Promise.all(answers.map(async (answer) => ((await answer.json()) as Record<string, unknown>)['swapEaziRef'])),
      )
      expect(refs.size).toBe(1)
      expect(new Set(answers.map((answer) => Receipt.fromResponse(answer).reference))).toEqual(new Set([hash]))

      const claims = await adminQuery<{ n: number }>(url, `select count(*)::int as n from ${schema}.mpp_payments where hash = $1`, [hash])
      expect(claims[0]?.n).toBe(1)
      const swaps = await adminQuery<{ channel: string }>(url, `select channel from ${schema}.swaps where ref = $1`, [[...refs][0]])
      expect(swaps).toEqual([{ channel: 'mpp' }])
      expect(rpc?.balanceOf(payer.address)).toBe(balance - 20_000n)

      // Another request with the same payment, on either replica: refused, naming the swap it bought.
      const other = await post(1, { authorization }, { ...body, fromAmount: '2000' })
      expect(other.status).toBe(402)
      const refused = (await other.json()) as Record<string, unknown>
      expect(refused['error']).toBe('payment_already_used')
      expect(String(refused['detail'])).toContain(String([...refs][0]))
    },
    TEST_TIMEOUT_MS,
  )
})
