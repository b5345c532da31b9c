import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Logger } from 'pino'
import * as z from 'zod'
import { unknownFieldsError } from '../schemas/unknownFields.ts'
import { TOOLS } from './tools/index.ts'
import { withApiKey } from './serviceClient.ts'
import { CAPABILITIES_URI, type Tool, type ToolContext } from './tool.ts'

export type CreateMcpServerParameters = ToolContext & { version: string; log: Logger }

const INSTRUCTIONS =
  'SwapEazi routes stablecoins across chains for agents. discover_routes lists the corridors; probe_corridor checks a pair without paying; get_quote prices a swap for free; build_swap pays USD 0.02 over x402 and returns the unsigned transaction the user signs (approve first if the approval says so); track_swap follows it after that, from its swapEaziRef, to delivery, and says what to do next; corridor_intelligence says which bridge to trust. Nothing moves until the user signs and broadcasts. The capability manifest is the resource swapeazi://capabilities.'

/**
 * One MCP server over the tools of `tools/` (DESIGN 8). Cheap to build: the HTTP transport builds one per request.
 * A tool's failure is an `isError` result carrying text, never a stack or a secret; the one exception is build_swap's
 * x402 PaymentRequired when the caller pays, which is structured as x402 over MCP asks.
 */
export function createMcpServer(parameters: CreateMcpServerParameters): McpServer {
  const { version, log, ...given } = parameters
  // Every transport's context comes through here, so every tool's /api/v1/* call carries the configured key.
  const context = { ...given, client: withApiKey(given.client, given.apiKey) }
  const server = new McpServer({ name: 'swapeazi', title: 'SwapEazi stablecoin router', version }, { instructions: INSTRUCTIONS })
  for (const tool of TOOLS) registerTool(server, tool, context, log)
  server.registerResource(
    'capabilities',
    CAPABILITIES_URI,
    {
      title: 'SwapEazi capability manifest',
      description: 'Chains, tokens, corridors, payment rails and prices (GET /api/mpp/routes)',
      mimeType: 'application/json',
    },
    async (uri) => {
      const response = await context.client.get('/api/mpp/routes')
      if (response.status !== 200) throw new Error(`SwapEazi answered HTTP ${response.status} for the capability manifest; retry later.`)
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(response.body) }] }
    },
  )
  return server
}

function registerTool(server: McpServer, tool: Tool, context: ToolContext, log: Logger): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      // Strict, as the HTTP bodies: an argument the SDK dropped silently (`recipient` for toAddress) would build to the sender.
      inputSchema: z.strictObject(tool.inputSchema, {
        error: unknownFieldsError({ known: Object.keys(tool.inputSchema), lead: 'the arguments have' }),
      }),
      ...(tool.paid === true && context.callerPays === true ? {} : { outputSchema: tool.outputSchema }),
      annotations: tool.annotations,
    },
    async (args: unknown, extra: { _meta?: Record<string, unknown> }): Promise<CallToolResult> => {
      try {
        const result = await tool.run(context, args, extra._meta === undefined ? {} : { meta: extra._meta })
        const meta = result.meta === undefined ? {} : { _meta: result.meta }
        if (!result.ok)
          return {
            isError: true,
            content: [
              { type: 'text', text: result.message },
              ...(result.detail === undefined ? [] : [{ type: 'text' as const, text: result.detail }]),
            ],
            ...(result.structured === undefined ? {} : { structuredContent: result.structured }),
            ...meta,
          }
        return { content: [{ type: 'text', text: result.summary }], structuredContent: result.structured, ...meta }
      } catch (error) {
        log.error({ event: 'mcp_tool_failed', tool: tool.name, err: error }, 'mcp_tool_failed')
        return {
          isError: true,
          content: [
            {
              type: 'text',
              text: `${tool.name} could not reach SwapEazi or failed on our side; nothing was paid unless a receipt says so. Retry shortly.`,
            },
          ],
        }
      }
    },
  )
}
