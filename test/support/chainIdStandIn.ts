import { createServer, type Server } from 'node:http'

/** The provider's key in a stand-in's URL: it must reach no log line. */
export const SECRET = 'SECRETKEY123'

/** A JSON-RPC stand-in answering `chainId` to eth_chainId (503 while `down`), and recording every method asked. */
export type ChainIdStandIn = { url: string; methods: string[]; chainId: number; down: boolean; close(): Promise<void> }

/** Starts a ChainIdStandIn on loopback; every other method is answered `0x1`. */
export async function startChainIdStandIn(chainId: number): Promise<ChainIdStandIn> {
  const standIn = { methods: [] as string[], chainId, down: false }
  const server: Server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    request.on('end', () => {
      const calls = [JSON.parse(body)].flat() as { id: number; method: string }[]
      standIn.methods.push(...calls.map((call) => call.method))
      if (standIn.down) {
        response.writeHead(503).end()
        return
      }
      const answers = calls.map((call) =>
        call.method === 'eth_chainId'
          ? { jsonrpc: '2.0', id: call.id, result: `0x${standIn.chainId.toString(16)}` }
          : { jsonrpc: '2.0', id: call.id, result: '0x1' },
      )
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(JSON.parse(body)) ? answers : answers[0]))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return Object.assign(standIn, {
    url: `http://127.0.0.1:${address.port}/v2/${SECRET}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  })
}
