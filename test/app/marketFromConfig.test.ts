import { createServer, type Server, type Socket } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { marketFromConfig } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { loadConfig } from '../../src/config.ts'
import { MANIFEST_DIR } from '../http/testApp.ts'
import { closedPort } from '../support/closedPort.ts'

// The start-up line of the live market names the Across API it reads, cut to scheme and host as RPC URLs are: a
// proxy in front of Across may carry a key in its path, query or user info.

const { files } = loadCatalogue(MANIFEST_DIR)

let hanging: Server
let hangingUrl: string
const sockets = new Set<Socket>()

beforeAll(async () => {
  // An RPC that accepts connections and never answers: start-up goes on after its wait.
  hanging = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  const address = hanging.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  hangingUrl = `http://127.0.0.1:${address.port}`
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => hanging?.close(resolve))
})

describe('marketFromConfig', () => {
  it('logs the Across API URL down to its scheme and host', async () => {
    const port = await closedPort()
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ ETH: hangingUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      SWAPEAZI_ACROSS_API_URL: `http://user:PASSWORD7@127.0.0.1:${port}/v1/PATHKEY42/api?key=QUERYKEY9`,
    })
    const lines: string[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) })
    const market = await marketFromConfig(config, files, log, { firstReadWaitMs: 200 })
    try {
      const started = lines.map((line) => JSON.parse(line) as { event?: string; across?: string }).find((line) => line.event === 'market')
      expect(started?.across).toBe(`http://127.0.0.1:${port}/…`)
      for (const secret of ['PASSWORD7', 'PATHKEY42', 'QUERYKEY9']) expect(lines.join('\n')).not.toContain(secret)
    } finally {
      await market?.stop()
    }
  })
})
