import { readFileSync } from 'node:fs'
import { Hono } from 'hono'
import { renderPortalPage } from './portal/renderPortalPage.ts'
import { renderTronPage } from './portal/renderTronPage.ts'
import { describeCapabilities } from '../service/describeCapabilities.ts'
import type { ServiceDeps } from '../service/deps.ts'
import { listChains } from '../service/listChains.ts'
import { listCorridors } from '../service/listCorridors.ts'

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

const ASSET_CACHE = 'public, max-age=300'

const ASSET_DIR = new URL('./portal/', import.meta.url)

/** Memoises a value computed on first use, so an app that never serves the portal never builds it. */
function once<T>(compute: () => T): () => T {
  let value: { current: T } | undefined
  return () => (value ??= { current: compute() }).current
}

/** GET / (the developer portal), GET /tron (the user-signed Tron flow) and the portal's script and styles. */
export function portalRoutes(deps: ServiceDeps): Hono {
  const app = new Hono()
  // The pages depend only on the catalogue and configuration: rendered once, on first request.
  const portalPage = once(() =>
    renderPortalPage({ version: deps.version, manifest: describeCapabilities(deps), corridors: listCorridors(deps).corridors, chains: listChains(deps).chains }),
  )
  const tronPage = once(() => renderTronPage({ version: deps.version, manifest: describeCapabilities(deps), appUrl: deps.appUrl }))
  // Read at start-up, so a package missing its assets fails to start rather than answering 500 later.
  const script = readFileSync(new URL('portal.js', ASSET_DIR), 'utf8')
  const styles = readFileSync(new URL('portal.css', ASSET_DIR), 'utf8')

  app.get('/', (c) => c.body(portalPage(), 200, PAGE_HEADERS))
  app.get('/tron', (c) => c.body(tronPage(), 200, PAGE_HEADERS))
  app.get('/portal.js', (c) =>
    c.body(script, 200, { 'content-type': 'text/javascript; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': ASSET_CACHE }),
  )
  app.get('/portal.css', (c) =>
    c.body(styles, 200, { 'content-type': 'text/css; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': ASSET_CACHE }),
  )
  return app
}
