import { afterAll, describe, expect, it } from 'vitest'
import { signApiKey } from '../../src/auth/apiKey.ts'
import { routerDeployment } from '../../src/tx/routerDeployment.ts'
import { FROM_ADDRESS, KEY_SECRET, lazyMemoryStore, postJson, postRaw, quoteBody, readJson, ROUTER_ADDRESS, testApp } from './testApp.ts'

// Addresses that cannot receive: the router refuses the zero address ("order has no recipient"), and tokens sent to
// a token contract or to our own router or executor are lost or stuck. Each is refused at validation, before any
// payment is asked for.
const store = lazyMemoryStore()
afterAll(() => store.sql.close())
const app = testApp({ store })
const KEY = signApiKey(KEY_SECRET, { v: 1, id: 'key_0123456789abcdef01234567', tier: 'free', iat: 1_795_000_000 })
const keyed = { 'x-swapeazi-key': KEY }

const ZERO = '0x0000000000000000000000000000000000000000'
const ETH_USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'
const POL_USDC = '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359'
const { executor } = routerDeployment(ROUTER_ADDRESS)
const OTHER = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

type Problem = { code: string; detail: string; errors: { field: string; message: string }[] }

async function refusal(response: Response): Promise<Problem> {
  expect(response.status).toBe(400)
  const problem = await readJson<Problem>(response)
  expect(problem.code).toBe('invalid_request')
  return problem
}

describe('a recipient that cannot receive is refused with 400 naming the field', () => {
  it.each([
    ['the zero address', ZERO, 'is the zero address: the router refuses it'],
    ["a token contract of the destination chain (USDC's)", ETH_USDC, 'is the USDC token contract on ETH, not a wallet'],
    ['our router', ROUTER_ADDRESS, "is SwapEazi's router on ETH, not a wallet"],
    ['our executor', executor, "is SwapEazi's executor on ETH, not a wallet"],
  ])('%s as toAddress: every quote and swap path', async (_name, address, says) => {
    for (const [path, headers] of [
      ['/api/x402/quote', {}],
      ['/api/mpp/quote', {}],
      ['/api/v1/quote', keyed],
      ['/api/x402/swap', {}],
      ['/api/mpp/swap', {}],
    ] as const) {
      const problem = await refusal(await postJson(app, path, quoteBody({ toAddress: address }), headers))
      expect(problem.errors, path).toEqual([{ field: 'toAddress', message: expect.stringContaining(says) }])
      expect(problem.detail, path).toContain("send the recipient's own wallet address, or omit it to pay the sender")
    }
  })

  it('the destination chain decides: a token of the destination chain is refused, the same address elsewhere is not its token', async () => {
    const toPolygon = quoteBody({ fromChain: 'BAS', toChain: 'POL', fromAmount: '500', toToken: 'USDC' })
    const problem = await refusal(await postJson(app, '/api/x402/quote', { ...toPolygon, toAddress: POL_USDC }))
    expect(problem.errors[0]?.message).toContain('is the USDC token contract on POL')
    expect((await postJson(app, '/api/x402/quote', { ...toPolygon, toAddress: OTHER })).status).toBe(200)
  })

  it('the message says why and what to do', async () => {
    const problem = await refusal(await postJson(app, '/api/x402/quote', quoteBody({ toAddress: ZERO })))
    expect(problem.detail).toMatchInlineSnapshot(
      `"toAddress is the zero address: the router refuses it and the transaction would revert; send the recipient's own wallet address, or omit it to pay the sender."`,
    )
  })

  it('a sender of the zero address is refused: nothing can sign for it', async () => {
    const problem = await refusal(await postJson(app, '/api/x402/swap', quoteBody({ fromAddress: ZERO })))
    expect(problem.errors).toEqual([
      { field: 'fromAddress', message: expect.stringContaining('is the zero address, which no wallet can sign for') },
    ])
  })

  it.each([
    [
      "a token contract of the source chain (USDT's, swapping USDC into it)",
      '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      'the USDT token contract on ETH',
    ],
    ['our router', ROUTER_ADDRESS, "SwapEazi's router on ETH"],
    ['our executor', executor, "SwapEazi's executor on ETH"],
  ])('%s as fromAddress: a contract signs no transaction, and with no toAddress it would be paid', async (_name, address, says) => {
    for (const [path, headers] of [
      ['/api/x402/quote', {}],
      ['/api/v1/quote', keyed],
      ['/api/x402/swap', {}],
    ] as const) {
      const problem = await refusal(await postJson(app, path, quoteBody({ fromAddress: address }), headers))
      expect(problem.errors, path).toEqual([
        {
          field: 'fromAddress',
          message: `is ${says}, not a wallet: it signs no transaction; send the address of the wallet that signs and pays`,
        },
      ])
    }
    const batch = {
      fromChain: 'ETH',
      fromToken: 'USDC',
      fromAddress: address,
      recipients: [{ address: OTHER, toChain: 'ETH', toToken: 'USDT', amount: '10' }],
    }
    const problem = await refusal(await postJson(app, '/api/v1/batch/disburse', batch, keyed))
    expect(problem.errors[0]).toMatchObject({ field: 'fromAddress', message: expect.stringContaining(`is ${says}, not a wallet`) })
  })

  it('with no toAddress the sender is paid on the destination chain: an address that is a contract there is refused on fromAddress', async () => {
    const toPolygon = quoteBody({ fromChain: 'ETH', toChain: 'POL', fromAmount: '500', toToken: 'USDC', fromAddress: POL_USDC })
    const problem = await refusal(await postJson(app, '/api/x402/quote', toPolygon))
    expect(problem.errors).toEqual([
      {
        field: 'fromAddress',
        message:
          "receives the output too, as toAddress is left out, but on POL it is the USDC token contract on POL, not a wallet: tokens sent there are lost; send the recipient's own wallet address as toAddress",
      },
    ])
    expect((await postJson(app, '/api/x402/quote', { ...toPolygon, toAddress: OTHER })).status).toBe(200)
  })

  it('POST /api/v1/swap: a quote to its sender cannot be sent on to the zero address or a token', async () => {
    const quoted = await postJson(app, '/api/x402/quote', quoteBody())
    const { quoteId } = await readJson<{ quoteId: string }>(quoted)
    for (const [address, says] of [
      [ZERO, 'is the zero address'],
      [ETH_USDC, 'is the USDC token contract on ETH'],
    ] as const) {
      const problem = await refusal(await postJson(app, '/api/v1/swap', { quoteId, toAddress: address }, keyed))
      expect(problem.errors).toEqual([{ field: 'toAddress', message: expect.stringContaining(says) }])
    }
  })

  it('POST /api/v1/batch/disburse: each refused recipient is named by its index, the batch refused whole', async () => {
    const leg = (address: string, toChain = 'BAS', toToken = 'USDC') => ({ address, toChain, toToken, amount: '10' })
    const response = await postJson(
      app,
      '/api/v1/batch/disburse',
      {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: FROM_ADDRESS,
        recipients: [leg(OTHER), leg(ZERO), leg(POL_USDC, 'POL'), leg(executor, 'POL', 'USDT')],
      },
      keyed,
    )
    const problem = await refusal(response)
    expect(problem.errors).toEqual([
      { field: 'recipients.1.address', message: expect.stringContaining('is the zero address') },
      { field: 'recipients.2.address', message: expect.stringContaining('is the USDC token contract on POL') },
      { field: 'recipients.3.address', message: expect.stringContaining("is SwapEazi's executor on POL") },
    ])
    // A batch recipient's address cannot be left out: the advice is to send the wallet, never to omit it.
    for (const error of problem.errors ?? []) {
      expect(error.message).toMatch(/send the recipient's own wallet address$/)
      expect(error.message).not.toContain('omit')
    }
  })

  it('POST /api/v1/batch/disburse: a sender of the zero address is refused', async () => {
    const response = await postJson(
      app,
      '/api/v1/batch/disburse',
      {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: ZERO,
        recipients: [{ address: OTHER, toChain: 'BAS', toToken: 'USDC', amount: '10' }],
      },
      keyed,
    )
    expect((await refusal(response)).errors).toEqual([{ field: 'fromAddress', message: expect.stringContaining('is the zero address') }])
  })
})

describe('an unknown field is refused, not dropped: a misspelled recipient would build to the sender', () => {
  it.each([
    ['recipient', 'did you mean toAddress?'],
    ['toaddress', 'field names are case-sensitive: did you mean toAddress?'],
    ['to_address', 'field names are case-sensitive: did you mean toAddress?'],
    ['toAdress', 'did you mean toAddress?'],
  ])('%s on the quote and paid swap bodies: 400 naming it and the field meant', async (key, hint) => {
    for (const path of ['/api/x402/quote', '/api/x402/swap', '/api/mpp/swap', '/api/v1/quote']) {
      const response = await postJson(app, path, quoteBody({ [key]: OTHER }), path === '/api/v1/quote' ? keyed : {})
      const problem = await refusal(response)
      expect(problem.errors, path).toEqual([{ field: '(body)', message: expect.stringContaining(`"${key}" (${hint})`) }])
    }
  })

  it('__proto__ and constructor are named as unknown fields, never read from the prototype', async () => {
    const body = JSON.stringify(quoteBody()).replace(/}$/, ',"__proto__":{"a":1},"constructor":1}')
    const problem = await refusal(await postRaw(app, '/api/x402/swap', body))
    const message = problem.errors?.[0]?.message ?? ''
    expect(message).toContain('unknown fields "__proto__", "constructor": unknown fields are refused')
    expect(message).not.toMatch(/object Object|native code/)
  })

  it('a quoteId on the paid swap is read, not ignored: one that is no quote is 400 invalid_quote (DESIGN 7.27)', async () => {
    const response = await postJson(app, '/api/x402/swap', quoteBody({ quoteId: 'q1.abc', fromAmount: '5' }))
    expect(response.status).toBe(400)
    expect(await readJson(response)).toMatchObject({ code: 'invalid_quote', reason: 'malformed' })
  })

  it('several unknown fields are named together; one with no likely meaning is named alone', async () => {
    const problem = await refusal(await postJson(app, '/api/x402/quote', quoteBody({ colour: 'red', Slippage: 0.01 })))
    expect(problem.errors[0]?.message).toContain(
      'has unknown fields "colour", "Slippage" (field names are case-sensitive: did you mean slippage?)',
    )
  })

  it('a batch recipient with `recipient` instead of `address` is told which field was meant', async () => {
    const response = await postJson(
      app,
      '/api/v1/batch/disburse',
      {
        fromChain: 'BAS',
        fromToken: 'USDC',
        fromAddress: FROM_ADDRESS,
        recipients: [{ recipient: OTHER, toChain: 'BAS', toToken: 'USDC', amount: '10' }],
      },
      keyed,
    )
    const problem = await refusal(response)
    expect(problem.errors).toContainEqual({
      field: 'recipients.0',
      message: expect.stringContaining('"recipient" (did you mean address?)'),
    })
  })
})
