// The developer portal's two forms, in plain browser JavaScript served as /portal.js (CSP: script-src 'self').
// Every value from a response is written with textContent, never as HTML.
// biome-ignore lint/suspicious/noRedundantUseStrict: the browser loads this as a classic script, not a module
'use strict'

/** Reads a response body as JSON, or null when it is not JSON. */
async function readBody(response) {
  try {
    return await response.json()
  } catch {
    return null
  }
}

function show(element, text) {
  element.textContent = text
  element.hidden = false
}

/** "23 h 59 min" for a Retry-After in seconds, rounded up to the minute. */
function formatWait(seconds) {
  const totalMinutes = Math.ceil(seconds / 60)
  const hours = Math.floor(totalMinutes / 60)
  const minutes = totalMinutes % 60
  if (hours === 0) return minutes <= 1 ? 'a minute' : `${minutes} min`
  return minutes === 0 ? `${hours} h` : `${hours} h ${minutes} min`
}

/** A problem+json body's detail and field errors, or a plain status line when the body is not a problem. */
function problemText(response, body) {
  const lines = [body && typeof body.detail === 'string' ? body.detail : `The service answered HTTP ${response.status}.`]
  if (body && Array.isArray(body.errors) && body.errors.length > 1) {
    for (const error of body.errors) lines.push(`${error.field}: ${error.message}`)
  }
  return lines.join('\n')
}

function setUpKeyForm() {
  const form = document.getElementById('key-form')
  const button = document.getElementById('issue-key')
  const result = document.getElementById('key-result')
  const keyValue = document.getElementById('key-value')
  const copyButton = document.getElementById('copy-key')
  const copyStatus = document.getElementById('copy-status')
  const meta = document.getElementById('key-meta')
  const notice = document.getElementById('key-notice')
  const errorBox = document.getElementById('key-error')

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    button.disabled = true
    errorBox.hidden = true
    try {
      const response = await fetch('/api/v1/keys', { method: 'POST', headers: { accept: 'application/json' } })
      const body = await readBody(response)
      if (response.status === 201 && body && typeof body.key === 'string') {
        keyValue.value = body.key
        meta.textContent = `Key id ${body.id} · tier ${body.tier} · issued ${new Date(body.issuedAt).toLocaleString()}`
        notice.textContent = body.notice
        copyStatus.textContent = ''
        result.hidden = false
        keyValue.focus()
        keyValue.select()
        return
      }
      // A refused request shows no stale key: a key is shown once, right after it is issued.
      result.hidden = true
      keyValue.value = ''
      if (response.status === 429) {
        const retryAfterSec = Number(response.headers.get('retry-after') ?? body?.retryAfterSec)
        // The detail names the limit that was hit: the keys per IP, or the per-minute request limit of /api/v1/*.
        const lines = ['Limit reached.', problemText(response, body)]
        if (Number.isFinite(retryAfterSec) && retryAfterSec > 0) {
          const at = new Date(Date.now() + retryAfterSec * 1000)
          lines.push(`You can try again in ${formatWait(retryAfterSec)} (after ${at.toLocaleString()}).`)
        }
        show(errorBox, lines.join('\n'))
        return
      }
      show(errorBox, problemText(response, body))
    } catch (error) {
      show(errorBox, `The request failed: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      button.disabled = false
    }
  })

  copyButton.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(keyValue.value)
      copyStatus.textContent = 'Copied to the clipboard.'
    } catch {
      // No clipboard permission (or an insecure origin): select the key so the user can copy it by hand.
      keyValue.focus()
      keyValue.select()
      copyStatus.textContent = 'The key is selected: press Ctrl+C (⌘C on a Mac) to copy it.'
    }
  })
}

/** Refills a token select from the chain option's data-tokens, keeping the chosen symbol when the chain lists it. */
function fillTokens(chainSelect, tokenSelect) {
  const option = chainSelect.selectedOptions[0]
  const symbols = option ? (option.dataset.tokens ?? '').split(' ').filter(Boolean) : []
  const previous = tokenSelect.value
  tokenSelect.replaceChildren(
    ...symbols.map((symbol) => {
      const entry = document.createElement('option')
      entry.textContent = symbol
      entry.value = symbol
      return entry
    }),
  )
  if (symbols.includes(previous)) tokenSelect.value = previous
}

function setUpQuoteForm() {
  const form = document.getElementById('quote-form')
  const button = document.getElementById('get-quote')
  const result = document.getElementById('quote-result')
  const errorBox = document.getElementById('quote-error')
  const fromChain = document.getElementById('from-chain')
  const toChain = document.getElementById('to-chain')
  const fromToken = document.getElementById('from-token')
  const toToken = document.getElementById('to-token')
  fromChain.addEventListener('change', () => fillTokens(fromChain, fromToken))
  toChain.addEventListener('change', () => fillTokens(toChain, toToken))

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    button.disabled = true
    result.hidden = true
    errorBox.hidden = true
    const fields = new FormData(form)
    const params = {
      fromChain: fields.get('fromChain'),
      toChain: fields.get('toChain'),
      fromToken: fields.get('fromToken'),
      toToken: fields.get('toToken'),
      fromAmount: String(fields.get('fromAmount') ?? '').trim(),
      fromAddress: String(fields.get('fromAddress') ?? '').trim(),
    }
    try {
      const response = await fetch('/api/x402/quote', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(params),
      })
      const body = await readBody(response)
      if (response.ok && body && body.supported === false) {
        show(errorBox, `No route joins ${body.pair} today. Quotes for other pairs are free: try another corridor.`)
      } else if (response.ok && body && typeof body.toAmount === 'string') {
        showQuote(body)
        result.hidden = false
      } else {
        show(errorBox, problemText(response, body))
      }
    } catch (error) {
      show(errorBox, `The request failed: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      button.disabled = false
    }
  })
}

function showQuote(quote) {
  const text = (id, value) => {
    document.getElementById(id).textContent = value
  }
  text('quote-to-amount', `${quote.toAmount} ${quote.toToken} on ${quote.toChain}`)
  text('quote-to-amount-min', `${quote.toAmountMin} ${quote.toToken}`)
  text('quote-fee', `${quote.fee.amount} ${quote.fee.token} (${quote.fee.bps / 100}%, all-in)`)
  text('quote-duration', `about ${quote.estimatedDuration} s`)
  text('quote-gas', `USD ${quote.estimatedGasUSD}`)
  text('quote-expires', new Date(quote.expiresAt).toLocaleTimeString())
  const route = document.getElementById('quote-route')
  route.replaceChildren(
    ...quote.route.steps.map((step) => {
      const item = document.createElement('li')
      const where = step.fromChain === step.toChain ? `on ${step.fromChain}` : `${step.fromChain} → ${step.toChain}`
      item.textContent = `${step.type === 'bridge' ? 'Bridge' : 'Swap'} ${step.fromAmount} ${step.fromToken} → ${step.toAmount} ${step.toToken} ${where} via ${step.tool}`
      return item
    }),
  )
}

setUpKeyForm()
setUpQuoteForm()
