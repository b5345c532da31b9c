import { readFileSync } from 'node:fs'
import { describeCapabilities } from '../service/describeCapabilities.ts'
import { listChains } from '../service/listChains.ts'
import { listCorridors } from '../service/listCorridors.ts'
import { PUBLISHED_CACHE } from './cacheControl.ts'
import { defineEndpoint, type Endpoint } from './endpoint.ts'
import { renderPortalPage } from './portal/renderPortalPage.ts'
import { renderTronPage } from './portal/renderTronPage.ts'

/**
 * Only our own origin: the script and styles are separate files (no inline code, so no nonce), the forms call our
 * API with fetch, and the favicon is a data: image.
 */
export const PORTAL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': PORTAL_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Revalidate every time: the page is cheap and changes with the catalogue on a deploy.
  'cache-control': 'no-cache',
} as const

const ASSET_DIR = new URL('./portal/', import.meta.url)

/** GET / (the developer portal): rendered once per app, on first request, from the catalogue and configuration. */
export const portalPage = defineEndpoint({
  method: 'GET',
  path: '/',
  handler: (deps) => {
    let page: string | undefined
    return (c) => {
      page ??= renderPortalPage({
        version: deps.version,
        manifest: describeCapabilities(deps),
        corridors: listCorridors(deps).corridors,
        chains: listChains(deps).chains,
      })
      return c.body(page, 200, PAGE_HEADERS)
    }
  },
})

/** GET /tron: the user-signed Tron flow. */
export const tronPage = defineEndpoint({
  method: 'GET',
  path: '/tron',
  handler: (deps) => {
    let page: string | undefined
    return (c) => {
      page ??= renderTronPage({ version: deps.version, manifest: describeCapabilities(deps), appUrl: deps.appUrl })
      return c.body(page, 200, PAGE_HEADERS)
    }
  },
})

/** A static asset of the portal, read when the app is built, so a package missing it fails to start rather than answering 500 later. */
const asset = (name: string, contentType: string): Endpoint =>
  defineEndpoint({
    method: 'GET',
    path: `/${name}`,
    handler: () => {
      const text = readFileSync(new URL(name, ASSET_DIR), 'utf8')
      return (c) =>
        c.body(text, 200, { 'content-type': contentType, 'x-content-type-options': 'nosniff', 'cache-control': PUBLISHED_CACHE })
    },
  })

export const portalScript = asset('portal.js', 'text/javascript; charset=utf-8')
export const portalStyles = asset('portal.css', 'text/css; charset=utf-8')
