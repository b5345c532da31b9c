// Profiling aid (not part of `npm run bench`): the quote endpoint's pieces timed in a tight loop in process, each
// against the same fixed request the endpoint bench sends, with the bytes each allocates:
// `node --max-semi-space-size=256 --import tsx bench/quotePieces.ts [rounds]`.
import { fileURLToPath } from 'node:url'
import { buildAppDeps } from '../src/app/buildAppDeps.ts'
import { benchConfig } from './benchConfig.ts'
import { findRoutes } from '../src/engine/index.ts'
import { createServer } from '../src/app/createServer.ts'
import { QuoteParams } from '../src/schemas/quote.ts'
import { formatQuote } from '../src/service/formatQuote.ts'
import { getQuote } from '../src/service/getQuote.ts'
import { type QuoteClaims, signQuoteId } from '../src/service/quoteToken.ts'
import { resolveQuoteRequest } from '../src/service/resolveQuoteRequest.ts'
import { QUOTE_BODY } from './endpointThroughput.ts'

type Piece = { name: string; run: () => unknown; async?: false } | { name: string; run: () => Promise<unknown>; async: true }

async function timePiece(piece: Piece, ms: number): Promise<number> {
  let calls = 0
  const until = performance.now() + ms
  const started = performance.now()
  let sink: unknown
  while (performance.now() < until) {
    for (let i = 0; i < 50; i++) sink = piece.async ? await piece.run() : piece.run()
    calls += 50
  }
  if (sink === undefined) throw new Error(`${piece.name} returned nothing`)
  return ((performance.now() - started) * 1000) / calls
}

export async function runQuotePieces(rounds: number): Promise<void> {
  const deps = await buildAppDeps(benchConfig())
  const app = createServer(deps)
  const raw = JSON.parse(QUOTE_BODY) as unknown
  const params = QuoteParams.parse(raw)
  const request = resolveQuoteRequest(deps, params)
  const found = findRoutes(deps.catalogue, request)
  if (found.kind !== 'routes') throw new Error('the bench request must route')
  const quoted = getQuote(deps, params)
  if (quoted.kind !== 'quote') throw new Error('the bench request must quote')
  const claims: QuoteClaims = {
    fromChain: 'ETH',
    toChain: 'ETH',
    fromToken: 'USDC',
    toToken: 'USDT',
    fromAmount: '1000000000',
    fromAddress: '0x1111111111111111111111111111111111111111',
    toAddress: null,
    slippageE18: '5000000000000000',
    routeId: found.ranked.BALANCED.route.id,
    toAmount: '995000000',
    toAmountMin: '990025000',
    asOf: deps.catalogue.asOf,
    market: 'ETH:snapshot',
    exp: 1_900_000_000,
  }
  const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: QUOTE_BODY }
  const pieces: Piece[] = [
    { name: 'app.request (whole Hono path, no socket)', run: async () => (await app.request('/api/x402/quote', init)).text(), async: true },
    { name: 'JSON.parse(body)', run: () => JSON.parse(QUOTE_BODY) as unknown },
    { name: 'QuoteParams.safeParse', run: () => QuoteParams.safeParse(raw) },
    { name: 'getQuote (resolve, route, format, sign)', run: () => getQuote(deps, params) },
    { name: '  resolveQuoteRequest', run: () => resolveQuoteRequest(deps, params) },
    { name: '  findRoutes', run: () => findRoutes(deps.catalogue, request) },
    { name: '  formatQuote (with signQuoteId)', run: () => formatQuote(deps, request, found.amounts, found.ranked.BALANCED) },
    { name: '    signQuoteId', run: () => signQuoteId(deps.quoteSecret, claims) },
    { name: 'JSON.stringify(quote)', run: () => JSON.stringify(quoted.quote) },
  ]
  // Bytes allocated per call: heap growth over a batch too small to trigger a scavenge (run with a large young
  // generation, `--max-semi-space-size=256`, for this to hold).
  const allocated = new Map<string, number>()
  for (const piece of pieces) {
    const calls = 200
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = process.memoryUsage().heapUsed
      for (let i = 0; i < calls; i++) piece.async ? await piece.run() : piece.run()
      const bytes = (process.memoryUsage().heapUsed - before) / calls
      if (bytes > 0) {
        allocated.set(piece.name, Math.min(bytes, allocated.get(piece.name) ?? Number.POSITIVE_INFINITY))
      }
    }
  }
  const results = new Map<string, number[]>()
  for (const piece of pieces) await timePiece(piece, 300)
  for (let round = 0; round < rounds; round++)
    for (const piece of pieces) {
      const list = results.get(piece.name) ?? []
      list.push(await timePiece(piece, 500))
      results.set(piece.name, list)
    }
  for (const [name, list] of results) {
    const sorted = [...list].sort((a, b) => a - b)
    const bytes = allocated.get(name)
    console.log(
      `  ${name.padEnd(44)} min ${(sorted[0] ?? 0).toFixed(2).padStart(7)} µs   median ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(2).padStart(7)} µs` +
        `   ${bytes === undefined ? '' : `~${(bytes / 1024).toFixed(1)} KiB allocated`}`,
    )
  }
  await deps.store.sql.close()
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runQuotePieces(Number(process.argv[2] ?? 3))
  process.exit(0)
}
