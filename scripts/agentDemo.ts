// The flow of `npm run demo` (scripts/demo.ts): the whole agent flow against an embedded SwapEazi, with a throwaway
// wallet, in one process; test/mcp/demo.test.ts calls it in the test's own process.
//
// The MCP client talks to `createMcpServer` over the SDK's linked in-memory transport rather than a spawned
// `swapeazi mcp`: the protocol, the tools, the payer and the service are the ones a host gets over stdio, but the
// demo needs no second process, no socket and no tsx start-up twice, and it can check the transaction against the
// router this very app resolves. The stdio path has its own test (test/mcp/hostConfig.test.ts).
//
// The wallet is generated here and holds nothing: the service settles on its ledger (the default), which verifies
// and records the x402 payment without broadcasting it. Prints the steps through `print`; rejects with the reason on
// any failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import * as z from 'zod'
import { buildAppDeps } from '../src/app/buildAppDeps.ts'
import { loadConfig } from '../src/config.ts'
import { formatAtomic } from '../src/engine/index.ts'
import { createServer } from '../src/app/createServer.ts'
import { createMcpServer } from '../src/mcp/createMcpServer.ts'
import { createServiceClient, inProcessFetch } from '../src/mcp/serviceClient.ts'
import { createToolContext } from '../src/mcp/toolContext.ts'
import { ApprovalWire, TransactionRequestWire } from '../src/schemas/swap.ts'
import { PaymentReceipt } from '../src/schemas/x402.ts'

/** The swap the agent is asked for: dollars on Base to euros on Polygon (a bridge, then a swap). */
const SWAP = { fromChain: 'BAS', toChain: 'POL', fromToken: 'USDC', toToken: 'EURe', fromAmount: '250' } as const

/** The part of build_swap's structured result the demo prints (the client has already checked the whole result). */
const BuiltSwap = z.object({
  swapEaziRef: z.string().regex(/^swp_/),
  transactionRequest: TransactionRequestWire,
  approval: ApprovalWire,
  payment: z.object(PaymentReceipt.shape),
  budget: z.object({ spentToday: z.string(), dailyBudget: z.string(), currency: z.string() }),
  nextSteps: z.array(z.string()),
})

const QuoteAnswer = z.object({ supported: z.boolean(), quote: z.object({ quoteId: z.string() }).optional() })

/** Where the demo writes its lines: stdout for `npm run demo`. */
export type Print = (line?: string) => void

const indent = (text: string, by = '   '): string => text.replace(/^/gm, by)

/** Calls one tool, prints its one-line summary, and returns its structured result; an `isError` result throws. */
async function step(print: Print, client: Client, index: number, name: string, args: Record<string, unknown>): Promise<unknown> {
  print(`${index}. ${name} ${JSON.stringify(args)}`)
  const result = await client.callTool({ name, arguments: args })
  const content = Array.isArray(result.content) ? (result.content as { type: string; text?: string }[]) : []
  const text = content.map((block) => (block.type === 'text' ? (block.text ?? '') : `[${block.type}]`)).join('\n')
  if (result.isError === true) throw new Error(`${name} returned an error: ${text}`)
  if (result.structuredContent === undefined) throw new Error(`${name} returned no structured content: ${text}`)
  print(indent(text))
  print()
  return result.structuredContent
}

/**
 * The demo, printing each line with `print`; rejects with the reason on any failure. `pgliteTemplate` (tests): the
 * in-memory store starts as a copy of this migrated one instead of running initdb (openPgliteSql).
 */
export async function runAgentDemo(print: Print, options: { pgliteTemplate?: Blob } = {}): Promise<void> {
  const privateKey = generatePrivateKey()
  const wallet = privateKeyToAccount(privateKey).address
  const loaded = loadConfig({ SWAPEAZI_DATA_DIR: 'memory://', SWAPEAZI_LOG_LEVEL: 'warn', SWAPEAZI_WALLET_PRIVATE_KEY: privateKey })
  const config =
    options.pgliteTemplate === undefined || loaded.store.driver !== 'pglite'
      ? loaded
      : { ...loaded, store: { ...loaded.store, template: options.pgliteTemplate } }
  const deps = await buildAppDeps(config)
  const client = new Client({ name: 'swapeazi-demo', version: deps.version })
  try {
    const app = createServer(deps)
    const service = createServiceClient(
      deps.publicUrl,
      inProcessFetch((request) => app.fetch(request)),
    )
    const context = createToolContext({
      client: service,
      settings: config.mcp,
      budget: deps.store.budget,
      clock: deps.clock,
      log: deps.log,
    })
    const server = createMcpServer({ ...context, version: deps.version, log: deps.log })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await server.connect(serverSide)
    await client.connect(clientSide)

    print(
      `SwapEazi ${deps.version} agent demo: an embedded service (in-memory store, ${deps.settler.mode} settlement), MCP over an in-memory transport`,
    )
    print(
      `Agent wallet (throwaway, holds nothing): ${wallet}; build_swap budget ${formatAtomic(config.mcp.dailyBudgetAtomic, 6)} USDC a day`,
    )
    const tools = await client.listTools()
    print(`Tools: ${tools.tools.map((tool) => tool.name).join(', ')}`)
    print()

    await step(print, client, 1, 'discover_routes', { token: SWAP.toToken })
    await step(print, client, 2, 'probe_corridor', {
      fromChain: SWAP.fromChain,
      toChain: SWAP.toChain,
      fromToken: SWAP.fromToken,
      toToken: SWAP.toToken,
      amount: SWAP.fromAmount,
    })
    const quote = QuoteAnswer.parse(await step(print, client, 3, 'get_quote', { ...SWAP, fromAddress: wallet }))
    if (!quote.supported)
      throw new Error(`get_quote says ${SWAP.fromToken}@${SWAP.fromChain} -> ${SWAP.toToken}@${SWAP.toChain} is not served`)
    const built = BuiltSwap.parse(await step(print, client, 4, 'build_swap', { ...SWAP, fromAddress: wallet }))

    const router = deps.routerOn(SWAP.fromChain).router
    if (built.transactionRequest.to.toLowerCase() !== router.toLowerCase())
      throw new Error(`build_swap's transaction goes to ${built.transactionRequest.to}, not the SwapEazi router ${router}`)
    if (!built.payment.success) throw new Error(`the payment receipt says it did not succeed: ${JSON.stringify(built.payment)}`)

    print(`Swap ${built.swapEaziRef}`)
    print()
    print(
      `Approval the user signs first: ${built.approval.amount} atomic ${SWAP.fromToken} (${built.approval.token}) to the router ${built.approval.spender}`,
    )
    print()
    print(`transactionRequest (unsigned; the user's wallet signs and broadcasts it; "to" is the SwapEazi router on ${SWAP.fromChain}):`)
    print(indent(JSON.stringify(built.transactionRequest, null, 2)))
    print()
    print('Payment receipt (x402, USD 0.02 in USDC on Base, from the agent wallet):')
    print(indent(JSON.stringify(built.payment, null, 2)))
    print(`   Budget: ${built.budget.spentToday} of ${built.budget.dailyBudget} ${built.budget.currency} spent today`)
    print()
    print('Next steps:')
    for (const [index, line] of built.nextSteps.entries()) print(`   ${index + 1}. ${line}`)
  } finally {
    await client.close()
    await deps.store.sql.close()
  }
}
