import { createServer as createTcpServer, type Server, type Socket } from 'node:net'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from '../../src/app/createServer.ts'
import { marketFromConfig } from '../../src/app/marketFromConfig.ts'
import { loadCatalogue } from '../../src/catalogue/loadCatalogue.ts'
import { loadConfig } from '../../src/config.ts'
import type { AcrossFeesKeeper } from '../../src/market/acrossLaneFees.ts'
import { type AnvilInstance, startAnvil } from '../chain/anvil.ts'
import { MANIFEST_DIR, postJson, quoteBody, readJson, testDeps } from '../http/testApp.ts'

// Issue 15 items 7 and 10 on the live market (review): a provider that hangs must not keep the port closed, and a
// URL of another chain is a configuration error, not a chain read as the wrong one.

const { files } = loadCatalogue(MANIFEST_DIR)
const silent = pino({ level: 'silent' })

let hanging: Server
let hangingUrl: string
const sockets = new Set<Socket>()
let base: AnvilInstance

beforeAll(async () => {
  // Accepts connections and never answers, as a stuck provider does.
  hanging = createTcpServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  const address = hanging.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  hangingUrl = `http://127.0.0.1:${address.port}`
  base = await startAnvil({ chainId: 8453 })
}, 60_000)

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => hanging?.close(resolve))
  await base?.stop()
})

describe('the live market at start', () => {
  it('waits at most the first-read budget for a hanging RPC; its routes answer 503 meanwhile, the others are served', async () => {
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ ETH: hangingUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      SWAPEAZI_ACROSS_API_URL: 'off',
    })
    const started = Date.now()
    const market = await marketFromConfig(config, files, silent, { firstReadWaitMs: 300 })
    try {
      expect(Date.now() - started).toBeLessThan(2_500)
      if (market === undefined) throw new Error('no market')
      const deps = testDeps({ market, clock: Date.now })
      Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
      const app = createServer(deps)
      const onEth = await postJson(
        app,
        '/api/x402/quote',
        quoteBody({ fromChain: 'ETH', toChain: 'ETH', fromToken: 'USDC', toToken: 'USDT', fromAmount: '100' }),
      )
      expect(onEth.status).toBe(503)
      expect(await readJson(onEth)).toMatchObject({ code: 'market_unavailable' })
      const elsewhere = await postJson(
        app,
        '/api/x402/quote',
        quoteBody({ fromChain: 'BAS', toChain: 'ARB', fromToken: 'USDC', toToken: 'USDC', fromAmount: '100' }),
      )
      expect(elsewhere.status, JSON.stringify(await readJson(elsewhere))).toBe(200)
    } finally {
      market?.stop()
    }
  })

  it('refuses a URL that serves another chain, naming the variable and both chain ids on one line', async () => {
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ POL: base.rpcUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      SWAPEAZI_ACROSS_API_URL: 'off',
    })
    await expect(marketFromConfig(config, files, silent, { firstReadWaitMs: 5_000 })).rejects.toThrow(
      /^invalid configuration: SWAPEAZI_RPC_URLS\.POL: the RPC serves chain 8453, not POL \(137\); give POL an RPC of its own chain$/,
    )
    // The right chain's URL is taken.
    const right = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: base.rpcUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      SWAPEAZI_ACROSS_API_URL: 'off',
    })
    const market = await marketFromConfig(right, files, silent, { firstReadWaitMs: 5_000 })
    market?.stop()
    expect(market?.liveChains).toEqual(['BAS'])
  })

  it('a URL of another chain with Across on: the one line alone, the store not closed under the Across restore', async () => {
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ POL: base.rpcUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      // Never asked: start-up ends before the first refresh.
      SWAPEAZI_ACROSS_API_URL: 'http://127.0.0.1:9',
    })
    const lines: { event?: string }[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    // A store slower than the chain-id check, which fails a query the caller closes it under.
    let isClosed = false
    const keeper: AcrossFeesKeeper = {
      save: async () => {},
      forget: async () => {},
      load: () =>
        new Promise((resolve, reject) => {
          setTimeout(() => (isClosed ? reject(new Error('the store is closed')) : resolve([])), 300)
        }),
    }
    await expect(marketFromConfig(config, files, log, { firstReadWaitMs: 5_000, acrossFeesKeeper: keeper })).rejects.toThrow(
      /^invalid configuration: SWAPEAZI_RPC_URLS\.POL: /,
    )
    // What buildAppDeps does on that error.
    isClosed = true
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(lines.map((line) => line.event)).not.toContain('market_across_restore_failed')
  })

  it('refuses an Across rate and refresh interval that could leave a lane unread past its 5 minutes, before reading', async () => {
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: base.rpcUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      SWAPEAZI_ACROSS_API_URL: 'http://127.0.0.1:9',
      SWAPEAZI_ACROSS_REQUESTS_PER_SEC: '1',
      SWAPEAZI_ACROSS_REFRESH_MS: '240000',
    })
    await expect(marketFromConfig(config, files, silent)).rejects.toThrow(
      /^invalid configuration: SWAPEAZI_ACROSS_REFRESH_MS, SWAPEAZI_ACROSS_REQUESTS_PER_SEC: .*set SWAPEAZI_ACROSS_REFRESH_MS to at most 175000, or raise SWAPEAZI_ACROSS_REQUESTS_PER_SEC$/,
    )
  })

  it('an RPC that cannot be reached leaves its URL (and the key in it) out of health and of 503 bodies', async () => {
    const secretUrl = 'http://127.0.0.1:9/v2/SECRETKEY123?key=QUERYSECRET'
    const config = loadConfig({
      SWAPEAZI_RPC_URLS: JSON.stringify({ BAS: secretUrl }),
      SWAPEAZI_MANIFEST_DIR: MANIFEST_DIR,
      SWAPEAZI_ACROSS_API_URL: 'off',
    })
    const market = await marketFromConfig(config, files, silent, { firstReadWaitMs: 1_000 })
    try {
      if (market === undefined) throw new Error('no market')
      await market.refresh()
      const status = JSON.stringify(market.status())
      expect(status).toContain('chain id could not be read')
      const deps = testDeps({ market, clock: Date.now })
      Object.defineProperty(deps, 'catalogue', { get: () => market.catalogue(), enumerable: true })
      const refused = await postJson(
        createServer(deps),
        '/api/x402/quote',
        quoteBody({ fromChain: 'BAS', toChain: 'BAS', fromToken: 'USDC', toToken: 'EURC', fromAmount: '100' }),
      )
      expect(refused.status).toBe(503)
      for (const text of [status, JSON.stringify(await readJson(refused))]) {
        expect(text).not.toContain('SECRETKEY123')
        expect(text).not.toContain('QUERYSECRET')
      }
    } finally {
      market?.stop()
    }
  })
})
