import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getAddress } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { CatalogueError } from '../../src/engine/index.ts'

const MANIFEST = new URL('../../manifest', import.meta.url).pathname
const { catalogue, files } = loadCatalogue(MANIFEST)

// ---- The spec's tables (spec 2.8 and 2.9), copied as data. ----

const SPEC_CHAINS = [
  { id: 'ETH', name: 'Ethereum', chainId: 1, tokens: 'USDC USDT DAI EURe GBPe EURC PYUSD USDe sUSDe USDS FDUSD RLUSD USDD EURT XSGD' },
  { id: 'BAS', name: 'Base', chainId: 8453, tokens: 'USDC USDT DAI EURC PYUSD cNGN USDS' },
  { id: 'POL', name: 'Polygon', chainId: 137, tokens: 'USDC USDT DAI EURe GBPe cNGN ZARP USDe EURT XSGD' },
  { id: 'ARB', name: 'Arbitrum', chainId: 42161, tokens: 'USDC USDT DAI USDe sUSDe' },
  { id: 'OPT', name: 'Optimism', chainId: 10, tokens: 'USDC USDT DAI USDe' },
  { id: 'BNB', name: 'BNB Chain', chainId: 56, tokens: 'USDC USDT DAI FDUSD USDD' },
  { id: 'GNO', name: 'Gnosis', chainId: 100, tokens: 'EURe GBPe' },
  { id: 'CEL', name: 'Celo', chainId: 42220, tokens: 'cKES' },
  { id: 'SOL', name: 'Solana', chainId: 1151111081099710, tokens: 'USDC USDT EURC PYUSD' },
  { id: 'TRX', name: 'Tron', chainId: 728126428, tokens: 'USDT-TRC20' },
] as const

/** Where the manifest departs from the spec's token lists; each departure must be explained by the chain's note. */
const DROPPED_FROM_SPEC: Record<string, readonly string[]> = { BAS: ['PYUSD'], POL: ['USDe'] }

/** Spec 2.8 decimals: 6 for these, 18 for the rest. */
const SPEC_SIX_DECIMALS = new Set(['USDC', 'USDT', 'EURC', 'PYUSD', 'cNGN', 'RLUSD', 'EURT', 'XSGD', 'USDT-TRC20'])
/** DESIGN 7.3 and real contracts: the manifest's decimals win over the spec where they differ. */
const DECIMALS_OVERRIDES: Record<string, number> = { 'BNB:USDC': 18, 'BNB:USDT': 18, 'ETH:RLUSD': 18 }

const SPEC_CORRIDORS = [
  { from: 'EURe', to: 'USDC', chains: ['POL', 'GNO', 'ETH'], agentCallable: true },
  { from: 'USDC', to: 'EURe', chains: ['POL', 'GNO', 'ETH'], agentCallable: true },
  { from: 'EURC', to: 'USDC', chains: ['ETH', 'BAS'], agentCallable: true },
  { from: 'USDC', to: 'EURC', chains: ['ETH', 'BAS'], agentCallable: true },
  { from: 'USDT', to: 'USDC', chains: ['ETH', 'POL', 'ARB', 'OPT', 'BAS'], agentCallable: true },
  { from: 'USDC', to: 'USDT', chains: ['ETH', 'POL', 'ARB', 'OPT', 'BAS', 'BNB'], agentCallable: true },
  { from: 'GBPe', to: 'USDC', chains: ['POL', 'GNO', 'ETH'], agentCallable: true },
  { from: 'USDC', to: 'GBPe', chains: ['POL', 'GNO', 'ETH'], agentCallable: true },
  { from: 'USDC', to: 'ZARP', chains: ['POL'], agentCallable: true },
  { from: 'USDC', to: 'cNGN', chains: ['POL', 'BAS'], agentCallable: true },
  { from: 'USDC', to: 'cKES', chains: ['CEL'], agentCallable: true },
  { from: 'EURe', to: 'EURC', chains: ['ETH'], agentCallable: true },
  { from: 'USDC', to: 'DAI', chains: ['ETH', 'POL', 'ARB', 'OPT'], agentCallable: true },
  { from: 'PYUSD', to: 'USDC', chains: ['ETH'], agentCallable: true },
  { from: 'USDC', to: 'XSGD', chains: ['POL', 'ETH'], agentCallable: true },
  { from: 'USDT-TRC20', to: 'USDC', chains: ['BAS', 'POL'], agentCallable: false },
  { from: 'USDT-TRC20', to: 'EURC', chains: ['BAS'], agentCallable: false },
]

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/

describe('chains (spec 2.8)', () => {
  it('lists exactly the ten chains of the spec, in order, with their names and chainIds', () => {
    expect(files.chains.chains.map(({ id, name, chainId }) => ({ id, name, chainId }))).toEqual(
      SPEC_CHAINS.map(({ id, name, chainId }) => ({ id, name, chainId })),
    )
    expect([...catalogue.chains.values()].map((chain) => [chain.id, chain.chainId])).toEqual(
      SPEC_CHAINS.map((chain) => [chain.id, chain.chainId]),
    )
  })

  it('gives TRX a note saying it is a user-signed flow outside the swap endpoints', () => {
    const note = catalogue.chains.get('TRX')?.note
    expect(note).toMatch(/user-signed/i)
    expect(note).toContain('/api/x402/swap')
    expect(note).toContain('/api/mpp/swap')
  })

  it.each(SPEC_CHAINS.map((chain) => [chain.id, chain] as const))('%s lists the spec tokens, less documented departures', (id, spec) => {
    const dropped = DROPPED_FROM_SPEC[id] ?? []
    const expected = spec.tokens.split(' ').filter((symbol) => !dropped.includes(symbol))
    expect(catalogue.chains.get(id)?.tokens).toEqual(expected)
    const note = catalogue.chains.get(id)?.note ?? ''
    for (const symbol of dropped) expect(note).toContain(symbol)
  })
})

describe('tokens (spec 2.8, DESIGN 7.3)', () => {
  const listed = [...catalogue.chains.values()].flatMap((chain) => chain.tokens.map((symbol) => ({ chain: chain.id, symbol })))

  it('has an entry for every token listed on a chain, none of them a hub', () => {
    expect(listed.length).toBe(52)
    for (const { chain, symbol } of listed) {
      const token = catalogue.tokens.get(`${chain}:${symbol}`)
      expect(token, `${chain}:${symbol}`).toBeDefined()
      expect(token?.isHub, `${chain}:${symbol}`).toBe(false)
    }
  })

  it.each(listed.map(({ chain, symbol }) => [`${chain}:${symbol}`, chain] as const))('%s has a well-formed address', (key, chain) => {
    const address = catalogue.tokens.get(key)?.address ?? ''
    if (chain === 'SOL') {
      expect(address).toMatch(BASE58)
      expect(address.length).toBeGreaterThanOrEqual(32)
      expect(address.length).toBeLessThanOrEqual(44)
    } else if (chain === 'TRX') {
      expect(address).toMatch(BASE58)
      expect(address).toMatch(/^T/)
      expect(address).toHaveLength(34)
    } else {
      expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
      expect(getAddress(address)).toBe(address)
    }
  })

  it('checksums hub tokens too', () => {
    const hubs = [...catalogue.tokens.values()].filter((token) => token.isHub)
    expect(hubs.map((token) => token.key).sort()).toEqual(['CEL:USDC', 'CEL:USDT', 'CEL:cUSD', 'GNO:USDC.e'])
    for (const hub of hubs) expect(getAddress(hub.address)).toBe(hub.address)
  })

  it('gives BNB Chain USDC and USDT 18 decimals', () => {
    expect(catalogue.tokens.get('BNB:USDC')?.decimals).toBe(18)
    expect(catalogue.tokens.get('BNB:USDT')?.decimals).toBe(18)
  })

  it("uses the spec's decimals except where a note explains the real contract differs", () => {
    for (const { chain, symbol } of listed) {
      const key = `${chain}:${symbol}`
      const specDecimals = SPEC_SIX_DECIMALS.has(symbol) ? 6 : 18
      expect(catalogue.tokens.get(key)?.decimals, key).toBe(DECIMALS_OVERRIDES[key] ?? specDecimals)
    }
    for (const key of Object.keys(DECIMALS_OVERRIDES)) {
      const entry = files.tokens.tokens.find((token) => `${token.chain}:${token.symbol}` === key)
      expect(entry?.note, key).toMatch(/spec table says 6/)
    }
  })
})

describe('corridors (spec 2.9)', () => {
  it('has exactly the 17 rows of the spec table, in order', () => {
    expect(catalogue.corridors).toHaveLength(17)
    expect(catalogue.corridors.map(({ from, to, chains, agentCallable }) => ({ from, to, chains, agentCallable }))).toEqual(SPEC_CORRIDORS)
  })

  it('gives every row a description, and the Tron rows point users to the app', () => {
    for (const row of catalogue.corridors) expect(row.description.length).toBeGreaterThan(0)
    for (const row of catalogue.corridors.filter((r) => !r.agentCallable)) expect(row.description).toContain('{app_url}')
  })
})

describe('sources', () => {
  it('names a source for every venue, bridge, token and market figure', () => {
    const sourced: [string, string][] = [
      ...files.venues.venues.map((v): [string, string] => [`venue ${v.id}`, v.source]),
      ...files.bridges.bridges.map((b): [string, string] => [`bridge ${b.id}`, b.source]),
      ...files.tokens.tokens.map((t): [string, string] => [`token ${t.chain}:${t.symbol}`, t.source]),
      ['market', files.market.source],
      ['pricing', files.pricing.source],
      ...Object.entries(files.market.chains).map(([id, c]): [string, string] => [`market chain ${id}`, c?.source ?? '']),
      ...Object.entries(files.market.fx).map(([id, fx]): [string, string] => [`fx ${id}`, fx.source]),
      ...Object.entries(files.market.tokenPrices).map(([id, p]): [string, string] => [`price ${id}`, p.source]),
      ...Object.entries(files.market.venues).map(([id, v]): [string, string] => [`venue state ${id}`, v.source]),
    ]
    expect(sourced.length).toBeGreaterThan(100)
    for (const [what, source] of sourced) expect(source.trim().length, what).toBeGreaterThanOrEqual(3)
  })

  it('has a market state for every venue and gas figures for every EVM chain', () => {
    for (const venue of files.venues.venues) expect(files.market.venues[venue.id], venue.id).toBeDefined()
    for (const id of ['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL'] as const) expect(files.market.chains[id], id).toBeDefined()
  })
})

describe('a malformed catalogue stops the load, naming file and field', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  /** Copies manifest/ to a temp dir, lets `edit` change one file's JSON, and returns the dir. */
  // biome-ignore lint/suspicious/noExplicitAny: each test edits whatever shape its manifest file has
  function corrupted(file: string, edit: (json: any) => void): string {
    const dir = mkdtempSync(join(tmpdir(), 'swapeazi-manifest-'))
    dirs.push(dir)
    cpSync(MANIFEST, dir, { recursive: true })
    const path = join(dir, `${file}.json`)
    const json: unknown = JSON.parse(readFileSync(path, 'utf8'))
    edit(json)
    writeFileSync(path, JSON.stringify(json, null, 2))
    return dir
  }

  function loadError(dir: string): CatalogueError {
    try {
      loadCatalogue(dir)
    } catch (error) {
      if (error instanceof CatalogueError) return error
      throw error
    }
    throw new Error('the corrupted catalogue loaded')
  }

  it('loads the untouched copy', () => {
    const dir = corrupted('tokens', () => {})
    expect(loadCatalogue(dir).catalogue.tokens.size).toBe(catalogue.tokens.size)
  })

  it("rejects a token's decimals written as a word", () => {
    const error = loadError(corrupted('tokens', (json) => (json.tokens[3].decimals = 'six')))
    expect(error).toBeInstanceOf(CatalogueError)
    expect(error.file).toBe('tokens')
    expect(error.field).toBe('tokens[3].decimals')
    expect(error.message).toMatchInlineSnapshot(
      `"manifest/tokens.json: tokens[3].decimals: Invalid input: expected number, received string"`,
    )
  })

  it("rejects an EVM token whose address is in Solana's form", () => {
    const error = loadError(corrupted('tokens', (json) => (json.tokens[3].address = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')))
    expect(error.field).toBe('tokens[3].address')
    expect(error.message).toMatchInlineSnapshot(`"manifest/tokens.json: tokens[3].address: must be 0x followed by 40 hex characters"`)
  })

  it("rejects a venue's contract that is not an EVM address", () => {
    const error = loadError(corrupted('venues', (json) => (json.venues[5].contract = '0x1234')))
    expect(error.field).toBe('venues[5].contract')
    expect(error.message).toMatchInlineSnapshot(`"manifest/venues.json: venues[5].contract: must be 0x followed by 40 hex characters"`)
  })

  it('rejects a venue on a discovery-only chain: no route carries Solana or Tron tokens', () => {
    const error = loadError(
      corrupted('venues', (json) => {
        json.venues[5].chain = 'SOL'
        json.venues[5].tokens = ['USDC', 'USDT']
      }),
    )
    expect(error.message).toMatchInlineSnapshot(
      `"manifest/venues.json: venues[5].tokens[0]: USDC on SOL is listed for discovery only: no venue or bridge carries it"`,
    )
  })

  it("rejects a venue's negative feePpm", () => {
    const error = loadError(corrupted('venues', (json) => (json.venues[5].feePpm = -1)))
    expect(error.field).toBe('venues[5].feePpm')
    expect(error.message).toMatchInlineSnapshot(`"manifest/venues.json: venues[5].feePpm: Too small: expected number to be >=0"`)
  })

  it('rejects a venue with no state in the market snapshot', () => {
    const error = loadError(corrupted('market', (json) => delete json.venues['pol-univ3-zarp-usdc-500']))
    expect(error.message).toMatchInlineSnapshot(`"manifest/market.json: venues.pol-univ3-zarp-usdc-500: no state for this venue"`)
  })

  it('rejects a corridor whose tokens are listed on none of its chains', () => {
    const error = loadError(
      corrupted('corridors', (json) => {
        json.corridors[11].from = 'cKES'
        json.corridors[11].to = 'ZARP'
      }),
    )
    expect(error.message).toMatchInlineSnapshot(
      `"manifest/corridors.json: corridors[11].chains[0]: neither cKES nor ZARP is listed on ETH"`,
    )
  })

  it('rejects a corridor naming a token no chain lists, even beside a listed one', () => {
    const error = loadError(corrupted('corridors', (json) => (json.corridors[2].from = 'EURX')))
    expect(error.file).toBe('corridors')
    expect(error.field).toMatch(/^corridors\[2\]/)
    expect(error.message).toMatchInlineSnapshot(`"manifest/corridors.json: corridors[2].from: EURX is not listed on any chain"`)
  })

  it('rejects a bridge endpoint on a token that is not in tokens.json', () => {
    const error = loadError(corrupted('bridges', (json) => (json.bridges[1].endpoints[2].token = 'USDX')))
    expect(error.message).toBe('manifest/bridges.json: bridges[1].endpoints[2]: USDX on ARB is not in tokens.json')
  })

  it('rejects a chain listing a token with no entry', () => {
    const error = loadError(corrupted('chains', (json) => json.chains[6].tokens.push('CHFe')))
    expect(error.message).toBe('manifest/chains.json: chains[6].tokens[2]: CHFe on GNO is not in tokens.json')
  })

  it('rejects a figure with an empty source', () => {
    const error = loadError(corrupted('bridges', (json) => (json.bridges[0].source = '')))
    expect(error.message).toBe('manifest/bridges.json: bridges[0].source: every figure needs a source')
  })

  it('rejects a file that is not JSON, naming the file', () => {
    const dir = corrupted('pricing', () => {})
    writeFileSync(join(dir, 'pricing.json'), '{ "feeBps": 50,')
    const error = loadError(dir)
    expect(error.file).toBe('pricing')
    expect(error.field).toBe('(file)')
    expect(error.message).toMatch(/^manifest\/pricing\.json: \(file\): /)
  })
})
