import { describe, expect, it } from 'vitest'
import { loadConfig, VARIABLES } from '../src/config.ts'

describe('loadConfig', () => {
  it('runs on defaults with an empty environment', () => {
    const config = loadConfig({})
    expect(config.host).toBe('127.0.0.1')
    expect(config.port).toBe(8402)
    expect(config.publicUrl).toBe('http://127.0.0.1:8402')
    expect(config.appUrl).toBe('https://app.swapeazi.com')
    expect(config.logLevel).toBe('info')
    expect(config.quoteSecret).toBeUndefined()
    expect(config.manifestDir.endsWith('/manifest')).toBe(true)
  })

  it('reads every documented variable', () => {
    const config = loadConfig({
      SWAPEAZI_HOST: '0.0.0.0',
      SWAPEAZI_PORT: '9000',
      SWAPEAZI_PUBLIC_URL: 'https://api.example.test/',
      SWAPEAZI_APP_URL: 'https://app.example.test',
      SWAPEAZI_MANIFEST_DIR: '/srv/manifest',
      SWAPEAZI_QUOTE_SECRET: 'x'.repeat(32),
      SWAPEAZI_LOG_LEVEL: 'silent',
    })
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      publicUrl: 'https://api.example.test',
      appUrl: 'https://app.example.test',
      manifestDir: '/srv/manifest',
      logLevel: 'silent',
    })
    expect(Buffer.from(config.quoteSecret ?? []).toString()).toBe('x'.repeat(32))
  })

  it('names each invalid variable', () => {
    expect(() => loadConfig({ SWAPEAZI_PORT: 'eighty', SWAPEAZI_QUOTE_SECRET: 'short' })).toThrowErrorMatchingInlineSnapshot(
      `[Error: invalid configuration: SWAPEAZI_PORT: must be a whole number in decimal digits (no sign, exponent, hex prefix or spaces); SWAPEAZI_QUOTE_SECRET: must be at least 32 characters]`,
    )
  })

  it.each(['0x10', '1e3', '+8402', '84 02', '8402.0', '-1', '65536', '99999999999999999999'])(
    'refuses SWAPEAZI_PORT=%j rather than read it as a number nobody meant',
    (port) => {
      expect(() => loadConfig({ SWAPEAZI_PORT: port })).toThrow(/^invalid configuration: SWAPEAZI_PORT: /)
    },
  )

  it.each([
    ['SWAPEAZI_RATE_LIMIT_FREE', '0x10'],
    ['SWAPEAZI_SHUTDOWN_GRACE_MS', '1e4'],
    ['SWAPEAZI_TEMPO_CHAIN_ID', '+4217'],
  ])('refuses %s=%j the same way', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      `${name}: must be a whole number in decimal digits (no sign, exponent, hex prefix or spaces)`,
    )
  })

  it.each(['postgres://postgres@127.0.0.1:99999/test', 'postgres://postgres@127.0.0.1:abc/test', 'postgresql://u:p@ss@[::1/db'])(
    'refuses DATABASE_URL=%s naming the variable, not as an "Invalid URL" from the driver',
    (url) => {
      expect(() => loadConfig({ DATABASE_URL: url })).toThrow(
        'invalid configuration: DATABASE_URL: is not a URL that parses: check the host and the port (a number from 1 to 65535)',
      )
    },
  )

  it('reads whole numbers written in decimal digits, leading zeros included', () => {
    expect(loadConfig({ SWAPEAZI_PORT: '0' }).port).toBe(0)
    expect(loadConfig({ SWAPEAZI_PORT: '08402' }).port).toBe(8402)
    expect(loadConfig({ SWAPEAZI_RATE_LIMIT_FREE: '16' }).rateLimits.free).toBe(16)
  })

  it('defaults to the inert CREATE2 router, takes one address for every chain and per-chain exceptions', () => {
    expect(loadConfig({}).router).toEqual({ address: '0x239CdA85d5486f3EC101538b4b7A925113C15045', byChain: {}, isDefault: true })
    const config = loadConfig({
      SWAPEAZI_ROUTER_ADDRESS: '0x1111111111111111111111111111111111111111',
      SWAPEAZI_ROUTER_ADDRESSES: '{"CEL":"0x2222222222222222222222222222222222222222"}',
    })
    expect(config.router).toEqual({
      address: '0x1111111111111111111111111111111111111111',
      byChain: { CEL: '0x2222222222222222222222222222222222222222' },
      isDefault: false,
    })
  })

  it('rejects a router address with a bad checksum, malformed JSON and an unknown chain', () => {
    expect(() => loadConfig({ SWAPEAZI_ROUTER_ADDRESS: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' })).toThrow(
      /SWAPEAZI_ROUTER_ADDRESS: has a mixed-case EIP-55 checksum that does not match/,
    )
    expect(() => loadConfig({ SWAPEAZI_ROUTER_ADDRESSES: '{BAS:1}' })).toThrow(/must be a JSON object/)
    expect(() => loadConfig({ SWAPEAZI_ROUTER_ADDRESSES: '{"XYZ":"0x2222222222222222222222222222222222222222"}' })).toThrow(
      /SWAPEAZI_ROUTER_ADDRESSES/,
    )
  })

  it('defaults to the embedded store under ./data, ledger settlement and the inert payTo', () => {
    const config = loadConfig({})
    expect(config.store).toEqual({ driver: 'pglite', dataDir: `${process.cwd()}/data` })
    expect(config.payments).toEqual({
      payTo: '0x000000000000000000000000000000000000dEaD',
      isPayToDefault: true,
      settlement: { mode: 'ledger' },
    })
    expect(config.sanctionsFile.endsWith('/manifest/sanctioned-addresses.json')).toBe(true)
    expect(loadConfig({ SWAPEAZI_DATA_DIR: 'memory://' }).store).toEqual({ driver: 'pglite', dataDir: 'memory://' })
  })

  it('uses PostgreSQL when DATABASE_URL is set', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }).store).toEqual({
      driver: 'postgres',
      url: 'postgres://postgres@127.0.0.1:5432/test',
    })
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/)
  })

  it('configures each settlement mode and names what a mode cannot run without', () => {
    const payTo = '0x3333333333333333333333333333333333333333'
    const key = `0x${'1'.repeat(64)}`
    expect(
      loadConfig({
        SWAPEAZI_SETTLEMENT: 'onchain',
        SWAPEAZI_BASE_RPC_URL: 'http://127.0.0.1:8545',
        SWAPEAZI_SETTLER_PRIVATE_KEY: key,
        SWAPEAZI_PAY_TO: payTo,
      }).payments,
    ).toEqual({
      payTo,
      isPayToDefault: false,
      settlement: { mode: 'onchain', rpcUrl: 'http://127.0.0.1:8545', settlerPrivateKey: key },
    })
    expect(
      loadConfig({ SWAPEAZI_SETTLEMENT: 'facilitator', SWAPEAZI_FACILITATOR_URL: 'https://facilitator.example/', SWAPEAZI_PAY_TO: payTo })
        .payments.settlement,
    ).toEqual({
      mode: 'facilitator',
      url: 'https://facilitator.example',
    })
    expect(() => loadConfig({ SWAPEAZI_SETTLEMENT: 'onchain' })).toThrowErrorMatchingInlineSnapshot(
      `[Error: invalid configuration: SWAPEAZI_BASE_RPC_URL: is required when SWAPEAZI_SETTLEMENT=onchain; SWAPEAZI_SETTLER_PRIVATE_KEY: is required when SWAPEAZI_SETTLEMENT=onchain; SWAPEAZI_PAY_TO: is required when SWAPEAZI_SETTLEMENT=onchain]`,
    )
    expect(() => loadConfig({ SWAPEAZI_SETTLEMENT: 'facilitator', SWAPEAZI_PAY_TO: payTo })).toThrowErrorMatchingInlineSnapshot(
      `[Error: invalid configuration: SWAPEAZI_FACILITATOR_URL: is required when SWAPEAZI_SETTLEMENT=facilitator]`,
    )
    expect(() => loadConfig({ SWAPEAZI_SETTLEMENT: 'cash' })).toThrow(/SWAPEAZI_SETTLEMENT/)
  })

  it('turns the MPP rail on only with a Tempo RPC, and then only with our own Tempo address (DESIGN 7.25)', () => {
    expect(loadConfig({}).payments.mpp).toBeUndefined()
    expect(loadConfig({ SWAPEAZI_TEMPO_PAY_TO: '0x3333333333333333333333333333333333333333' }).payments.mpp).toBeUndefined()
    const tempoPayTo = '0x4444444444444444444444444444444444444444'
    expect(
      loadConfig({
        SWAPEAZI_TEMPO_RPC_URL: 'http://127.0.0.1:9545',
        SWAPEAZI_TEMPO_PAY_TO: tempoPayTo,
        SWAPEAZI_PUBLIC_URL: 'https://api.swapeazi.test/',
      }).payments.mpp,
    ).toEqual({ rpcUrl: 'http://127.0.0.1:9545', chainId: 4217, recipient: tempoPayTo, realm: 'api.swapeazi.test' })
    const secretKey = 'k'.repeat(32)
    expect(
      loadConfig({
        SWAPEAZI_TEMPO_RPC_URL: 'http://127.0.0.1:9545',
        SWAPEAZI_TEMPO_PAY_TO: tempoPayTo,
        SWAPEAZI_TEMPO_CHAIN_ID: '42431',
        SWAPEAZI_MPP_REALM: 'pay.swapeazi.test',
        SWAPEAZI_MPP_SECRET_KEY: secretKey,
      }).payments.mpp,
    ).toEqual({ rpcUrl: 'http://127.0.0.1:9545', chainId: 42431, recipient: tempoPayTo, realm: 'pay.swapeazi.test', secretKey })
    // The Base wallet is never assumed to be ours on Tempo.
    expect(() => loadConfig({ SWAPEAZI_TEMPO_RPC_URL: 'http://127.0.0.1:9545', SWAPEAZI_PAY_TO: tempoPayTo })).toThrow(
      /SWAPEAZI_TEMPO_PAY_TO: is required when SWAPEAZI_TEMPO_RPC_URL is set/,
    )
    expect(() => loadConfig({ SWAPEAZI_MPP_REALM: 'a "quoted" realm' })).toThrow(/SWAPEAZI_MPP_REALM/)
    expect(() => loadConfig({ SWAPEAZI_MPP_SECRET_KEY: 'short' })).toThrow(/SWAPEAZI_MPP_SECRET_KEY: must be at least 32 characters/)
    expect(() => loadConfig({ SWAPEAZI_TEMPO_RPC_URL: 'not a url' })).toThrow(/SWAPEAZI_TEMPO_RPC_URL/)
  })

  it('reads the API key secret and the proxy setting', () => {
    expect(loadConfig({}).keySecret).toBeUndefined()
    expect(loadConfig({}).trustProxy).toBe(0)
    const config = loadConfig({ SWAPEAZI_KEY_SECRET: 'k'.repeat(32), SWAPEAZI_TRUST_PROXY: 'true' })
    expect(Buffer.from(config.keySecret ?? new Uint8Array()).toString()).toBe('k'.repeat(32))
    expect(config.trustProxy).toBe(1)
    // DESIGN 7.28: the number of proxies we operate, or their addresses; an empty value is unset.
    expect(loadConfig({ SWAPEAZI_TRUST_PROXY: '1' }).trustProxy).toBe(1)
    expect(loadConfig({ SWAPEAZI_TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ SWAPEAZI_TRUST_PROXY: 'false' }).trustProxy).toBe(0)
    expect(loadConfig({ SWAPEAZI_TRUST_PROXY: '' }).trustProxy).toBe(0)
    expect(loadConfig({ SWAPEAZI_TRUST_PROXY: '10.0.0.1, ::1' }).trustProxy).toEqual(['10.0.0.1', '::1'])
    expect(() => loadConfig({ SWAPEAZI_TRUST_PROXY: '11' })).toThrow(/SWAPEAZI_TRUST_PROXY/)
    expect(() => loadConfig({ SWAPEAZI_TRUST_PROXY: '10.0.0.1, proxy.local' })).toThrow(/SWAPEAZI_TRUST_PROXY/)
    expect(() => loadConfig({ SWAPEAZI_KEY_SECRET: 'short' })).toThrow(/SWAPEAZI_KEY_SECRET: must be at least 32 characters/)
    expect(() => loadConfig({ SWAPEAZI_TRUST_PROXY: 'yes' })).toThrow(/SWAPEAZI_TRUST_PROXY/)
  })

  it('reads the rate limits, with the DESIGN 7.16 defaults', () => {
    expect(loadConfig({}).rateLimits).toEqual({ anonymous: 30, free: 60, pro: 600, holdRefusalsMs: 1000 })
    expect(
      loadConfig({
        SWAPEAZI_RATE_LIMIT_ANONYMOUS: '5',
        SWAPEAZI_RATE_LIMIT_FREE: '50',
        SWAPEAZI_RATE_LIMIT_PRO: '500',
        SWAPEAZI_REFUSAL_HOLD_MS: '0',
      }).rateLimits,
    ).toEqual({
      anonymous: 5,
      free: 50,
      pro: 500,
      holdRefusalsMs: 0,
    })
    expect(() => loadConfig({ SWAPEAZI_RATE_LIMIT_FREE: '0' })).toThrow(/SWAPEAZI_RATE_LIMIT_FREE/)
    expect(() => loadConfig({ SWAPEAZI_REFUSAL_HOLD_MS: '60000' })).toThrow(/SWAPEAZI_REFUSAL_HOLD_MS/)
  })

  it('reads the MCP settings: the budget in atomic USDC, exactly, and the /mcp host allow-list', () => {
    const defaults = loadConfig({}).mcp
    expect(defaults).toEqual({
      dailyBudgetAtomic: 1_000_000n,
      allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
      serverPaysOnHttp: false,
      serverPaysPerIpHour: 5,
      shareApiKeyOnHttp: false,
    })
    const key = `0x${'ab'.repeat(32)}`
    const set = loadConfig({
      SWAPEAZI_BASE_URL: 'https://api.example.test/',
      SWAPEAZI_WALLET_PRIVATE_KEY: key,
      SWAPEAZI_DAILY_BUDGET_USDC: '0.100001',
      SWAPEAZI_API_KEY: 'se_abc.def',
      SWAPEAZI_PUBLIC_URL: 'https://swap.example.test',
      SWAPEAZI_MCP_SERVER_PAYS: 'true',
      SWAPEAZI_MCP_SERVER_PAYS_PER_IP_HOUR: '12',
      SWAPEAZI_MCP_SHARE_API_KEY: 'true',
    }).mcp
    expect(set).toEqual({
      baseUrl: 'https://api.example.test',
      walletPrivateKey: key,
      dailyBudgetAtomic: 100_001n,
      apiKey: 'se_abc.def',
      allowedHosts: ['localhost', '127.0.0.1', '[::1]', 'swap.example.test'],
      serverPaysOnHttp: true,
      serverPaysPerIpHour: 12,
      shareApiKeyOnHttp: true,
    })
    for (const [name, value] of [
      ['SWAPEAZI_MCP_SERVER_PAYS', 'yes'],
      ['SWAPEAZI_MCP_SERVER_PAYS_PER_IP_HOUR', '0'],
      ['SWAPEAZI_MCP_SHARE_API_KEY', '1'],
    ] as const)
      expect(() => loadConfig({ [name]: value })).toThrow(name)
    expect(loadConfig({ SWAPEAZI_MCP_ALLOWED_HOSTS: ' Agents.Example.Test , 10.0.0.5 ' }).mcp.allowedHosts).toEqual([
      'agents.example.test',
      '10.0.0.5',
    ])
    for (const budget of ['1e3', '0.1234567', '-1', '1,00'])
      expect(() => loadConfig({ SWAPEAZI_DAILY_BUDGET_USDC: budget })).toThrow(/SWAPEAZI_DAILY_BUDGET_USDC/)
    expect(() => loadConfig({ SWAPEAZI_WALLET_PRIVATE_KEY: '${SWAPEAZI_WALLET_PRIVATE_KEY}' })).toThrow(/SWAPEAZI_WALLET_PRIVATE_KEY/)
  })

  it('takes an empty or blank variable as unset, for every variable, as .env files write an unset one', () => {
    expect(VARIABLES).toContain('SWAPEAZI_BASE_URL')
    expect(VARIABLES.length).toBeGreaterThan(30)
    const defaults = loadConfig({})
    expect(loadConfig(Object.fromEntries(VARIABLES.map((name) => [name, ''])))).toEqual(defaults)
    expect(loadConfig(Object.fromEntries(VARIABLES.map((name) => [name, '  '])))).toEqual(defaults)
    expect(loadConfig({ SWAPEAZI_BASE_URL: '' }).mcp.baseUrl).toBeUndefined()
    expect(loadConfig({ SWAPEAZI_PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 8402, store: { driver: 'pglite' } })
  })

  it('drops spaces and line breaks around a value, as .env files and copied values carry them', () => {
    const config = loadConfig({ SWAPEAZI_HOST: ' 127.0.0.2 ', SWAPEAZI_PORT: '8403\n', SWAPEAZI_PUBLIC_URL: '\thttps://swap.example/ ' })
    expect(config).toMatchObject({ host: '127.0.0.2', port: 8403, publicUrl: 'https://swap.example' })
    // The HMAC secrets are keys byte for byte: a line break a secrets file ends in stays part of the key.
    const secret = `${'k'.repeat(40)}\n`
    const keyed = loadConfig({ SWAPEAZI_KEY_SECRET: secret, SWAPEAZI_QUOTE_SECRET: ` ${secret}` })
    expect(Buffer.from(keyed.keySecret ?? []).toString()).toBe(secret)
    expect(Buffer.from(keyed.quoteSecret ?? []).toString()).toBe(` ${secret}`)
    // Its length is counted without them: 31 characters and a line break are too short.
    expect(() => loadConfig({ SWAPEAZI_KEY_SECRET: `${'k'.repeat(31)}\n` })).toThrow(/SWAPEAZI_KEY_SECRET: must be at least 32 characters/)
  })

  it('reads the slow-client timeouts and the shutdown grace, and refuses a header timeout longer than the request one', () => {
    expect(loadConfig({}).server).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, shutdownGraceMs: 10_000 })
    expect(
      loadConfig({ SWAPEAZI_HEADERS_TIMEOUT_MS: '500', SWAPEAZI_REQUEST_TIMEOUT_MS: '800', SWAPEAZI_SHUTDOWN_GRACE_MS: '0' }).server,
    ).toEqual({ headersTimeoutMs: 500, requestTimeoutMs: 800, shutdownGraceMs: 0 })
    expect(() => loadConfig({ SWAPEAZI_HEADERS_TIMEOUT_MS: '40000' })).toThrowErrorMatchingInlineSnapshot(
      `[Error: invalid configuration: SWAPEAZI_HEADERS_TIMEOUT_MS: must not be more than SWAPEAZI_REQUEST_TIMEOUT_MS (the whole request includes its headers)]`,
    )
    expect(() => loadConfig({ SWAPEAZI_REQUEST_TIMEOUT_MS: '50' })).toThrow(/SWAPEAZI_REQUEST_TIMEOUT_MS/)
  })

  it('reads the live market and lifecycle variables, and names what is wrong with each on one line, never echoing a value', () => {
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: '{"BAS":"https://base.example/v2/KEY"}',
      SWAPEAZI_CONFIRMATIONS: '{"BAS":3}',
      SWAPEAZI_RELAYER_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
    })
    expect(config.market.rpcUrls).toEqual({ BAS: 'https://base.example/v2/KEY' })
    const refused = (env: Record<string, string>): string => {
      try {
        loadConfig(env)
      } catch (error) {
        return (error as Error).message
      }
      throw new Error(`accepted ${JSON.stringify(env)}`)
    }
    const shape = 'invalid configuration: SWAPEAZI_RPC_URLS: must be a JSON object such as {"BAS":"https://...","POL":"https://..."}'
    expect(refused({ SWAPEAZI_RPC_URLS: 'null' })).toBe(shape)
    expect(refused({ SWAPEAZI_RPC_URLS: '[]' })).toBe(shape)
    expect(refused({ SWAPEAZI_RPC_URLS: '{"BAS' })).toBe(shape)
    expect(refused({ SWAPEAZI_RPC_URLS: '{"BAS":"ftp://x"}' })).toBe(
      'invalid configuration: SWAPEAZI_RPC_URLS.BAS: must be an http:// or https:// URL',
    )
    expect(refused({ SWAPEAZI_RPC_URLS: '{"XYZ":"https://x"}' })).toBe(
      'invalid configuration: SWAPEAZI_RPC_URLS: XYZ: not a chain read live; use ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL',
    )
    const confirmations =
      'invalid configuration: SWAPEAZI_CONFIRMATIONS: must be a JSON object of chain code to block count such as {"BAS":10,"POL":128}'
    expect(refused({ SWAPEAZI_CONFIRMATIONS: '5' })).toBe(confirmations)
    expect(refused({ SWAPEAZI_CONFIRMATIONS: '{"XYZ":5}' })).toBe(
      'invalid configuration: SWAPEAZI_CONFIRMATIONS: XYZ: not a chain read live; use ETH, POL, ARB, OPT, BAS, BNB, GNO or CEL',
    )
    expect(refused({ SWAPEAZI_CONFIRMATIONS: '{"BAS":-1}' })).toMatch(/^invalid configuration: SWAPEAZI_CONFIRMATIONS\.BAS: /)
    // A key of the right shape that is no key (0, or the curve order n and above) is refused at once, by name.
    const notAKey = 'is not a valid secp256k1 private key (it must be a number from 1 to n - 1)'
    for (const name of [
      'SWAPEAZI_RELAYER_PRIVATE_KEY',
      'SWAPEAZI_SETTLER_PRIVATE_KEY',
      'SWAPEAZI_DEPLOYER_PRIVATE_KEY',
      'SWAPEAZI_WALLET_PRIVATE_KEY',
    ])
      for (const key of [
        `0x${'00'.repeat(32)}`,
        '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141',
        `0x${'ff'.repeat(32)}`,
      ]) {
        const message = refused({ [name]: key })
        expect(message).toBe(`invalid configuration: ${name}: ${notAKey}`)
        expect(message).not.toContain(key.slice(2, 12))
      }
    expect(loadConfig({ SWAPEAZI_RELAYER_PRIVATE_KEY: '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140' })).toBeDefined()
    // Every refusal is one line.
    for (const env of [{ SWAPEAZI_PORT: 'x', SWAPEAZI_TRACKER: 'yes' }, { SWAPEAZI_SETTLEMENT: 'onchain' }])
      expect(refused(env)).not.toContain('\n')
  })

  it("reads Across's API for the live market by default, none with off, and refuses anything else on one line", () => {
    expect(loadConfig({}).market.acrossApiUrl).toBe('https://app.across.to/api')
    expect(loadConfig({ SWAPEAZI_ACROSS_API_URL: '' }).market.acrossApiUrl).toBe('https://app.across.to/api')
    expect(loadConfig({ SWAPEAZI_ACROSS_API_URL: 'off' }).market).not.toHaveProperty('acrossApiUrl')
    expect(loadConfig({ SWAPEAZI_ACROSS_API_URL: 'http://127.0.0.1:9/api/' }).market.acrossApiUrl).toBe('http://127.0.0.1:9/api')
    for (const value of ['ftp://x', 'no', 'OFF ', 'app.across.to/api'])
      expect(() => loadConfig({ SWAPEAZI_ACROSS_API_URL: value })).toThrow(
        new Error(
          "invalid configuration: SWAPEAZI_ACROSS_API_URL: must be off, or the http:// or https:// URL of Across's API (default https://app.across.to/api)",
        ),
      )
  })
})
