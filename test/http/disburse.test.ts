import { type Address, decodeFunctionData, getAddress, type Hex, hexToBigInt, stringToHex } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { type ApiKeyClaims, signApiKey } from '../../src/auth/apiKey.ts'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { swapEaziRouterAbi } from '../../src/contracts/routerArtifact.ts'
import { DisbursementResult } from '../../src/schemas/disburse.ts'
import type { RouterOrder } from '../../src/tx/buildRouteTransaction.ts'
import {
  decimalToUnits,
  FROM_ADDRESS,
  KEY_SECRET,
  lazyMemoryStore,
  MANIFEST_DIR,
  NOW_MS,
  postJson,
  readJson,
  ROUTER_ADDRESS,
  testApp,
} from './testApp.ts'

const PATH = '/api/v1/batch/disburse'
const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })

const claims: ApiKeyClaims = { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: 1_795_000_000 }
const KEY = signApiKey(KEY_SECRET, claims)
const listed = loadSanctionsList(`${MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`).addresses[0] ?? ''

const recipient = (n: number): string => `0x${n.toString(16).padStart(40, '0')}`
type Recipient = { address: string; toChain: string; toToken: string; amount: string }
const transfers = (count: number, amount = '1'): Recipient[] =>
  Array.from({ length: count }, (_, k) => ({ address: recipient(k + 1), toChain: 'BAS', toToken: 'USDC', amount }))
const body = (recipients: unknown, overrides: Record<string, unknown> = {}) => ({
  fromChain: 'BAS',
  fromToken: 'USDC',
  fromAddress: FROM_ADDRESS,
  recipients,
  ...overrides,
})
/** POSTs with the test key, or with `key` (null: none at all). */
const post = (payload: unknown, key: string | null = KEY) => postJson(app, PATH, payload, key === null ? {} : { 'x-swapeazi-key': key })

describe('POST /api/v1/batch/disburse: the key comes first', () => {
  it.each([
    ['missing', null, 'missing'],
    ['empty', '', 'missing'],
    ['malformed', 'se_nope', 'malformed'],
    [
      'forged (signed with another secret)',
      signApiKey(new TextEncoder().encode('a-forger-secret-a-forger-secret!!'), claims),
      'bad_signature',
    ],
    [
      'altered tier (claims rewritten to pro, MAC kept)',
      `se_${Buffer.from(JSON.stringify({ ...claims, tier: 'pro' })).toString('base64url')}.${KEY.split('.')[1]}`,
      'bad_signature',
    ],
  ])('%s key: 401 invalid_key, before the body is read', async (_name, key, reason) => {
    const response = await post({ not: 'a disbursement' }, key)
    expect(response.status).toBe(401)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_key', reason, status: 401 })
  })

  it('takes the key as a Bearer token too, as every /api/v1 route does', async () => {
    const response = await postJson(app, PATH, body(transfers(1)), { authorization: `Bearer ${KEY}` })
    expect(response.status, await response.clone().text()).toBe(200)
    expect(DisbursementResult.parse(await readJson(response)).items).toHaveLength(1)
  })

  it('revoked key: 401 invalid_key naming the revocation', async () => {
    const revoked: ApiKeyClaims = { ...claims, id: 'key_ffffffffffffffffffffffff' }
    await store.keys.revoke(revoked.id, new Date())
    const response = await post(body(transfers(1)), signApiKey(KEY_SECRET, revoked))
    expect(response.status).toBe(401)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_key', reason: 'revoked' })
  })
})

describe('400: the body', () => {
  it.each([
    ['no recipients', 0],
    ['51 recipients', 51],
  ])('%s: invalid_request naming the 1 to 50 limit', async (_name, count) => {
    const response = await post(body(transfers(count)))
    expect(response.status).toBe(400)
    const problem = await readJson<{ detail: string; errors: { field: string; message: string }[] }>(response)
    expect(problem).toMatchObject({ code: 'invalid_request' })
    expect(problem.errors).toEqual([{ field: 'recipients', message: 'must list 1 to 50 recipients (at most 50 per call)' }])
    expect(problem.detail).toMatch(/1 to 50 recipients/)
  })

  it.each([
    ['an exponent', '1e3'],
    ['a sign', '-1'],
    ['spaces', ' 1'],
    ['a number instead of a string', 1],
    ['a trailing dot', '1.'],
  ])("an amount with %s: 400 naming the recipient's field", async (_name, amount) => {
    const response = await post(body([...transfers(2), { ...transfers(1)[0], amount }]))
    expect(response.status).toBe(400)
    const problem = await readJson<{ errors: { field: string }[] }>(response)
    expect(problem.errors.map((error) => error.field)).toEqual(['recipients.2.amount'])
  })

  it('zero, and more fraction digits than the source token has (never rounded): every bad field at once', async () => {
    const recipients = [
      ...transfers(1),
      { ...transfers(1)[0], amount: '0' },
      { address: recipient(9), toChain: 'POL', toToken: 'USDC', amount: '1.0000001' },
    ]
    const response = await post(body(recipients))
    expect(response.status).toBe(400)
    expect(await readJson(response)).toMatchObject({
      code: 'invalid_request',
      errors: [
        { field: 'recipients.1.amount', message: 'must be greater than 0' },
        { field: 'recipients.2.amount', message: 'USDC on BAS has 6 decimals; send at most 6 fraction digits' },
      ],
    })
  })

  it('a bad checksum, an unknown field, a bad address: each named', async () => {
    const badChecksum = '0xAbCdEf0000000000000000000000000000000000'
    const checksum = await post(body([...transfers(1), { ...transfers(1)[0], address: badChecksum }]))
    expect(checksum.status).toBe(400)
    expect(await readJson(checksum)).toMatchObject({ errors: [{ field: 'recipients.1.address' }] })
    const unknown = await post(body([{ ...transfers(1)[0], memo: 'hi' }]))
    expect(unknown.status).toBe(400)
    expect(await readJson(unknown)).toMatchObject({ errors: [{ field: 'recipients.0' }] })
    const short = await post(body([{ ...transfers(1)[0], address: '0x1234' }]))
    expect(short.status).toBe(400)
    expect(await readJson(short)).toMatchObject({ errors: [{ field: 'recipients.0.address' }] })
  })
})

describe('403: screening names the recipient, never the list', () => {
  it.each([
    ['a recipient', body([...transfers(2), { ...transfers(1)[0], address: listed }]), 2, 'recipients.2.address'],
    ['the sender', body(transfers(2), { fromAddress: listed }), 'sender', 'fromAddress'],
  ])('%s on the list: 403 address_screened with its index', async (_name, payload, index, field) => {
    const response = await post(payload)
    expect(response.status).toBe(403)
    const problem = await readJson(response)
    expect(problem).toMatchObject({ code: 'address_screened', index, field })
    expect(JSON.stringify(problem)).not.toMatch(/ofac|sdn|sanction/i)
  })
})

describe('422: a recipient that cannot be served is named by its index, with the code the swap path uses', () => {
  it.each([
    ['an unlisted token', { toChain: 'BAS', toToken: 'DOGE', amount: '10' }, 'unsupported_token', { field: 'recipients.1.toToken' }],
    [
      'a chain agents cannot call',
      { toChain: 'SOL', toToken: 'USDC', amount: '10' },
      'not_agent_callable',
      { field: 'recipients.1.toChain' },
    ],
    [
      'too little to bridge',
      { toChain: 'POL', toToken: 'USDC', amount: '0.01' },
      'amount_out_of_range',
      { viableRange: { min: '1.005026', token: 'USDC' } },
    ],
    [
      'a transfer the fee would eat',
      { toChain: 'BAS', toToken: 'USDC', amount: '0.000001' },
      'amount_out_of_range',
      { viableRange: { min: '0.000002', token: 'USDC' } },
    ],
    [
      'a destination no route reaches from the source chain',
      { toChain: 'CEL', toToken: 'cKES', amount: '100' },
      'no_route_found',
      { notServed: { reason: 'no_route' } },
    ],
  ])('%s', async (_name, leg, code, extra) => {
    const response = await post(body([...transfers(1), { address: recipient(7), ...leg }]))
    expect(response.status).toBe(422)
    const problem = await readJson<{ detail: string }>(response)
    expect(problem).toMatchObject({ code, index: 1, ...extra })
    expect(problem.detail).toMatch(/^Recipient 1 /)
  })

  it('an unlisted source token: 422 unsupported_token on fromToken, no index', async () => {
    const response = await post(body(transfers(1), { fromToken: 'ZARP' }))
    expect(response.status).toBe(422)
    const problem = await readJson(response)
    expect(problem).toMatchObject({ code: 'unsupported_token', field: 'fromToken' })
    expect(problem).not.toHaveProperty('index')
  })
})

describe('200: one executeBatch transaction paying every recipient', () => {
  const recipients: Recipient[] = [
    { address: recipient(1), toChain: 'BAS', toToken: 'usdc', amount: '100' },
    { address: recipient(2), toChain: 'BAS', toToken: 'EURC', amount: '0200.50' },
    { address: recipient(3), toChain: 'POL', toToken: 'USDC', amount: '300' },
    { address: recipient(4), toChain: 'ARB', toToken: 'USDT', amount: '400.000001' },
    { address: recipient(5), toChain: 'BAS', toToken: 'USDC', amount: '0.000199' },
  ]

  it('answers the legs, their totals and a transaction whose orders carry exactly each amount, and records it', async () => {
    const response = await post(body(recipients, { fromToken: 'usdc' }))
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    const result = DisbursementResult.parse(await readJson(response))
    expect(result).toMatchObject({ status: 'built', fromChain: 'BAS', fromToken: 'USDC', fromAddress: getAddress(FROM_ADDRESS) })
    expect(result.items.map((item) => [item.index, item.address, item.toChain, item.toToken, item.amount, item.kind])).toEqual([
      [0, getAddress(recipient(1)), 'BAS', 'USDC', '100', 'transfer'],
      [1, getAddress(recipient(2)), 'BAS', 'EURC', '200.5', 'swap'],
      [2, getAddress(recipient(3)), 'POL', 'USDC', '300', 'bridge'],
      [3, getAddress(recipient(4)), 'ARB', 'USDT', '400.000001', 'bridge'],
      [4, getAddress(recipient(5)), 'BAS', 'USDC', '0.000199', 'transfer'],
    ])
    const usdc = (text: string): bigint => decimalToUnits(text, 6)
    // Fees: 0.5% of each amount, rounded up; a transfer delivers exactly the rest.
    for (const item of result.items) expect(usdc(item.fee)).toBe((usdc(item.amount) * 50n + 9_999n) / 10_000n)
    expect(result.items[4]).toMatchObject({ fee: '0.000001', toAmount: '0.000198', toAmountMin: '0.000198', bridge: 'none' })
    expect(result.items[0]).toMatchObject({ fee: '0.5', toAmount: '99.5', toAmountMin: '99.5' })
    expect(result.totals).toEqual({ amount: '1000.5002', fee: '5.002502', recipients: 5 })
    expect(usdc(result.totals.amount)).toBe(result.items.reduce((sum, item) => sum + usdc(item.amount), 0n))
    expect(usdc(result.totals.fee)).toBe(result.items.reduce((sum, item) => sum + usdc(item.fee), 0n))
    expect(result.disbursementRef).toMatch(/^dsb_[0-9A-Z]{26}$/)

    const tx = result.transactionRequest
    expect(tx).toMatchObject({ chainId: 8453, from: getAddress(FROM_ADDRESS), to: getAddress(ROUTER_ADDRESS) })
    const { functionName, args } = decodeFunctionData({ abi: swapEaziRouterAbi, data: tx.data as Hex })
    expect(functionName).toBe('executeBatch')
    const orders = args[0] as readonly RouterOrder[]
    expect(orders.map((order) => [order.recipient, order.amountIn])).toEqual(result.items.map((item) => [item.address, usdc(item.amount)]))
    const total = orders.reduce((sum, order) => sum + order.amountIn, 0n)
    expect(total).toBe(usdc(result.totals.amount))
    expect(BigInt(result.approval.amount)).toBe(total)
    expect(result.approval).toMatchObject({ spender: getAddress(ROUTER_ADDRESS), resetFirst: false })
    for (const order of orders) expect(order.ref).toBe(stringToHex(result.disbursementRef, { size: 32 }))
    // Transfers are calls-free orders whose floor is exactly toAmount; the value is the legs' native fees.
    for (const k of [0, 4])
      expect(orders[k]).toMatchObject({ calls: [], fee: usdc(result.items[k]!.fee), minOut: usdc(result.items[k]!.toAmount) })
    expect(hexToBigInt(tx.value as Hex)).toBe(orders.reduce((sum, order) => sum + order.calls.reduce((s, call) => s + call.value, 0n), 0n))
    expect(result.nextSteps[0]).toMatch(/approve 1000\.5002 USDC/)
    // Every order carries its deadline, ten minutes on; the batch runs until the earliest of them, and says so.
    for (const order of orders) expect(order.deadline).toBe(BigInt(NOW_MS / 1000 + 600))
    expect(result.deadline).toBe(new Date(NOW_MS + 600_000).toISOString())
    expect(result.nextSteps[1]).toContain(`mined by ${result.deadline}`)

    const stored = await store.disbursements.getDisbursement(result.disbursementRef)
    expect(stored).toMatchObject({
      ref: result.disbursementRef,
      fromChain: 'BAS',
      fromToken: 'USDC',
      fromAddress: FROM_ADDRESS,
      keyId: claims.id,
      items: result.items,
      totals: result.totals,
      transactionRequest: result.transactionRequest,
    })
    // Every leg that is not a plain transfer is a swap a tracker can complete; transfers are not.
    const legs = await store.sql.query<{ ref: string; channel: string; key_id: string; to_address: string; from_amount: string }>(
      `select ref, channel, key_id, to_address, from_amount from swaps where ref like $1 order by ref`,
      [`${result.disbursementRef}.%`],
    )
    const routed = result.items.filter((item) => item.kind !== 'transfer')
    expect(routed.length).toBeGreaterThan(0)
    expect(legs).toEqual(
      routed
        .map((item) => ({
          ref: `${result.disbursementRef}.${item.index}`,
          channel: 'disbursement',
          key_id: claims.id,
          to_address: item.address.toLowerCase(),
          from_amount: item.amount,
        }))
        .sort((x, y) => x.ref.localeCompare(y.ref)),
    )
    expect((await store.intel.pendingSwaps({ createdBefore: new Date(NOW_MS + 1), limit: 1000 })).map((p) => p.ref)).toEqual(
      expect.arrayContaining(legs.map((l) => l.ref)),
    )
  })

  it('50 recipients is the most: one order each, and the sum is the approval', async () => {
    const response = await post(body(transfers(50, '2.000001')))
    expect(response.status).toBe(200)
    const result = DisbursementResult.parse(await readJson(response))
    const orders = decodeFunctionData({ abi: swapEaziRouterAbi, data: result.transactionRequest.data as Hex })
      .args[0] as readonly RouterOrder[]
    expect(orders).toHaveLength(50)
    expect(new Set(orders.map((order) => order.recipient as Address)).size).toBe(50)
    expect(result.approval.amount).toBe(String(50n * 2_000_001n))
    expect(result.totals).toEqual({ amount: '100.00005', fee: '0.50005', recipients: 50 })
  })

  it("refuses legs whose gas together is above one transaction's cap (2^24, EIP-7825), naming how many fit; a batch under it builds", async () => {
    const toPyusd = (count: number) =>
      body(
        Array.from({ length: count }, (_, k) => ({ address: recipient(k + 1), toChain: 'ETH', toToken: 'PYUSD', amount: '1000' })),
        { fromChain: 'ETH', fromToken: 'USDT' },
      )
    const refused = await post(toPyusd(32))
    expect(refused.status).toBe(400)
    const problem = await readJson<{ code: string; errors: { field: string; message: string }[]; recipientsWithinGasCap: number }>(refused)
    expect(problem.code).toBe('invalid_request')
    expect(problem.errors[0]?.field).toBe('recipients')
    expect(problem.errors[0]?.message).toMatch(/^the 32 legs need \d+ gas on ETH, more than the 16777216 one transaction may ask for/)
    const fitting = problem.recipientsWithinGasCap
    expect(fitting).toBeGreaterThan(0)
    expect(fitting).toBeLessThan(32)
    expect(problem.errors[0]?.message).toContain(`the first ${fitting} recipients fit in one`)
    // What it says fits does: built, and under the cap.
    const built = await post(toPyusd(fitting))
    expect(built.status).toBe(200)
    const result = DisbursementResult.parse(await readJson(built))
    expect(hexToBigInt(result.transactionRequest.gas as Hex)).toBeLessThanOrEqual(16_777_216n)
    expect((await post(toPyusd(fitting + 1))).status).toBe(400)
  })

  it('answers GET with 405 naming POST', async () => {
    const response = await app.request(PATH)
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })
})
