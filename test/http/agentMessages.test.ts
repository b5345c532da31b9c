import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { DEFAULT_SANCTIONS_FILE, loadSanctionsList } from '../../src/compliance/loadSanctionsList.ts'
import { STATUS_BY_CODE } from '../../src/http/problem.ts'
import type { ErrorCode } from '../../src/schemas/problem.ts'
import {
  APP_URL,
  get,
  KEY_SECRET,
  lazyMemoryStore,
  MANIFEST_DIR,
  NOW_MS,
  postJson,
  postRaw,
  quoteBody,
  readJson,
  testApp,
} from './testApp.ts'
import { agentTextOffences as offences } from '../support/agentText.ts'

// Issue 14 item 12: every error code a client can provoke, and the 402 challenges, scanned for text not written for an
// agent (test/support/agentText.ts); test/mcp/agentMessages.test.ts does the same for the MCP tools.

const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })

const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: NOW_MS / 1000 })
const SANCTIONED = loadSanctionsList(`${MANIFEST_DIR}/${DEFAULT_SANCTIONS_FILE}`).addresses[0] ?? ''
/** A mixed-case address with one letter's case flipped: its checksum fails. */
const BAD_CHECKSUM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'

type Seen = { label: string; status: number; body: Record<string, unknown> }

async function seen(label: string, response: Response | Promise<Response>): Promise<Seen> {
  const res = await response
  return { label, status: res.status, body: await readJson(res) }
}

/** Every text an agent reads in a problem or 402 body: detail, and each field error's message. */
function textsOf(body: Record<string, unknown>): string[] {
  const texts: string[] = []
  if (typeof body['detail'] === 'string') texts.push(body['detail'])
  if (typeof body['error'] === 'string') texts.push(body['error'])
  for (const error of (body['errors'] ?? []) as { message?: unknown }[]) if (typeof error.message === 'string') texts.push(error.message)
  return texts
}

async function quoteIdFor(overrides: Record<string, unknown> = {}): Promise<string> {
  const response = await postJson(app, '/api/x402/quote', quoteBody(overrides))
  expect(response.status).toBe(200)
  return (await readJson<{ quoteId: string }>(response)).quoteId
}

async function provokeAll(): Promise<Seen[]> {
  const limited = testApp({ store, rateLimits: { anonymous: 1, free: 1, pro: 1, holdRefusalsMs: 0 } })
  await get(limited, '/api/v1/health')
  const quoteId = await quoteIdFor()
  const swap = (body: unknown, headers: Record<string, string> = { 'x-swapeazi-key': KEY }) => postJson(app, '/api/v1/swap', body, headers)
  return Promise.all([
    seen('empty object', postJson(app, '/api/x402/quote', {})),
    seen('not JSON', postRaw(app, '/api/x402/quote', '{')),
    seen('bad checksum', postJson(app, '/api/x402/quote', quoteBody({ fromAddress: BAD_CHECKSUM }))),
    seen('bad amount', postJson(app, '/api/x402/quote', quoteBody({ fromAmount: '-1' }))),
    seen('text/plain', postRaw(app, '/api/x402/quote', JSON.stringify(quoteBody()), 'text/plain')),
    seen('too large', postRaw(app, '/api/x402/quote', JSON.stringify({ ...quoteBody(), pad: 'x'.repeat(70_000) }))),
    seen('nowhere', get(app, '/nowhere')),
    seen('GET quote', get(app, '/api/x402/quote')),
    seen('unlisted token', postJson(app, '/api/x402/quote', quoteBody({ fromToken: 'DOGE' }))),
    seen('Tron', postJson(app, '/api/x402/quote', quoteBody({ fromChain: 'TRX', toChain: 'TRX', fromToken: 'USDT', toToken: 'USDC' }))),
    seen('huge amount', postJson(app, '/api/x402/quote', quoteBody({ fromAmount: '900000000000' }))),
    seen('tiny amount', postJson(app, '/api/x402/quote', quoteBody({ fromAmount: '0.000001' }))),
    seen(
      'ARB USDC to CEL cKES',
      postJson(app, '/api/x402/swap', quoteBody({ fromChain: 'ARB', toChain: 'CEL', fromToken: 'USDC', toToken: 'cKES' })),
    ),
    // The free quote does not screen; the build does.
    seen('sanctioned', swap({ quoteId, toAddress: SANCTIONED })),
    seen('two payments', postJson(app, '/api/mpp/swap', quoteBody(), { 'x-payment': 'abc', authorization: 'Payment abc' })),
    seen('rate limited', get(limited, '/api/v1/health')),
    seen(
      'foreign origin',
      Promise.resolve(app.request('/api/v1/keys', { method: 'POST', headers: { origin: 'https://elsewhere.example' } })),
    ),
    seen('no key', swap({ quoteId }, {})),
    seen('malformed key', swap({ quoteId }, { 'x-swapeazi-key': 'sk_not_ours' })),
    seen('bad quote id', swap({ quoteId: 'hello' })),
    seen(
      'expired quote',
      postJson(testApp({ store, clock: () => NOW_MS + 600_000 }), '/api/v1/swap', { quoteId }, { 'x-swapeazi-key': KEY }),
    ),
    seen('no payment', postJson(app, '/api/x402/swap', quoteBody())),
    seen('malformed X-PAYMENT', postJson(app, '/api/x402/swap', quoteBody(), { 'x-payment': 'not-base64-json' })),
  ])
}

describe('agent-facing HTTP messages (issue 14 item 12)', async () => {
  const answers = await provokeAll()

  it('provokes every client-provokable error code', () => {
    const codes = new Set(answers.map((answer) => answer.body['code']))
    // internal_error, payment_unavailable (the Tempo RPC down: test/http/mppSwap.test.ts) and market_unavailable (the
    // chains' RPCs stale: test/market/liveMarket.test.ts) are ours, not the client's; simulation_failed needs a chain
    // whose state moved (test/e2e/preflight.test.ts); transaction_mismatch, tracking_unavailable and chain_not_tracked
    // need a tracker, or none, behind a recorded swap (test/http/swapStatus.test.ts scans their texts).
    const notHere: readonly ErrorCode[] = [
      'internal_error',
      'payment_unavailable',
      'market_unavailable',
      'simulation_failed',
      'transaction_mismatch',
      'tracking_unavailable',
      'chain_not_tracked',
      // The operator's: a chain without a router of their own, where payments are real (test/http/inertRouter.test.ts).
      'router_not_deployed',
      // Node's HTTP parser and timeouts refuse these before the app sees a request: `swapeazi serve` answers them over a
      // socket (test/cli/serveTimeouts.test.ts, which scans their texts too).
      'request_timeout',
      'headers_too_large',
      // An Expect header other than 100-continue: serve answers it before the app (test/cli/serveConnections.test.ts).
      'expectation_failed',
    ]
    const wanted = (Object.keys(STATUS_BY_CODE) as ErrorCode[]).filter((code) => !notHere.includes(code))
    expect(wanted.filter((code) => !codes.has(code))).toEqual([])
    expect(answers.filter((answer) => answer.status === 402).map((answer) => answer.label)).toEqual(['no payment', 'malformed X-PAYMENT'])
  })

  it('names no file, source, specification or lowercase in any detail or field message', () => {
    const bad = answers.flatMap((answer) =>
      textsOf(answer.body)
        .map((text) => ({ label: answer.label, text, offences: offences(text) }))
        .filter((each) => each.offences.length > 0),
    )
    expect(bad).toEqual([])
  })

  it('says a checksum failure is probably a mistype and asks for the address to be copied again', () => {
    const answer = answers.find((each) => each.label === 'bad checksum')
    expect(answer?.body['code']).toBe('invalid_request')
    const text = textsOf(answer?.body ?? {}).join(' ')
    expect(text).toMatch(/mistyped/i)
    expect(text).toMatch(/cop(y|ied) (it )?again/i)
  })

  it('answers Tron as app-only with the app URL, not as an unserved amount', () => {
    const answer = answers.find((each) => each.label === 'Tron')
    expect(answer?.body['code']).toBe('not_agent_callable')
    expect(answer?.body['appUrl']).toBe(APP_URL)
    expect(String(answer?.body['detail'])).toContain(APP_URL)
    expect(String(answer?.body['detail'])).not.toMatch(/amount|unserved|not served/i)
  })

  it('names the binding limit of amount_out_of_range (the fee, liquidity or a bridge cap) beside the range', () => {
    const out = answers.filter((each) => each.body['code'] === 'amount_out_of_range')
    expect(out.map((answer) => answer.body['limit']).sort()).toEqual(['fee', 'liquidity'])
    const named: Record<string, RegExp> = {
      // The tiny amount is a same-chain swap: no bridge or destination gas, the fee itself leaves nothing.
      fee: /the fee, \S+ USDC \(rounded up to a whole atomic unit\), leaves nothing to deliver/,
      liquidity: /liquidity/,
      bridge_minimum: /bridge/,
      bridge_maximum: /bridge/,
    }
    for (const answer of out) {
      const detail = String(answer.body['detail'])
      expect(detail, answer.label).toMatch(named[String(answer.body['limit'])] ?? /^$/)
      expect(detail, answer.label).toMatch(/Send between \S+ and \S+ USDC/)
    }
  })

  it('names no file or specification in the free answers either: corridors, chains, routes and corridor intelligence notes', async () => {
    const strings = (value: unknown): string[] =>
      typeof value === 'string'
        ? [value]
        : Array.isArray(value)
          ? value.flatMap(strings)
          : value !== null && typeof value === 'object'
            ? Object.values(value).flatMap(strings)
            : []
    const bad: { path: string; text: string; offences: string[] }[] = []
    for (const path of ['/api/v1/corridors', '/api/v1/chains', '/api/mpp/routes', '/api/v1/intelligence/corridor/BAS-ARB']) {
      const response = await get(app, path)
      expect(response.status, path).toBe(200)
      for (const text of strings(await readJson(response))) {
        const found = offences(text)
        if (found.length > 0) bad.push({ path, text, offences: found })
      }
    }
    expect(bad).toEqual([])
  })
})
