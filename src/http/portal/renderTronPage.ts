import type { CapabilityManifest } from '../../schemas/discovery.ts'
import { escapeHtml } from './escapeHtml.ts'
import { renderLayout } from './renderLayout.ts'
import { safeHref } from './safeHref.ts'
import { tronCorridors } from './tronCorridors.ts'

export type RenderTronPageParameters = {
  version: string
  manifest: CapabilityManifest
  /** The end-user application ({app_url} in the spec) where users sign Tron flows. */
  appUrl: string
}

/** GET /tron: why USDT-TRC20 corridors are user-signed, where users complete them, and which corridors they are. */
export function renderTronPage({ version, manifest, appUrl }: RenderTronPageParameters): string {
  const corridors = tronCorridors(manifest.corridors, manifest.chains)
  const chainNames = new Map(manifest.chains.map((chain) => [chain.id as string, chain.name]))
  const href = safeHref(appUrl)
  const appLink = href
    ? `<a class="app-url" href="${escapeHtml(href)}">${escapeHtml(appUrl)}</a>`
    : `<code class="app-url">${escapeHtml(appUrl)}</code>`
  const rows = corridors
    .map(
      (row) =>
        `      <tr><td>${escapeHtml(row.from)}</td><td>${escapeHtml(row.to)}</td><td>${escapeHtml(
          row.chains.map((code) => chainNames.get(code) ?? code).join(', '),
        )}</td><td>${escapeHtml(row.description)}</td></tr>`,
    )
    .join('\n')
  const mainHtml = `
<section class="intro">
  <h1>Tron corridors: a user-signed flow</h1>
  <p class="lede">USDT on Tron (USDT-TRC20) leaves Tron through a bridge, and only the holder's own Tron wallet can sign that
  transfer. SwapEazi's agent endpoints build EVM transactions, so these corridors are not agent-callable: users complete them
  in the SwapEazi app at ${appLink}.</p>
</section>

<section class="card">
  <h2>How it works for a user</h2>
  <ol class="steps">
    <li>Open ${appLink} and connect a Tron wallet that holds the USDT-TRC20.</li>
    <li>Choose the destination token and chain, and the address that receives it there.</li>
    <li>Review the quote and sign the transfer in the Tron wallet. SwapEazi never holds the funds or the keys.</li>
    <li>The bridge delivers on the destination chain, where the swap into the chosen token completes.</li>
  </ol>
</section>

<section class="card">
  <h2>What an agent gets</h2>
  <p>These corridors carry <code>"agentCallable": false</code> in <a href="/api/mpp/routes"><code>GET /api/mpp/routes</code></a>.
  A quote or swap request from Tron (<code>/api/x402/quote</code>, <code>/api/x402/swap</code>, <code>/api/mpp/swap</code>)
  answers <strong>422</strong> with <code>"code": "not_agent_callable"</code> and an <code>appUrl</code> member: an agent should
  send its user there rather than retry.</p>
</section>

<section id="tron-corridors">
  <h2>Tron corridors</h2>
  <div class="table-wrap">
  <table class="corridors">
    <thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Delivered on</th><th scope="col">About</th></tr></thead>
    <tbody>
${rows}
    </tbody>
  </table>
  </div>
  <p><a href="/#corridors">All corridors</a></p>
</section>
`
  return renderLayout({ title: 'SwapEazi: Tron corridors', mainHtml, version, hasScript: false })
}
