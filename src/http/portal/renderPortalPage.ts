import type { CapabilityManifest, ChainsResponse, CorridorsResponse } from '../../schemas/discovery.ts'
import { SELF_SERVE_KEYS_PER_IP, SELF_SERVE_WINDOW_MS } from '../../service/issueApiKey.ts'
import { escapeHtml } from './escapeHtml.ts'
import { renderLayout } from './renderLayout.ts'
import { tronCorridors } from './tronCorridors.ts'

export type RenderPortalPageParameters = {
  version: string
  /** The capability manifest (what the service is, its prices and payment rails). */
  manifest: CapabilityManifest
  /** The manifest's corridors with where each is live. */
  corridors: CorridorsResponse['corridors']
  /** Chains with their user-facing tokens, for the quote form. */
  chains: ChainsResponse['chains']
}

type Corridor = CorridorsResponse['corridors'][number]
type Chain = ChainsResponse['chains'][number]

const WINDOW_HOURS = SELF_SERVE_WINDOW_MS / 3_600_000

/** The quote form starts on a pair every deployment of the catalogue serves. */
const DEFAULT_QUOTE = { fromChain: 'ETH', fromToken: 'USDC', toChain: 'ETH', toToken: 'USDT', fromAmount: '1000' } as const

/** The developer portal at GET /: what the service is, key issuance, the corridor table and a free quote form. */
export function renderPortalPage({ version, manifest, corridors, chains }: RenderPortalPageParameters): string {
  const chainNames = new Map(chains.map((chain) => [chain.id as string, chain.name]))
  const evmCount = chains.filter((chain) => chain.agentCallable).length
  const tron = new Set(tronCorridors(corridors, manifest.chains))
  const mainHtml = `
<section class="intro">
  <h1>Stablecoin routing for AI agents</h1>
  <p class="lede">SwapEazi finds the best route between stablecoins on ${evmCount} EVM chains, on one chain or across a bridge,
  and answers with an unsigned transaction that the caller signs and broadcasts with the user's own wallet. SwapEazi never holds
  funds and never broadcasts.</p>
  <ul class="facts">
    <li><strong>Quotes are free</strong>: <code>POST /api/x402/quote</code>, no key and no signup.</li>
    <li><strong>Swaps</strong>: ${escapeHtml(manifest.pricing.swap)}.</li>
    <li><strong>x402</strong>: ${escapeHtml(manifest.agentPayments.x402.description)}</li>
    <li><strong>MPP</strong>: ${escapeHtml(manifest.agentPayments.mpp.description)}</li>
    <li><strong>API key</strong>: free and rate-limited, for the <code>/api/v1/*</code> business routes. Get one below.</li>
  </ul>
  <p>Agents start with <a href="/api/mpp/routes"><code>GET /api/mpp/routes</code></a> (chains, tokens and corridors), quote for
  free, then call <code>POST /api/x402/swap</code>: the first call answers 402 with the payment challenge. Every endpoint is in
  <a href="/openapi.json"><code>/openapi.json</code></a>.</p>
</section>

<section id="keys" class="card">
  <h2>Get a free API key</h2>
  <p>Free, instant, no e-mail. Send it as the <code>x-swapeazi-key</code> header on <code>/api/v1/*</code>. At most
  ${SELF_SERVE_KEYS_PER_IP} keys per IP address per ${WINDOW_HOURS} hours.</p>
  <form id="key-form" method="post" action="/api/v1/keys">
    <button type="submit" id="issue-key">Issue a free key</button>
  </form>
  <div id="key-result" hidden>
    <label for="key-value">Your key, shown once: store it now</label>
    <div class="copy-row">
      <input id="key-value" type="text" readonly spellcheck="false" autocomplete="off">
      <button type="button" id="copy-key">Copy</button>
    </div>
    <p id="copy-status" class="muted" role="status" aria-live="polite"></p>
    <p id="key-meta" class="muted"></p>
    <p id="key-notice"></p>
  </div>
  <div id="key-error" class="error" role="alert" hidden></div>
</section>

<section id="corridors">
  <h2>Corridors</h2>
  <p>The ${corridors.length} corridors of the capability manifest. Agent-callable corridors quote and swap through the API;
  the others are user-signed flows completed in the SwapEazi app. A dashed chain is listed but not served now; the row
  says why.</p>
  <div class="table-wrap">
  <table class="corridors">
    <thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Chains</th><th scope="col">Access</th><th scope="col">About</th></tr></thead>
    <tbody>
${corridors.map((row) => corridorRow(row, chainNames, tron.has(row))).join('\n')}
    </tbody>
  </table>
  </div>
</section>

<section id="quote" class="card">
  <h2>Free quote</h2>
  <p>The same call an agent makes: <code>POST /api/x402/quote</code>. Tron (USDT-TRC20) corridors are user-signed:
  <a href="/tron">see how they work</a>.</p>
  <form id="quote-form" action="/api/x402/quote" method="post">
    <div class="grid">
      ${chainSelect('from-chain', 'fromChain', 'From chain', chains, DEFAULT_QUOTE.fromChain)}
      ${tokenSelect('from-token', 'fromToken', 'From token', chains, DEFAULT_QUOTE.fromChain, DEFAULT_QUOTE.fromToken)}
      ${chainSelect('to-chain', 'toChain', 'To chain', chains, DEFAULT_QUOTE.toChain)}
      ${tokenSelect('to-token', 'toToken', 'To token', chains, DEFAULT_QUOTE.toChain, DEFAULT_QUOTE.toToken)}
      <label>Amount <input id="from-amount" name="fromAmount" value="${DEFAULT_QUOTE.fromAmount}" inputmode="decimal" autocomplete="off" required></label>
      <label class="wide">Sender address <input id="from-address" name="fromAddress" placeholder="0x…" spellcheck="false" autocomplete="off" required></label>
    </div>
    <button type="submit" id="get-quote">Get quote</button>
  </form>
  <div id="quote-result" hidden>
    <dl>
      <dt>You receive</dt><dd id="quote-to-amount"></dd>
      <dt>At least (after slippage)</dt><dd id="quote-to-amount-min"></dd>
      <dt>Fee</dt><dd id="quote-fee"></dd>
      <dt>Route</dt><dd><ol id="quote-route"></ol></dd>
      <dt>Duration</dt><dd id="quote-duration"></dd>
      <dt>Gas (signer)</dt><dd id="quote-gas"></dd>
      <dt>Quote expires</dt><dd id="quote-expires"></dd>
    </dl>
  </div>
  <div id="quote-error" class="error" role="alert" hidden></div>
</section>
`
  return renderLayout({ title: 'SwapEazi: stablecoin routing for AI agents', mainHtml, version, hasScript: true })
}

function corridorRow(row: Corridor, chainNames: ReadonlyMap<string, string>, isTron: boolean): string {
  // A listed chain no route serves today is shown, muted, so the table matches the manifest row for row, and the
  // About cell says why, with the figures (the same reason and detail as GET /api/v1/corridors).
  const notServed = row.agentCallable ? row.byChain.filter((entry) => !entry.live) : []
  const chainsHtml = row.chains
    .map((code) => {
      const name = chainNames.get(code) ?? code
      const off = notServed.find((entry) => entry.chain === code)
      const title = off ? `${name}: not served (${off.notServed?.reason ?? 'no_route'})` : name
      return `<span class="chain${off ? ' off' : ''}" title="${escapeHtml(title)}">${escapeHtml(code)}</span>`
    })
    .join(' ')
  const access = row.agentCallable
    ? '<span class="badge ok">Agent-callable</span>'
    : isTron
      ? '<a class="badge user" href="/tron">User-signed (Tron wallet)</a>'
      : '<span class="badge user">User-signed</span>'
  const notes = notServed
    .map((entry) => {
      const why = entry.notServed
        ? `<code>${escapeHtml(entry.notServed.reason)}</code>: ${escapeHtml(entry.notServed.detail)}`
        : 'no route at the moment'
      return `<p class="not-served">Not served on ${escapeHtml(entry.chain)}: ${why}.</p>`
    })
    .join('')
  return `      <tr><td>${escapeHtml(row.from)}</td><td>${escapeHtml(row.to)}</td><td>${chainsHtml}</td><td>${access}</td><td>${escapeHtml(row.description)}${notes}</td></tr>`
}

function quotableChains(chains: readonly Chain[]): Chain[] {
  return chains.filter((chain) => chain.agentCallable)
}

function chainSelect(id: string, name: string, label: string, chains: readonly Chain[], selected: string): string {
  const options = quotableChains(chains)
    .map((chain) => {
      const tokens = chain.tokens.map((token) => token.symbol).join(' ')
      return `<option value="${escapeHtml(chain.id)}" data-tokens="${escapeHtml(tokens)}"${chain.id === selected ? ' selected' : ''}>${escapeHtml(`${chain.name} (${chain.id})`)}</option>`
    })
    .join('')
  return `<label>${escapeHtml(label)} <select id="${id}" name="${name}">${options}</select></label>`
}

function tokenSelect(id: string, name: string, label: string, chains: readonly Chain[], chainId: string, selected: string): string {
  const chain = quotableChains(chains).find((entry) => entry.id === chainId) ?? quotableChains(chains)[0]
  const options = (chain?.tokens ?? [])
    .map((token) => `<option${token.symbol === selected ? ' selected' : ''}>${escapeHtml(token.symbol)}</option>`)
    .join('')
  return `<label>${escapeHtml(label)} <select id="${id}" name="${name}">${options}</select></label>`
}
