import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { Problem } from '../../src/schemas/problem.ts'
import { FROM_ADDRESS, KEY_SECRET, lazyMemoryStore, NOW_MS, PAY_TO, quoteBody, testApp } from './testApp.ts'

// DESIGN 6: no 5xx for anything a client sent, on every endpoint that reads a body, not only the quotes the
// property test (fuzz.test.ts) drives. Each field of a valid body in turn takes each value below, the values that
// have tripped parsers elsewhere: nesting as deep as the body limit allows (a recursive walk overflowed the stack
// here once), a lone surrogate, 1e309 (Infinity once parsed), `__proto__`, 20,000 characters, numbers past 2^256. The
// x402 payment headers get the same, field by field, base64'd as clients send them.

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })
const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'pro', iat: NOW_MS / 1000 })

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`
/** JSON texts, spliced into bodies as they are. */
const HOSTILE = [
  'null',
  'true',
  '0',
  '-1',
  '-0',
  '1.5',
  '1e309',
  '123456789012345678901234567890',
  '""',
  '" "',
  '"0"',
  '"-1"',
  '"1e3"',
  '"0x10"',
  '"１２３"',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"💸"',
  '"\\u202eUSDC"',
  '"NaN"',
  '"Infinity"',
  JSON.stringify(`1${'0'.repeat(90)}`),
  '"0.0000000000000000000000001"',
  JSON.stringify('a'.repeat(20_000)),
  '[]',
  '{}',
  '[1,2,3]',
  '{"__proto__":{"polluted":1}}',
  nested(30_000),
  '"swp_01KA0000000000000000000000"',
  '"0x0000000000000000000000000000000000000000"',
]

type Answer = { path: string; sent: string; status: number; contentType: string; text: string }

async function post(path: string, body: string): Promise<Answer> {
  const response = await app.request(path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-swapeazi-key': KEY,
      host: '127.0.0.1:8402',
      accept: 'application/json, text/event-stream',
    },
    body,
  })
  return {
    path,
    sent: body.slice(0, 120),
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  }
}

/** What is wrong with an answer to a client's request, or undefined: a 5xx, a stack or a RangeError, a 4xx not a problem. */
function fault(answer: Answer): string | undefined {
  const said = `${answer.path} ${answer.sent} -> ${answer.status} ${answer.text.slice(0, 200)}`
  if (answer.status >= 500) return said
  if (/RangeError|Maximum call stack|\n\s+at .+:\d+:\d+/.test(answer.text)) return said
  // x402's 402 and MCP's JSON-RPC answers are their protocols' own bodies; every other refusal is a problem.
  if (answer.status >= 400 && answer.status !== 402 && answer.path !== '/mcp') {
    if (answer.contentType !== 'application/problem+json') return `${said} (content type ${answer.contentType})`
    if (!Problem.safeParse(JSON.parse(answer.text)).success) return `${said} (not a problem)`
  }
  return undefined
}

/** Every field of `base`, and three it does not have, each set to each hostile value in turn. */
function mutations(base: Record<string, unknown>): string[] {
  const bodies: string[] = []
  for (const field of [...Object.keys(base), '__proto__', 'constructor', 'unexpected'])
    for (const value of HOSTILE) {
      const { [field]: _replaced, ...rest } = base
      const others = JSON.stringify(rest).slice(1, -1)
      bodies.push(`{${JSON.stringify(field)}:${value}${others === '' ? '' : `,${others}`}}`)
    }
  return bodies
}

describe('hostile values in every body: never a 5xx, never a stack, every refusal a problem', () => {
  it('in each field of the quotes, the paid swaps, the keyed swap, the transaction hint and the disbursement', async () => {
    const quoted = await post('/api/x402/quote', JSON.stringify(quoteBody()))
    expect(quoted.status).toBe(200)
    const quoteId = (JSON.parse(quoted.text) as { quoteId: string }).quoteId
    const recipient = { address: `0x${'2'.repeat(40)}`, toChain: 'BAS', toToken: 'USDC', amount: '1' }
    const disbursement = { fromChain: 'BAS', fromToken: 'USDC', fromAddress: FROM_ADDRESS, recipients: [recipient] }
    const bodies: [string, string][] = [
      ...mutations(quoteBody()).flatMap((body) =>
        ['/api/x402/quote', '/api/v1/quote', '/api/x402/swap', '/api/mpp/swap'].map((path): [string, string] => [path, body]),
      ),
      ...mutations({ quoteId, toAddress: FROM_ADDRESS }).map((body): [string, string] => ['/api/v1/swap', body]),
      ...mutations({ transactionHash: `0x${'1'.repeat(64)}` }).map((body): [string, string] => [
        '/api/v1/swap/swp_01KA0000000000000000000000/transaction',
        body,
      ]),
      ...mutations(disbursement).map((body): [string, string] => ['/api/v1/batch/disburse', body]),
      ...mutations(recipient).map((body): [string, string] => [
        '/api/v1/batch/disburse',
        JSON.stringify({ ...disbursement, recipients: ['@'] }).replace('"@"', body),
      ]),
    ]
    const faults: string[] = []
    for (const [path, body] of bodies) {
      const wrong = fault(await post(path, body))
      if (wrong !== undefined) faults.push(wrong)
    }
    expect(bodies.length).toBeGreaterThan(1_500)
    expect(faults).toEqual([])
  }, 120_000)

  it('in each field of an x402 payment, v1 in X-PAYMENT and v2 in PAYMENT-SIGNATURE, at the top and in its authorization', async () => {
    const authorization = {
      from: FROM_ADDRESS,
      to: PAY_TO,
      value: '20000',
      validAfter: '0',
      validBefore: '9999999999',
      nonce: `0x${'11'.repeat(32)}`,
    }
    const signed = { signature: `0x${'ab'.repeat(65)}`, authorization }
    const accepted = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '20000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: PAY_TO,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    }
    const payments: [string, string][] = []
    const inside = (outer: Record<string, unknown>, key: string, bodies: string[]): string[] =>
      bodies.map((body) => JSON.stringify({ ...outer, [key]: '@' }).replace('"@"', body))
    for (const [header, payment, nestedKey] of [
      ['x-payment', { x402Version: 1, scheme: 'exact', network: 'base', payload: signed }, undefined],
      ['payment-signature', { x402Version: 2, accepted, payload: signed }, 'accepted'],
    ] as const) {
      const texts = [
        ...mutations(payment),
        ...inside(payment, 'payload', mutations(signed)),
        ...inside(payment, 'payload', inside(signed, 'authorization', mutations(authorization))),
        ...(nestedKey === undefined ? [] : inside(payment, nestedKey, mutations(accepted))),
      ]
      for (const text of texts) payments.push([header, Buffer.from(text).toString('base64')])
    }
    const faults: string[] = []
    const body = JSON.stringify(quoteBody())
    for (const [header, value] of payments) {
      const response = await app.request('/api/x402/swap', {
        method: 'POST',
        headers: { 'content-type': 'application/json', [header]: value },
        body,
      })
      const text = await response.text()
      const wrong = fault({
        path: '/api/x402/swap',
        sent: `${header}: ${value.slice(0, 80)}`,
        status: response.status,
        contentType: response.headers.get('content-type') ?? '',
        text,
      })
      if (wrong !== undefined) faults.push(wrong)
      else if (response.status === 200) faults.push(`${header} ${value.slice(0, 80)}: a forged payment was accepted`)
    }
    expect(payments.length).toBeGreaterThan(1_000)
    expect(faults).toEqual([])
  }, 120_000)

  it('in the arguments of every MCP tool, and as the JSON-RPC message itself', async () => {
    const tools = ['discover_routes', 'probe_corridor', 'get_quote', 'build_swap', 'track_swap', 'corridor_intelligence']
    const fields = ['fromChain', 'fromAmount', 'toAddress', 'quoteId', 'swapEaziRef', 'pair', 'chain']
    const faults: string[] = []
    for (const name of tools)
      for (const field of fields)
        for (const value of HOSTILE) {
          const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":{"${field}":${value}}}}`
          const wrong = fault(await post('/mcp', call))
          if (wrong !== undefined) faults.push(wrong)
        }
    for (const value of HOSTILE) {
      const wrong = fault(await post('/mcp', value)) ?? fault(await post('/mcp', `{"jsonrpc":"2.0","id":${value},"method":"tools/list"}`))
      if (wrong !== undefined) faults.push(wrong)
    }
    expect(faults).toEqual([])
  }, 120_000)

  it('in the paths and queries of the GET endpoints', async () => {
    const segments = ['%00', '%ff', '%', '..%2f..%2f', 'a'.repeat(5_000), '%F0%9F%92%B8', '__proto__', 'USD-USD', 'BAS-ARB']
    const queries = ['', '?amount=1e400', '?amount=%ff', '?amount=-1', `?amount=${'9'.repeat(100)}`, '?amount=1&amount=2']
    const faults: string[] = []
    for (const segment of segments)
      for (const query of queries)
        for (const path of [
          `/api/v1/swap/${segment}${query}`,
          `/api/v1/swap/${segment}/status${query}`,
          `/api/v1/intelligence/corridor/${segment}${query}`,
          `/api/v1/corridors?chain=${segment}`,
          `/api/v1/chains${query}`,
        ]) {
          const response = await app.request(path, { headers: { authorization: `Bearer ${KEY}` } })
          const wrong = fault({
            path,
            sent: '',
            status: response.status,
            contentType: response.headers.get('content-type') ?? '',
            text: await response.text(),
          })
          if (wrong !== undefined) faults.push(wrong)
        }
    expect(faults).toEqual([])
  }, 120_000)
})
