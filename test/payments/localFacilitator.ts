import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import type { AddressInfo } from 'node:net'
import { type Hex, createWalletClient, defineChain, http, publicActions } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { settle, verify } from 'x402/facilitator'
import { SettleRequestSchema, VerifyRequestSchema } from 'x402/types'
import { BASE_CHAIN_ID } from '../../src/payments/x402/paymentRequirements.ts'

export type StartLocalFacilitatorParameters = {
  /** An anvil node with chain id 8453 (test/chain/baseUsdc.ts). */
  rpcUrl: string
  /** The facilitator's gas wallet (an anvil dev account). */
  privateKey: Hex
}

export type LocalFacilitator = {
  /** Base URL; the facilitator serves `POST {url}/verify` and `POST {url}/settle`. */
  url: string
  /** Paths requested so far, in order, e.g. `['/verify', '/settle']`. */
  calls: string[]
  close(): Promise<void>
}

/**
 * An x402 v1 facilitator on 127.0.0.1 (a free port) running x402's own `verify` and `settle` against the anvil
 * node, the way x402's example facilitator server does: the request body is parsed with x402's schemas (400 if it
 * does not parse), and a throw from x402 (settle does not catch a reverting `writeContract`) is a 500.
 */
export async function startLocalFacilitator(parameters: StartLocalFacilitatorParameters): Promise<LocalFacilitator> {
  const chain = defineChain({
    id: BASE_CHAIN_ID,
    name: 'Base (anvil)',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [parameters.rpcUrl] } },
  })
  const signer = createWalletClient({
    account: privateKeyToAccount(parameters.privateKey),
    chain,
    transport: http(parameters.rpcUrl, { retryCount: 0 }),
    // viem's default (4 s off a local chain) would make every settle wait that long for its receipt.
    pollingInterval: 50,
  }).extend(publicActions)

  const calls: string[] = []
  const app = new Hono()
  app.use(async (c, next) => {
    calls.push(c.req.path)
    await next()
  })
  app.post('/verify', async (c) => {
    const request = VerifyRequestSchema.safeParse(await c.req.json().catch(() => undefined))
    if (!request.success) return c.json({ error: 'Invalid request' }, 400)
    return c.json(await verify(signer, request.data.paymentPayload, request.data.paymentRequirements))
  })
  app.post('/settle', async (c) => {
    const request = SettleRequestSchema.safeParse(await c.req.json().catch(() => undefined))
    if (!request.success) return c.json({ error: 'Invalid request' }, 400)
    return c.json(await settle(signer, request.data.paymentPayload, request.data.paymentRequirements))
  })
  app.onError((error, c) => c.json({ error: error instanceof Error ? error.message : String(error) }, 500))

  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) =>
      resolve({ server: started, port: info.port }),
    )
  })
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  }
}
