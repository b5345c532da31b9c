import { escapeHtml } from './escapeHtml.ts'

export type RenderLayoutParameters = {
  title: string
  /** Trusted HTML: every interpolated value in it was escaped by its renderer. */
  mainHtml: string
  version: string
  /** Whether the page loads /portal.js (the forms). */
  hasScript: boolean
}

// An inline SVG favicon keeps the browser from asking for /favicon.ico (a 404 in the console); CSP allows data: images.
const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%230f766e'/%3E%3Cpath d='M4 6h8l-2-2M12 10H4l2 2' stroke='white' stroke-width='1.6' fill='none'/%3E%3C/svg%3E"

/** The portal's HTML document around a page's main content: no external resources, styles and script from self. */
export function renderLayout({ title, mainHtml, version, hasScript }: RenderLayoutParameters): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="/portal.css">
${hasScript ? '<script src="/portal.js" defer></script>\n' : ''}</head>
<body>
<header class="site">
  <a class="brand" href="/">SwapEazi</a>
  <nav>
    <a href="/#keys">API key</a>
    <a href="/#corridors">Corridors</a>
    <a href="/#quote">Quote</a>
    <a href="/tron">Tron</a>
    <a href="/openapi.json">OpenAPI</a>
  </nav>
</header>
<main>
${mainHtml}
</main>
<footer class="site">SwapEazi ${escapeHtml(version)} · <a href="/api/mpp/routes">capability manifest</a> · <a href="/.well-known/x402.json">x402 manifest</a> · <a href="/api/v1/health">health</a></footer>
</body>
</html>
`
}
