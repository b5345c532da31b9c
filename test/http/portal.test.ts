import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { cellStatus } from '../../src/engine/index.ts'
import { escapeHtml } from '../../src/http/portal/escapeHtml.ts'
import { PORTAL_CSP } from '../../src/http/portalEndpoints.ts'
import { CorridorsFile } from '../../src/schemas/catalogue.ts'
import { APP_URL, MANIFEST_DIR, get, testApp } from './testApp.ts'

const manifestCorridors = CorridorsFile.parse(JSON.parse(readFileSync(join(MANIFEST_DIR, 'corridors.json'), 'utf8'))).corridors

/** The HTML of the element `<tag id="id">…</tag>` (no nesting of the same tag inside, which holds for our sections). */
function element(html: string, tag: string, id: string): string {
  const match = new RegExp(`<${tag} id="${id}"[^>]*>([\\s\\S]*?)</${tag}>`).exec(html)
  if (!match?.[1]) throw new Error(`no <${tag} id="${id}"> in the page`)
  return match[1]
}

/** The body rows of the first table in `html`, each as its cells' HTML. */
function tableRows(html: string): string[][] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? ''
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) => cell[1] ?? ''),
  )
}

const text = (cellHtml: string): string => cellHtml.replace(/<[^>]*>/g, '').trim()

async function page(app: ReturnType<typeof testApp>, path: string): Promise<{ response: Response; html: string }> {
  const response = await get(app, path)
  return { response, html: await response.text() }
}

describe('GET / (developer portal)', () => {
  const app = testApp()

  it('answers HTML with a strict CSP, nosniff and revalidation', async () => {
    const { response, html } = await page(app, '/')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toBe(PORTAL_CSP)
    expect(PORTAL_CSP).toContain("default-src 'none'")
    expect(PORTAL_CSP).toContain("script-src 'self'")
    expect(PORTAL_CSP).not.toContain('unsafe-inline')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(html).toMatch(/^<!doctype html>/)
    // No inline script, and nothing loaded from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc="\/portal\.js")/)
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('has the key issuance form posting to /api/v1/keys and the free quote form', async () => {
    const { html } = await page(app, '/')
    expect(html).toContain('<form id="key-form" method="post" action="/api/v1/keys">')
    expect(html).toContain('<input id="key-value" type="text" readonly')
    expect(html).toContain('<button type="button" id="copy-key">Copy</button>')
    expect(html).toContain('At most\n  3 keys per IP address per 24 hours.')
    const quoteForm = element(html, 'form', 'quote-form')
    for (const name of ['fromChain', 'fromToken', 'toChain', 'toToken', 'fromAmount', 'fromAddress'])
      expect(quoteForm).toContain(`name="${name}"`)
  })

  it('offers only agent-callable chains in the quote form, each with its manifest tokens', async () => {
    const { html } = await page(app, '/')
    const fromChain = element(html, 'select', 'from-chain')
    const codes = [...fromChain.matchAll(/<option value="([A-Z]+)"/g)].map((match) => match[1])
    expect(codes).toEqual(['ETH', 'BAS', 'POL', 'ARB', 'OPT', 'BNB', 'GNO', 'CEL'])
    expect(fromChain).toContain('<option value="CEL" data-tokens="cKES">Celo (CEL)</option>')
    const chains = JSON.parse(readFileSync(join(MANIFEST_DIR, 'chains.json'), 'utf8')) as { chains: { id: string; tokens: string[] }[] }
    const eth = chains.chains.find((chain) => chain.id === 'ETH')
    expect(fromChain).toContain(`data-tokens="${eth?.tokens.join(' ')}" selected`)
    const fromTokens = [...element(html, 'select', 'from-token').matchAll(/<option[^>]*>([^<]+)<\/option>/g)].map((match) => match[1])
    expect(fromTokens).toEqual(eth?.tokens)
  })

  it('lists one corridor row per entry of manifest/corridors.json, in order, Tron rows linking to /tron', async () => {
    const { html } = await page(app, '/')
    const rows = tableRows(element(html, 'section', 'corridors'))
    expect(rows).toHaveLength(manifestCorridors.length)
    expect(rows.map((cells) => [text(cells[0] ?? ''), text(cells[1] ?? ''), text(cells[2] ?? '').split(/\s+/)])).toEqual(
      manifestCorridors.map((row) => [row.from, row.to, row.chains]),
    )
    rows.forEach((cells, index) => {
      const row = manifestCorridors[index]
      expect(text((cells[4] ?? '').replace(/<p class="not-served">[\s\S]*?<\/p>/g, ''))).toBe(
        row?.description.replaceAll('{app_url}', APP_URL),
      )
      expect(cells[3]).toContain(row?.agentCallable ? 'Agent-callable' : '<a class="badge user" href="/tron">')
    })
    expect(rows.filter((cells) => cells[3]?.includes('href="/tron"')).length).toBe(
      manifestCorridors.filter((row) => row.from === 'USDT-TRC20').length,
    )
  })

  it('shows each cell not served as not served, with its reason and figures, and no other', async () => {
    const { catalogue } = loadCatalogue(MANIFEST_DIR)
    const { html } = await page(app, '/')
    const rows = tableRows(element(html, 'section', 'corridors'))
    let notServedCount = 0
    catalogue.corridors.forEach((row, index) => {
      const cells = rows[index] ?? []
      const notes = [...(cells[4] ?? '').matchAll(/<p class="not-served">([\s\S]*?)<\/p>/g)].map((note) => text(note[1] ?? ''))
      const offChains = [...(cells[2] ?? '').matchAll(/<span class="chain off"[^>]*>([^<]*)<\/span>/g)].map((chip) => chip[1])
      const expected = row.agentCallable
        ? row.chains.flatMap((chain) => {
            const status = cellStatus(catalogue, row, chain)
            return status.isServed ? [] : [{ chain, status }]
          })
        : []
      expect(offChains).toEqual(expected.map(({ chain }) => chain))
      expect(notes).toEqual(
        expected.map(({ chain, status }) =>
          status.isServed ? '' : `Not served on ${chain}: ${status.reason}: ${escapeHtml(status.detail)}.`,
        ),
      )
      notServedCount += expected.length
    })
    // Today: USDC to cKES on Celo, refused at about 112 bps of real cost against the 50 bps the fee covers.
    expect(notServedCount).toBeGreaterThan(0)
    expect(html).toMatch(/Not served on CEL: <code>cost_exceeds_fee<\/code>: USDC to cKES on CEL costs about \d+ bps/)
    expect(html).toContain('title="Celo: not served (cost_exceeds_fee)"')
  })

  it('serves its script and styles from its own origin with nosniff', async () => {
    const script = await get(app, '/portal.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(script.headers.get('x-content-type-options')).toBe('nosniff')
    const source = await script.text()
    expect(source).toContain("fetch('/api/v1/keys'")
    expect(source).toContain("fetch('/api/x402/quote'")
    expect(source).not.toContain('innerHTML')
    const styles = await get(app, '/portal.css')
    expect(styles.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(await styles.text()).not.toMatch(/@import|url\(/)
  })

  it('answers other methods on its pages with 405', async () => {
    const response = await app.request('/', { method: 'POST' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
    expect((await app.request('/tron', { method: 'DELETE' })).status).toBe(405)
  })
})

describe('GET /tron', () => {
  it('explains the user-signed flow, links the app and lists the Tron corridors of the manifest', async () => {
    const { response, html } = await page(testApp(), '/tron')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toBe(PORTAL_CSP)
    expect(html).toContain(`<a class="app-url" href="${APP_URL}">${APP_URL}</a>`)
    expect(html).toContain('<code>"code": "not_agent_callable"</code>')
    expect(html).toContain('<strong>422</strong>')
    expect(html).not.toContain('<script')
    const rows = tableRows(element(html, 'section', 'tron-corridors'))
    const tron = manifestCorridors.filter((row) => row.from === 'USDT-TRC20')
    expect(tron.length).toBeGreaterThan(0)
    expect(rows.map((cells) => [text(cells[0] ?? ''), text(cells[1] ?? '')])).toEqual(tron.map((row) => [row.from, row.to]))
    expect(text(rows[0]?.[2] ?? '')).toBe('Base, Polygon')
    expect(text(rows[0]?.[3] ?? '')).toContain(`completed at ${APP_URL}.`)
  })

  it('shows an app URL that is not http(s) as text, never as a link', async () => {
    const { html } = await page(testApp({ appUrl: 'javascript:alert(1)' }), '/tron')
    expect(html).toContain('<code class="app-url">javascript:alert(1)</code>')
    expect(html).not.toContain('href="javascript:')
  })
})

describe('escaping', () => {
  const dir = mkdtempSync(join(tmpdir(), 'swapeazi-portal-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('escapes every catalogue text and the configured app URL on both pages', async () => {
    cpSync(MANIFEST_DIR, dir, { recursive: true })
    const hostile = '<img src=x onerror="alert(1)"> & \'quoted\''
    const file = CorridorsFile.parse(JSON.parse(readFileSync(join(dir, 'corridors.json'), 'utf8')))
    const corridors = file.corridors.map((row) => ({ ...row, description: `${row.description} ${hostile}` }))
    writeFileSync(join(dir, 'corridors.json'), JSON.stringify({ corridors }))
    const { catalogue, files } = loadCatalogue(dir)
    const appUrl = 'https://app.example.test/?from=<b>&x="y"'
    const app = testApp({ catalogue, files, appUrl })
    for (const path of ['/', '/tron']) {
      const { html } = await page(app, path)
      expect(html).not.toContain('<img')
      expect(html).not.toContain('<b>')
      expect(html).not.toContain('onerror="')
      expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &#39;quoted&#39;')
      expect(html).toContain('https://app.example.test/?from=&lt;b&gt;&amp;x=&quot;y&quot;')
    }
  })
})
