import { isAddress } from 'viem'
import { beforeAll, describe, expect, it } from 'vitest'
import { CapabilityManifest } from '../../src/schemas/discovery.ts'
import { APP_URL, get, readJson, testApp } from './testApp.ts'

/** Spec 2.8: numeric chain ids, as the manifest's supportedTokens keys. */
const CHAIN_IDS = ['1', '8453', '137', '42161', '10', '56', '100', '42220', '1151111081099710', '728126428']
const EVM_CHAIN_IDS = new Set(['1', '8453', '137', '42161', '10', '56', '100', '42220'])

type TokenRef = { symbol: string; address: string; decimals: number }
type Manifest = CapabilityManifest

describe('GET /api/mpp/routes (spec 2.7)', () => {
  let response: Response
  let manifest: Manifest

  beforeAll(async () => {
    response = await get(testApp(), '/api/mpp/routes')
    manifest = await readJson<Manifest>(response.clone())
  })

  it('answers 200 JSON with an x-request-id', () => {
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(response.headers.get('x-request-id')).toMatch(/\S+/)
  })

  it('has exactly the seven top-level members of spec 2.7', () => {
    expect(Object.keys(manifest).sort()).toEqual([
      'agentPayments',
      'chains',
      'corridors',
      'discovery',
      'moat',
      'pricing',
      'supportedTokens',
    ])
  })

  it('parses with the strict CapabilityManifest schema', () => {
    const parsed = CapabilityManifest.safeParse(manifest)
    expect(parsed.success, parsed.success ? '' : JSON.stringify(parsed.error.issues)).toBe(true)
  })

  it('keys supportedTokens by numeric chain id as a string, for all ten chains', () => {
    expect(Object.keys(manifest.supportedTokens).sort()).toEqual([...CHAIN_IDS].sort())
    for (const key of Object.keys(manifest.supportedTokens)) expect(key).toMatch(/^[0-9]+$/)
  })

  it('lists each token as exactly {symbol, address, decimals}', () => {
    for (const [chainId, tokens] of Object.entries(manifest.supportedTokens)) {
      expect(tokens.length, chainId).toBeGreaterThan(0)
      for (const token of tokens as TokenRef[]) {
        expect(Object.keys(token).sort(), `${chainId}:${token.symbol}`).toEqual(['address', 'decimals', 'symbol'])
        expect(token.symbol).toMatch(/\S/)
        expect(Number.isInteger(token.decimals)).toBe(true)
        if (EVM_CHAIN_IDS.has(chainId))
          expect(isAddress(token.address, { strict: true }), `${chainId}:${token.symbol} ${token.address}`).toBe(true)
        else expect(token.address, `${chainId}:${token.symbol}`).toMatch(/^[1-9A-HJ-NP-Za-km-z]{30,50}$/) // base58
      }
    }
  })

  it('gives supportedTokens the same symbols, in order, as each chain entry', () => {
    for (const chain of manifest.chains) {
      expect(
        (manifest.supportedTokens[String(chain.chainId)] ?? []).map((t) => t.symbol),
        chain.id,
      ).toEqual(chain.tokens)
    }
  })

  it('says USDC and USDT on BNB Chain have 18 decimals (DESIGN 7.3), and 6 on Ethereum', () => {
    const bnb = manifest.supportedTokens['56'] ?? []
    expect(bnb.find((t) => t.symbol === 'USDC')).toEqual({
      symbol: 'USDC',
      address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
      decimals: 18,
    })
    expect(bnb.find((t) => t.symbol === 'USDT')?.decimals).toBe(18)
    expect(manifest.supportedTokens['1']?.find((t) => t.symbol === 'USDC')?.decimals).toBe(6)
  })

  it('lists the ten chains of spec 2.8', () => {
    expect(manifest.chains.map((c) => c.id)).toEqual(['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL', 'SOL', 'TRX'])
    expect(manifest.chains.find((c) => c.id === 'CEL')).toMatchObject({ name: 'Celo', chainId: 42220, tokens: ['cKES'] })
  })

  it('fills {app_url} in the TRX note and leaves no placeholder anywhere', () => {
    const trx = manifest.chains.find((c) => c.id === 'TRX')
    expect(trx?.note).toContain(APP_URL)
    expect(trx?.note).toMatch(/user-signed/i)
    expect(JSON.stringify(manifest)).not.toContain('{app_url}')
  })

  it('has the 17 corridors of spec 2.9, Tron rows not agent-callable', () => {
    expect(manifest.corridors).toHaveLength(17)
    const notCallable = manifest.corridors.filter((c) => !c.agentCallable).map((c) => `${c.from}->${c.to}`)
    expect(notCallable).toEqual(['USDT-TRC20->USDC', 'USDT-TRC20->EURC'])
    expect(manifest.corridors.find((c) => c.from === 'USDC' && c.to === 'cKES')).toMatchObject({ chains: ['CEL'], agentCallable: true })
  })

  it('describes the x402 rail: endpoints, payment manifest, USD 0.02 = 20000 atomic USDC on Base', () => {
    const { x402 } = manifest.agentPayments
    expect(x402.quoteEndpoint).toBe('POST /api/x402/quote')
    expect(x402.swapEndpoint).toBe('POST /api/x402/swap')
    expect(x402.manifest).toBe('/.well-known/x402.json')
    expect(x402.price).toEqual({ amount: '0.02', currency: 'USD', asset: 'USDC', network: 'base', atomicAmount: '20000' })
    expect(x402.description).toMatch(/\S/)
  })

  it('describes the MPP rail with its own quote and swap endpoints, 0.02 pathUSD', () => {
    const { mpp } = manifest.agentPayments
    expect(mpp.quoteEndpoint).toBe('POST /api/mpp/quote')
    expect(mpp.swapEndpoint).toBe('POST /api/mpp/swap')
    expect(mpp.price).toMatchObject({ amount: '0.02', asset: 'pathUSD', atomicAmount: '20000' })
  })

  it('prices quotes free and swaps at 0.5% all-in plus the agent fee', () => {
    expect(manifest.pricing.quote).toBe('free')
    expect(manifest.pricing.swap).toContain('0.5%')
    expect(manifest.pricing.swap).toContain('0.02')
    expect(manifest.pricing.benchmark).toMatch(/\S/)
    expect(manifest.moat.summary).toMatch(/\S/)
    expect(manifest.moat.wedge).toMatch(/\S/)
  })

  it('explains the unsupported-pair answer of spec 2.3', () => {
    expect(manifest.discovery.unsupportedPairResponse).toContain('no_route_found')
    expect(manifest.discovery.unsupportedPairResponse).toContain('"supported": false')
  })

  it('says how to follow a built swap: the status endpoint without a key, the hint and the MCP tool (issue 18)', () => {
    expect(manifest.discovery.swapStatus).toContain('GET /api/v1/swap/{ref}/status (no key')
    expect(manifest.discovery.swapStatus).toContain('POST /api/v1/swap/{ref}/transaction')
    expect(manifest.discovery.swapStatus).toContain('track_swap')
  })

  it('is the same document on every call (no clock or randomness in it)', async () => {
    const again = await readJson<Manifest>(await get(testApp(), '/api/mpp/routes'))
    expect(again).toEqual(manifest)
  })
})
