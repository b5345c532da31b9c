import { type ListeningApp, listenOnLoopback } from '../support/listenOnLoopback.ts'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FROM_ADDRESS, lazyMemoryStore, testApp } from '../http/testApp.ts'

// The developer portal in a real browser: Debian's chromium driven by playwright-core (no browser download).
const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] || '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

const store = lazyMemoryStore()
let server: ListeningApp | undefined
let base = ''
let browser: Browser
let context: BrowserContext
let page: Page
/** Console errors and uncaught exceptions of the page, except the ones a test provokes on purpose. */
const pageErrors: string[] = []
/** "<status> <url>" of the failures this suite provokes on purpose. */
const provoked = new Set<string>()

beforeAll(async () => {
  // The wall clock: the page shows when a refused key may be retried, relative to now.
  const app = testApp({ clock: Date.now, store })
  // Opened here, under the hook's timeout, not by the page's first key request under a click's.
  await store.sql.query('select 1')
  server = await listenOnLoopback(app.fetch)
  base = server.base
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS })
  context = await browser.newContext()
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  page = await context.newPage()
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    // Chromium logs every 4xx answer of fetch as "Failed to load resource"; the ones this suite provokes are expected.
    const status = /^Failed to load resource: the server responded with a status of (\d{3})/.exec(message.text())?.[1]
    if (status !== undefined && provoked.has(`${status} ${message.location().url}`)) return
    pageErrors.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`))
  await page.goto(`${base}/`)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await store.sql.close()
})

const KEY_PATTERN = /^se_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/

describe('developer portal in headless Chromium', () => {
  it('shows the service and the corridor table', async () => {
    await expect(page.title()).resolves.toBe('SwapEazi: stablecoin routing for AI agents')
    expect(await page.locator('h1').textContent()).toBe('Stablecoin routing for AI agents')
    expect(await page.locator('#corridors tbody tr').count()).toBe(17)
    expect(await page.locator('#corridors a[href="/tron"]').count()).toBe(2)
  })

  it('issues a key, shows it once in a read-only field, and copies it', async () => {
    await expect(page.locator('#key-result').isVisible()).resolves.toBe(false)
    await page.click('#issue-key')
    await page.locator('#key-result').waitFor({ state: 'visible' })
    const key = await page.locator('#key-value').inputValue()
    expect(key).toMatch(KEY_PATTERN)
    expect(await page.locator('#key-value').getAttribute('readonly')).not.toBeNull()
    expect(await page.locator('#key-meta').textContent()).toMatch(/^Key id \S+ · tier free · issued /)
    expect(await page.locator('#key-notice').textContent()).toContain('shown once')

    await page.click('#copy-key')
    await expect.poll(() => page.locator('#copy-status').textContent()).toBe('Copied to the clipboard.')
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key)
  })

  it('issues two more, then shows the limit of 3 per IP with when to retry', async () => {
    const keys = new Set<string>([await page.locator('#key-value').inputValue()])
    for (let i = 0; i < 2; i += 1) {
      const answered = page.waitForResponse((response) => response.url() === `${base}/api/v1/keys`)
      await page.click('#issue-key')
      expect((await answered).status()).toBe(201)
      await page.waitForFunction(`document.getElementById('issue-key').disabled === false`)
      keys.add(await page.locator('#key-value').inputValue())
    }
    expect(keys.size).toBe(3)
    for (const key of keys) expect(key).toMatch(KEY_PATTERN)

    provoked.add(`429 ${base}/api/v1/keys`)
    const refused = page.waitForResponse((response) => response.url() === `${base}/api/v1/keys`)
    await page.click('#issue-key')
    const response = await refused
    expect(response.status()).toBe(429)
    expect(Number(response.headers()['retry-after'])).toBeGreaterThan(24 * 3600 - 120)
    const error = page.locator('#key-error')
    await error.waitFor({ state: 'visible' })
    const message = (await error.textContent()) ?? ''
    expect(message).toContain('Limit reached.')
    expect(message).toContain('This address has had 3 keys in the last 24 hours.')
    expect(message).toMatch(/You can try again in (24 h|23 h \d+ min) \(after .+\)\./)
    // The refused attempt shows no key: the last one was shown once and is gone.
    await expect(page.locator('#key-result').isVisible()).resolves.toBe(false)
    expect(await page.locator('#key-value').inputValue()).toBe('')
  })

  it('gets a free quote and shows what the API answers', async () => {
    await page.fill('#from-address', FROM_ADDRESS)
    const answered = page.waitForResponse((response) => response.url() === `${base}/api/x402/quote`)
    await page.click('#get-quote')
    const quote = (await (await answered).json()) as { toAmount: string; toAmountMin: string; fee: { amount: string; token: string } }
    await page.locator('#quote-result').waitFor({ state: 'visible' })
    expect(await page.locator('#quote-to-amount').textContent()).toBe(`${quote.toAmount} USDT on ETH`)
    expect(quote.toAmount).toMatch(/^[0-9]+(\.[0-9]+)?$/)
    expect(await page.locator('#quote-to-amount-min').textContent()).toBe(`${quote.toAmountMin} USDT`)
    expect(await page.locator('#quote-fee').textContent()).toBe(`${quote.fee.amount} ${quote.fee.token} (0.5%, all-in)`)
    expect(await page.locator('#quote-route li').count()).toBeGreaterThan(0)
    expect(await page.locator('#quote-duration').textContent()).toMatch(/^about \d+ s$/)
    await expect(page.locator('#quote-error').isVisible()).resolves.toBe(false)
  })

  it('refills the token list when the chain changes, and shows a problem detail for a bad request', async () => {
    await page.selectOption('#to-chain', 'CEL')
    expect(await page.locator('#to-token option').allTextContents()).toEqual(['cKES'])
    await page.selectOption('#to-chain', 'ETH')
    await page.selectOption('#to-token', 'USDT')

    provoked.add(`400 ${base}/api/x402/quote`)
    await page.fill('#from-address', '0x123')
    await page.click('#get-quote')
    const error = page.locator('#quote-error')
    await error.waitFor({ state: 'visible' })
    expect(await error.textContent()).toBe('The request body failed validation: fromAddress must be 0x followed by 40 hex characters.')
    await expect(page.locator('#quote-result').isVisible()).resolves.toBe(false)
  })

  it('has no console errors, CSP violations or uncaught exceptions', () => {
    expect(pageErrors).toEqual([])
  })
})
