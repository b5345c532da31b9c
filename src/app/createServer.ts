import type { Hono } from 'hono'
import { extendDeps } from './extendDeps.ts'
import type { AppEnv } from '../http/appEnv.ts'
import { type AppDeps, createApp } from '../http/createApp.ts'
import { createCallerAllowance, limitPerCaller } from '../mcp/callerAllowance.ts'
import { createMcpHttpHandler } from '../mcp/mcpHttpHandler.ts'
import { DEFAULT_SERVER_PAYS_PER_IP_HOUR, LOOPBACK_HOSTS, type McpSettings } from '../mcp/mcpSettings.ts'
import { createServiceClient, inProcessFetch } from '../mcp/serviceClient.ts'
import type { ToolContext } from '../mcp/tool.ts'
import { createToolContext } from '../mcp/toolContext.ts'

export type ServerDeps = AppDeps & {
  /** The MCP server at /mcp (DESIGN 8); unset: no wallet, no key, loopback hosts only. */
  mcp?: Omit<McpSettings, 'baseUrl'>
}

/**
 * The server `swapeazi serve` runs: the HTTP API with the MCP server mounted at /mcp beside it. The MCP tools call
 * this same app in process (no socket), naming the remote agent's IP so per-IP limits count the agent.
 *
 * /mcp's callers are remote and anonymous, so by default they pay build_swap themselves over x402 and get the free
 * tier: the operator's wallet pays only when SWAPEAZI_MCP_SERVER_PAYS opts in (then at most
 * SWAPEAZI_MCP_SERVER_PAYS_PER_IP_HOUR builds per caller IP per hour, under the daily budget), and the operator's key
 * is used only when SWAPEAZI_MCP_SHARE_API_KEY does.
 */
export function createServer(deps: ServerDeps): Hono<AppEnv> {
  const settings = deps.mcp ?? { dailyBudgetAtomic: 0n, allowedHosts: [...LOOPBACK_HOSTS] }
  const serverPays = settings.serverPaysOnHttp === true && settings.walletPrivateKey !== undefined
  const allowance = createCallerAllowance(settings.serverPaysPerIpHour ?? DEFAULT_SERVER_PAYS_PER_IP_HOUR, deps.clock)
  const { walletPrivateKey, apiKey, ...rest } = settings
  const toolSettings = {
    ...rest,
    ...(serverPays && walletPrivateKey !== undefined ? { walletPrivateKey } : {}),
    ...(settings.shareApiKeyOnHttp === true && apiKey !== undefined ? { apiKey } : {}),
  }
  const context = (ip: string): ToolContext => {
    const tools = createToolContext({
      client: createServiceClient(
        deps.publicUrl,
        inProcessFetch((request) => app.fetch(request), ip),
      ),
      settings: toolSettings,
      budget: deps.store.budget,
      clock: deps.clock,
      log: deps.log,
    })
    if (!serverPays) return { ...tools, callerPays: true }
    return tools.payer === undefined ? tools : { ...tools, payer: limitPerCaller(tools.payer, ip, allowance) }
  }
  const mcp = createMcpHttpHandler({ context, allowedHosts: settings.allowedHosts, version: deps.version, log: deps.log })
  const app = createApp(extendDeps(deps, { allowedHosts: settings.allowedHosts }), { mounts: [{ path: '/mcp', handle: mcp }] })
  return app
}
