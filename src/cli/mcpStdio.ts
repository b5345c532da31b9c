import type { Readable, Writable } from 'node:stream'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { buildAppDeps, packageVersion } from '../app/buildAppDeps.ts'
import { createLogger } from '../app/createLogger.ts'
import { type OperatorEndpoint, startOperatorEndpoint } from '../app/startOperatorEndpoint.ts'
import type { Config } from '../config.ts'
import { createApp } from '../http/createApp.ts'
import { createMcpServer } from '../mcp/createMcpServer.ts'
import { serveStdio } from '../mcp/serveStdio.ts'
import { createServiceClient, inProcessFetch } from '../mcp/serviceClient.ts'
import { createToolContext } from '../mcp/toolContext.ts'
import { DataDirHeldError } from '../store/dataDirLock.ts'
import { openStore } from '../store/openStore.ts'

/**
 * `swapeazi mcp`: the MCP server over stdio for LLM hosts (DESIGN 8). The tools call SWAPEAZI_BASE_URL when it is
 * set, otherwise an embedded service in this process (no socket), the same endpoints either way. The payer's budget
 * is kept in the configured store. An embedded store's data directory has one owner: one another process holds is
 * refused with its pid, naming SWAPEAZI_BASE_URL too when the tools could call that process instead. Logs go to
 * `io.stderr`. Resolves once the host has closed stdin and the store is closed.
 */
export async function runMcpStdio(config: Config, io: { stdin: Readable; stdout: Writable; stderr: Writable }): Promise<void> {
  const log = createLogger(config.logLevel, io.stderr)
  const remote = config.mcp.baseUrl
  let close: () => Promise<void>
  let server: McpServer
  if (remote === undefined) {
    const deps = await buildAppDeps(config, log).catch((error: unknown) => {
      if (!(error instanceof DataDirHeldError)) throw error
      // Only a `serve` answers HTTP: a `track` or another MCP server holding the directory has no URL to call.
      const servesHttp = error.holder.url !== null || /\bserve\b/.test(error.holder.command)
      if (!servesHttp) throw error
      const url = error.holder.url === null ? "the running service's URL" : `the running service's URL (${error.holder.url})`
      throw new DataDirHeldError(error.dataDir, error.holder, `set SWAPEAZI_BASE_URL to ${url} so the MCP server calls it`)
    })
    // The embedded store's owner runs operator commands (swapeazi keys, intel) on its live store, as serve does.
    let operator: OperatorEndpoint | undefined
    try {
      operator = await startOperatorEndpoint(deps)
    } catch (error) {
      await deps.market?.stop()
      await deps.store.sql.close()
      throw error
    }
    const app = createApp(deps)
    const client = createServiceClient(
      deps.publicUrl,
      inProcessFetch((request) => app.fetch(request)),
    )
    server = createMcpServer({
      ...createToolContext({ client, settings: config.mcp, budget: deps.store.budget, clock: deps.clock, log: deps.log }),
      version: deps.version,
      log: deps.log,
    })
    close = async () => {
      await operator?.close()
      await deps.market?.stop()
      await deps.store.sql.close()
    }
  } else {
    // Only the payer's daily budget is kept here: a directory another process holds is refused (DataDirHeldError).
    const store = config.mcp.walletPrivateKey === undefined ? undefined : await openStore(config.store)
    const client = createServiceClient(remote, (input, init) => fetch(input, init))
    const context =
      store === undefined
        ? { client, ...(config.mcp.apiKey === undefined ? {} : { apiKey: config.mcp.apiKey }) }
        : createToolContext({ client, settings: config.mcp, budget: store.budget, clock: Date.now, log })
    server = createMcpServer({ ...context, version: packageVersion(), log })
    close = async () => store?.sql.close()
  }
  await serveStdio(server, close, io.stdin, io.stdout)
}
