import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'

/** stdout carries JSON-RPC only: anything a dependency prints through console goes to stderr instead. */
export function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]): void => {
    process.stderr.write(`${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`)
  }
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
}

/** Serves `server` over this process's stdin and stdout; when the host closes the pipe, `close` runs and the process exits. */
export async function serveStdio(server: McpServer, close: () => Promise<void>): Promise<void> {
  const transport = new StdioServerTransport()
  transport.onclose = () => {
    void close().finally(() => process.exit(0))
  }
  await server.connect(transport)
  process.stdin.once('end', () => {
    void server.close()
  })
}
