import type { Hono } from 'hono'
import type { AppEnv } from '../http/appEnv.ts'
import { type AppDeps, createApp } from '../http/createApp.ts'
import { createMcpHttpHandler } from '../mcp/mcpHttpHandler.ts'
import { LOOPBACK_HOSTS, type McpSettings } from '../mcp/mcpSettings.ts'
import { createServiceClient, inProcessFetch } from '../mcp/serviceClient.ts'
import { createToolContext } from '../mcp/toolContext.ts'

export type ServerDeps = AppDeps & {
  /** The MCP server at /mcp (DESIGN 8); unset: no wallet, no key, loopback hosts only. */
  mcp?: Omit<McpSettings, 'baseUrl'>
}

/**
 * The server `swapeazi serve` runs: the HTTP API with the MCP server mounted at /mcp beside it. The MCP tools call
 * this same app in process (no socket), naming the remote agent's IP so per-IP limits count the agent.
 */
export function createServer(deps: ServerDeps): Hono<AppEnv> {
  const settings = deps.mcp ?? { dailyBudgetAtomic: 0n, allowedHosts: [...LOOPBACK_HOSTS] }
  const mcp = createMcpHttpHandler({
    context: (ip) =>
      createToolContext({
        client: createServiceClient(
          deps.publicUrl,
          inProcessFetch((request) => app.fetch(request), ip),
        ),
        settings,
        budget: deps.store.budget,
        clock: deps.clock,
        log: deps.log,
      }),
    allowedHosts: settings.allowedHosts,
    version: deps.version,
    log: deps.log,
  })
  const app = createApp(deps, { mounts: [{ path: '/mcp', handle: mcp }] })
  return app
}
