import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.ts'

describe('loadConfig', () => {
  it('runs on defaults with an empty environment', () => {
    const config = loadConfig({})
    expect(config.host).toBe('127.0.0.1')
    expect(config.port).toBe(8402)
    expect(config.publicUrl).toBe('http://127.0.0.1:8402')
    expect(config.appUrl).toBe('https://app.swapeazi.com')
    expect(config.logLevel).toBe('info')
    expect(config.hasStableQuoteSecret).toBe(false)
    expect(config.quoteSecret.byteLength).toBe(32)
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
      hasStableQuoteSecret: true,
      logLevel: 'silent',
    })
    expect(Buffer.from(config.quoteSecret).toString()).toBe('x'.repeat(32))
  })

  it('names each invalid variable', () => {
    expect(() => loadConfig({ SWAPEAZI_PORT: 'eighty', SWAPEAZI_QUOTE_SECRET: 'short' })).toThrowErrorMatchingInlineSnapshot(`
      [Error: invalid configuration:
        SWAPEAZI_PORT: Invalid input: expected number, received NaN
        SWAPEAZI_QUOTE_SECRET: must be at least 32 characters]
    `)
  })

  it('gives each process its own random quote secret when none is configured', () => {
    expect(Buffer.from(loadConfig({}).quoteSecret).equals(Buffer.from(loadConfig({}).quoteSecret))).toBe(false)
  })
})
