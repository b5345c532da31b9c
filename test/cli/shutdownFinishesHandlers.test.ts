import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { openStore } from '../../src/store/openStore.ts'
import { quoteBody } from '../http/testApp.ts'
import { signPayment } from '../payments/signPayment.ts'
import { migratedPgliteTemplate } from '../support/pgliteTemplate.ts'
import { TextSink } from '../support/runCliInProcess.ts'

const PAY_TO = '0x2222222222222222222222222222222222222222'
const SETTLED_TX = `0x${'ab'.repeat(32)}`
const SETTLE_MS = 1_500

/** Waits until `check` holds, polling; fails after `timeoutMs` with what was seen. */
async function until(check: () => boolean, what: () => string, timeoutMs = 30_000): Promise<void> {
  for (let waited = 0; waited < timeoutMs; waited += 20) {
    if (check()) return
    await sleep(20)
  }
  throw new Error(`timed out: ${what()}`)
}

// Review of issue 15: shutdown waited for connections, not for the handlers behind them. A paid swap whose connection
// was closed at the grace (or whose client left) kept settling with the facilitator while the store closed under it:
// the payer was charged and neither the settlement nor the swap was recorded. The store now closes only once every
// handler has finished.
describe('swapeazi serve on SIGTERM, a paid swap still settling past the grace', () => {
  const dirs: string[] = []
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  it('closes the connection at the grace, then waits for the settlement and records it before the store closes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'swapeazi-finish-'))
    dirs.push(dir)
    const seen: string[] = []
    // A facilitator whose /settle takes longer than the grace; /verify answers at once.
    const facilitator = createServer((request, response) => {
      seen.push(request.url ?? '')
      request.resume()
      request.on('end', async () => {
        if (request.url === '/settle') await sleep(SETTLE_MS)
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end(
          JSON.stringify(request.url === '/verify' ? { isValid: true } : { success: true, transaction: SETTLED_TX, network: 'base' }),
        )
        if (request.url === '/settle') seen.push('settled')
      })
    })
    await new Promise<void>((resolve) => facilitator.listen(0, '127.0.0.1', resolve))
    const stderr = new TextSink()
    const stdin = new PassThrough()
    stdin.end()
    const stop = new AbortController()
    const exited = runCli(['serve'], {
      env: {
        SWAPEAZI_PORT: '0',
        SWAPEAZI_HOST: '127.0.0.1',
        SWAPEAZI_DATA_DIR: join(dir, 'data'),
        SWAPEAZI_TRACKER: 'off',
        SWAPEAZI_SETTLEMENT: 'facilitator',
        SWAPEAZI_FACILITATOR_URL: `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}`,
        SWAPEAZI_PAY_TO: PAY_TO,
        SWAPEAZI_ROUTER_ADDRESS: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e',
        SWAPEAZI_SHUTDOWN_GRACE_MS: '200',
        SWAPEAZI_LOG_LEVEL: 'info',
      },
      stdin,
      stdout: new TextSink(),
      stderr,
      stop: stop.signal,
      pgliteTemplate: await migratedPgliteTemplate(),
    })
    try {
      await until(
        () => stderr.text.includes('"event":"listening"'),
        () => stderr.text,
      )
      const url = (JSON.parse(stderr.text.split('\n').find((line) => line.includes('"event":"listening"')) ?? '{}') as { url: string }).url
      const payer = privateKeyToAccount(generatePrivateKey())
      const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000) })
      const answered = fetch(`${url}/api/x402/swap`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-payment': header },
        body: JSON.stringify(quoteBody({ fromAddress: payer.address.toLowerCase() })),
      }).then(
        (response) => `HTTP ${response.status}`,
        () => 'connection closed',
      )
      await until(
        () => seen.includes('/settle'),
        () => `${seen.join(',')}\n${stderr.text}`,
      )
      stop.abort()
      // A second signal while it settles (review of issue 15: it closed the store under the settlement): it closes the
      // connections at once, never the store under paid work. serve listens for SIGTERM while it runs.
      await sleep(100)
      process.emit('SIGTERM')
      // The grace (200 ms) is over long before the settlement (1.5 s): the connection is closed, the work goes on.
      expect(await answered).toBe('connection closed')
      expect(await exited).toBe(0)
      expect(seen).toContain('settled')
      expect(stderr.text).toContain('"event":"shutdown_cut"')
      expect(stderr.text).toContain('"event":"shutdown_finishing"')
      expect(stderr.text).not.toContain('"event":"shutdown_abandoned"')
      expect(stderr.text).not.toContain('PGlite is closed')
    } finally {
      stop.abort()
      await exited.catch(() => {})
      facilitator.close()
    }
    // What was settled is recorded: the payment with its transaction, and the swap it paid for.
    const store = await openStore({ driver: 'pglite', dataDir: join(dir, 'data') })
    try {
      const payments = await store.sql.query<{ status: string; transaction: string | null; swap_ref: string }>(
        'select status, transaction, swap_ref from x402_payments',
      )
      expect(payments.map(({ status, transaction }) => ({ status, transaction }))).toEqual([{ status: 'settled', transaction: SETTLED_TX }])
      const swaps = await store.sql.query<{ ref: string }>('select ref from swaps')
      expect(swaps.map((swap) => swap.ref)).toEqual([payments[0]?.swap_ref])
    } finally {
      await store.sql.close()
    }
  }, 120_000)
})
