import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ChainsResponse, CorridorsResponse, Health } from '../../src/schemas/discovery.ts'
import { APP_URL, DECIMAL_STRING, MANIFEST_DIR, NOW_MS, PUBLIC_URL, VERSION, decimalToUnits, get, readJson, testApp } from './testApp.ts'

const app = testApp()

type MarketJson = { asOf: string; source: string; fx: Record<string, { usd: string; source: string }> }
type ChainsJson = { chains: { id: string; name: string; chainId: number; tokens: string[] }[] }
const market = JSON.parse(readFileSync(join(MANIFEST_DIR, 'market.json'), 'utf8')) as MarketJson
const chainsFile = JSON.parse(readFileSync(join(MANIFEST_DIR, 'chains.json'), 'utf8')) as ChainsJson

async function getJson<T>(path: string): Promise<T> {
  const response = await get(app, path)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  expect(response.headers.get('x-request-id')).toMatch(/\S/)
  return readJson<T>(response)
}

describe('GET /api/v1/health', () => {
  it('reports ok, the version and the snapshot age under the fixed clock', async () => {
    const health = await getJson<Health>('/api/v1/health')
    expect(Health.safeParse(health).success).toBe(true)
    expect(health.status).toBe('ok')
    expect(health.version).toBe(VERSION)
    expect(health.snapshot.asOf).toBe(market.asOf)
    expect(health.snapshot.source).toBe(market.source)
    expect(health.snapshot.ageSeconds).toBe((NOW_MS - Date.parse(market.asOf)) / 1000)
    expect(health.snapshot.ageSeconds).toBe(43_200)
  })

  it('reports EUR/ZAR as EUR/USD over ZAR/USD from market.json, rounded down to 4 places', async () => {
    const health = await getJson<Health>('/api/v1/health')
    const eur = decimalToUnits(market.fx.EUR?.usd ?? 'missing', 18)
    const zar = decimalToUnits(market.fx.ZAR?.usd ?? 'missing', 18)
    const rateE4 = (eur * 10_000n) / zar
    const expected = `${rateE4 / 10_000n}.${(rateE4 % 10_000n).toString().padStart(4, '0')}`.replace(/\.?0+$/, '')
    expect(health.rates.EURZAR.rate).toMatch(DECIMAL_STRING)
    expect(health.rates.EURZAR.rate).toBe(expected)
    expect(health.rates.EURZAR.rate).toBe('19.9655') // 1.16 / 0.0581
    expect(health.rates.EURZAR.asOf).toBe(market.asOf)
    expect(health.rates.EURZAR.source).toContain(market.fx.EUR?.source ?? 'missing')
  })

  it('follows the clock: a day later the snapshot is a day older', async () => {
    const later = testApp({ clock: () => NOW_MS + 86_400_000 })
    const health = await readJson<Health>(await get(later, '/api/v1/health'))
    expect(health.snapshot.ageSeconds).toBe(43_200 + 86_400)
  })
})

describe('GET /api/v1/chains', () => {
  it('lists the ten chains with the tokens of manifest/chains.json, each with an address and decimals', async () => {
    const body = await getJson<ChainsResponse>('/api/v1/chains')
    expect(ChainsResponse.safeParse(body).success).toBe(true)
    expect(body.chains).toHaveLength(10)
    expect(body.chains.map((c) => c.id)).toEqual(chainsFile.chains.map((c) => c.id))
    for (const chain of body.chains) {
      const listed = chainsFile.chains.find((c) => c.id === chain.id)
      expect(chain.chainId).toBe(listed?.chainId)
      expect(
        chain.tokens.map((t) => t.symbol),
        chain.id,
      ).toEqual(listed?.tokens)
      for (const token of chain.tokens) {
        expect(token.address.length, `${chain.id}:${token.symbol}`).toBeGreaterThanOrEqual(20)
        expect(Number.isInteger(token.decimals)).toBe(true)
      }
    }
  })

  it('marks SOL and TRX not agent-callable and every other chain callable', async () => {
    const body = await getJson<ChainsResponse>('/api/v1/chains')
    const callable = Object.fromEntries(body.chains.map((c) => [c.id, c.agentCallable]))
    expect(callable).toEqual({
      ETH: true,
      BAS: true,
      POL: true,
      ARB: true,
      OPT: true,
      BNB: true,
      GNO: true,
      CEL: true,
      SOL: false,
      TRX: false,
    })
  })

  it('carries decimals per chain: 18 for USDC on BNB, 6 on Base; 18 for cKES', async () => {
    const body = await getJson<ChainsResponse>('/api/v1/chains')
    const token = (chain: string, symbol: string) => body.chains.find((c) => c.id === chain)?.tokens.find((t) => t.symbol === symbol)
    expect(token('BNB', 'USDC')?.decimals).toBe(18)
    expect(token('BAS', 'USDC')).toEqual({
      symbol: 'USDC',
      address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      decimals: 6,
      currency: 'USD',
    })
    expect(token('CEL', 'cKES')).toMatchObject({ decimals: 18, currency: 'KES' })
    expect(body.chains.find((c) => c.id === 'TRX')?.note).toContain(APP_URL)
  })
})

describe('GET /api/v1/corridors', () => {
  it('has the 17 advertised corridors', async () => {
    const body = await getJson<CorridorsResponse>('/api/v1/corridors')
    const parsed = CorridorsResponse.safeParse(body)
    expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true)
    expect(body.corridors).toHaveLength(17)
    expect(body.referenceAmount).toBe('1000')
  })

  /** The cells the shipped catalogue does not serve, each with why (DESIGN 7.20): the rest must all be live. */
  const NOT_SERVED: Readonly<Record<string, string>> = { 'USDC->cKES on CEL': 'cost_exceeds_fee' }

  it('serves every agent-callable corridor cell, or says why not (DESIGN 4, 7.20)', async () => {
    const body = await getJson<CorridorsResponse>('/api/v1/corridors')
    const callable = body.corridors.filter((c) => c.agentCallable)
    expect(callable).toHaveLength(15)
    const unserved: Record<string, string> = {}
    for (const corridor of callable) {
      const name = `${corridor.from}->${corridor.to}`
      expect(corridor.appUrl, name).toBeUndefined()
      expect(
        corridor.byChain.map((b) => b.chain),
        name,
      ).toEqual(corridor.chains)
      for (const entry of corridor.byChain) {
        const cell = `${name} on ${entry.chain}`
        if (!entry.live) {
          // Not served: no legs, and a reason with a sentence an agent can act on, never a file name.
          expect(entry.legs, cell).toEqual([])
          expect(entry.notServed?.detail, cell).toMatch(/\w/)
          expect(entry.notServed?.detail, cell).not.toMatch(/manifest|\.json/)
          unserved[cell] = entry.notServed?.reason ?? 'none'
          continue
        }
        expect(entry.notServed, cell).toBeUndefined()
        expect(entry.legs.length, cell).toBeGreaterThan(0)
        for (const leg of entry.legs) {
          expect([leg.fromChain, leg.toChain], cell).toContain(entry.chain)
          expect(leg.viableRange).not.toBeNull()
          expect(leg.viableRange?.token.toLowerCase()).toBe(corridor.from.toLowerCase())
          expect(decimalToUnits(leg.viableRange?.max ?? '0', 18)).toBeGreaterThan(decimalToUnits(leg.viableRange?.min ?? '0', 18))
        }
      }
    }
    expect(unserved).toEqual(NOT_SERVED)
  })

  it('says USDC -> cKES on Celo is not served, and why, while the row stays as advertised', async () => {
    const body = await getJson<CorridorsResponse>('/api/v1/corridors')
    const corridor = body.corridors.find((c) => c.from === 'USDC' && c.to === 'cKES')
    const celo = corridor?.byChain.find((b) => b.chain === 'CEL')
    expect(celo).toMatchObject({ live: false, legs: [], notServed: { reason: 'cost_exceeds_fee', feeBps: 50 } })
    // The figures: what the cheapest route costs against the 50 bps the fee covers (never sold at a loss).
    expect(celo?.notServed?.costBps).toBeGreaterThan(50)
    expect(celo?.notServed?.detail).toContain(`${celo?.notServed?.costBps} bps`)
  })

  it('marks the Tron corridors not live, with no legs and the appUrl', async () => {
    const body = await getJson<CorridorsResponse>('/api/v1/corridors')
    const tron = body.corridors.filter((c) => c.from === 'USDT-TRC20')
    expect(tron.map((c) => c.to)).toEqual(['USDC', 'EURC'])
    for (const corridor of tron) {
      expect(corridor).toMatchObject({ agentCallable: false, live: false, appUrl: APP_URL })
      for (const entry of corridor.byChain) expect(entry).toEqual({ chain: entry.chain, live: false, legs: [] })
    }
    expect(JSON.stringify(body)).not.toContain('{app_url}')
  })
})

describe('GET /openapi.json', () => {
  type Doc = {
    openapi: string
    info: { version: string }
    servers: { url: string }[]
    paths: Record<string, Record<string, unknown>>
    components: { schemas: Record<string, { required?: string[] }> }
  }

  /** Every `$ref` string anywhere in a JSON value. */
  function refs(value: unknown, found: string[] = []): string[] {
    if (Array.isArray(value)) for (const item of value) refs(item, found)
    else if (value !== null && typeof value === 'object')
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string') found.push(child)
        else refs(child, found)
      }
    return found
  }

  it('is OpenAPI 3.1.0 for this version and server', async () => {
    const doc = await getJson<Doc>('/openapi.json')
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe(VERSION)
    expect(doc.servers).toEqual([{ url: PUBLIC_URL }])
  })

  it('documents every endpoint with its methods', async () => {
    const doc = await getJson<Doc>('/openapi.json')
    expect(Object.keys(doc.paths).sort()).toMatchInlineSnapshot(`
      [
        "/.well-known/x402.json",
        "/api/mpp/quote",
        "/api/mpp/routes",
        "/api/mpp/swap",
        "/api/v1/batch/disburse",
        "/api/v1/chains",
        "/api/v1/corridors",
        "/api/v1/health",
        "/api/v1/intelligence/corridor/{pair}",
        "/api/v1/keys",
        "/api/v1/quote",
        "/api/v1/swap",
        "/api/v1/swap/{ref}",
        "/api/v1/swap/{ref}/status",
        "/api/v1/swap/{ref}/transaction",
        "/api/x402/quote",
        "/api/x402/swap",
        "/openapi.json",
      ]
    `)
    const methods = Object.fromEntries(Object.entries(doc.paths).map(([path, item]) => [path, Object.keys(item)]))
    for (const path of [
      '/api/x402/quote',
      '/api/mpp/quote',
      '/api/v1/quote',
      '/api/x402/swap',
      '/api/mpp/swap',
      '/api/v1/keys',
      '/api/v1/swap',
      '/api/v1/batch/disburse',
      '/api/v1/swap/{ref}/transaction',
    ])
      expect(methods[path]).toEqual(['post'])
    for (const path of ['/api/v1/swap/{ref}', '/api/v1/swap/{ref}/status', '/api/v1/intelligence/corridor/{pair}'])
      expect(methods[path]).toEqual(['get'])
    for (const path of [
      '/api/mpp/routes',
      '/api/v1/health',
      '/api/v1/chains',
      '/api/v1/corridors',
      '/openapi.json',
      '/.well-known/x402.json',
    ])
      expect(methods[path]).toEqual(['get'])
  })

  it('resolves every $ref to an entry of components.schemas', async () => {
    const doc = await getJson<Doc>('/openapi.json')
    const all = refs(doc)
    expect(all.length).toBeGreaterThan(10)
    for (const ref of all) {
      expect(ref).toMatch(/^#\/components\/schemas\/[^/]+$/)
      const name = ref.slice('#/components/schemas/'.length)
      expect(doc.components.schemas[name], ref).toBeDefined()
    }
    expect(JSON.stringify(doc)).not.toContain('#/$defs/')
  })

  it('requires the six QuoteParams fields (slippage has a default)', async () => {
    const doc = await getJson<Doc>('/openapi.json')
    expect(doc.components.schemas.QuoteParams?.required).toMatchInlineSnapshot(`
      [
        "fromChain",
        "toChain",
        "fromToken",
        "toToken",
        "fromAmount",
        "fromAddress",
      ]
    `)
  })
})
