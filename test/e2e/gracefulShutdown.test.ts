import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { SwapResult } from '../../src/schemas/swap.ts'
import { openStore } from '../../src/store/openStore.ts'
import { quoteBody } from '../http/testApp.ts'
import { signPayment } from '../payments/signPayment.ts'
import { startReplica } from './replicaProcess.ts'

const PAY_TO = '0x2222222222222222222222222222222222222222'

/** Waits until `check` holds, polling; fails after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  for (let waited = 0; waited < timeoutMs; waited += 20) {
    if (check()) return
    await sleep(20)
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('swapeazi serve on SIGTERM', () => {
  it('lets a paid swap in flight finish with its 200 and records it before the store closes; new connections are refused', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'swapeazi-shutdown-'))
    const replica = await startReplica({
      env: {
        SWAPEAZI_PORT: '0',
        SWAPEAZI_HOST: '127.0.0.1',
        SWAPEAZI_DATA_DIR: dataDir,
        SWAPEAZI_PAY_TO: PAY_TO,
        // A router of the operator's own: a ledger to a real wallet is money, never asked for swaps against the inert one.
        SWAPEAZI_ROUTER_ADDRESS: '0x5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e',
      },
    })
    try {
      const payer = privateKeyToAccount(generatePrivateKey())
      const { header } = await signPayment(payer, { payTo: PAY_TO, nowSec: Math.floor(Date.now() / 1000) })
      const body = JSON.stringify(quoteBody({ fromAddress: payer.address.toLowerCase() }))

      // The request is under way (headers and half its body sent) when SIGTERM arrives; the rest follows after.
      const { hostname, port } = new URL(replica.url)
      const outgoing = request({
        host: hostname,
        port,
        method: 'POST',
        path: '/api/x402/swap',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-payment': header },
      })
      const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
        outgoing.on('response', (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => {
            text += chunk
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
          response.on('error', reject)
        })
        outgoing.on('error', reject)
      })
      outgoing.write(body.slice(0, 20))
      await sleep(300)

      process.kill(replica.pid, 'SIGTERM')
      await until(() => replica.log().includes('"event":"shutdown"'), 'the shutdown log line')
      expect(replica.log()).toMatch(/"event":"shutdown","signal":"SIGTERM","in_flight":1/)
      await expect(fetch(`${replica.url}/api/v1/health`)).rejects.toThrow()

      outgoing.end(body.slice(20))
      const { status, text } = await answered
      expect(status, text).toBe(200)
      const swap = SwapResult.parse(JSON.parse(text))

      await until(() => replica.log().includes('"event":"stopped"'), 'the process to close its store', 15_000)
      await replica.stop()
      expect(replica.log()).not.toContain('shutdown_cut')

      const store = await openStore({ driver: 'pglite', dataDir })
      try {
        expect(await store.getSwap(swap.swapEaziRef)).toMatchObject({
          ref: swap.swapEaziRef,
          payment: { payer: payer.address.toLowerCase() },
        })
      } finally {
        await store.sql.close()
      }
    } finally {
      await replica.stop()
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})
