import type { Readable, Writable } from 'node:stream'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { connectMcp } from './connectMcp.ts'
import { StdioLineTransport } from './stdioLineTransport.ts'

/** stdout carries JSON-RPC only: anything a dependency prints through console goes to stderr instead. */
export function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]): void => {
    process.stderr.write(`${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}\n`)
  }
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
}

/**
 * Serves `server` over `stdin` and `stdout` (the process's own for a host). Resolves once the host has closed the
 * pipe and `close` has run.
 */
export async function serveStdio(
  server: McpServer,
  close: () => Promise<void>,
  stdin: Readable = process.stdin,
  stdout: Writable = process.stdout,
): Promise<void> {
  const transport = new StdioLineTransport(stdin, stdout)
  const closed = new Promise<void>((resolve, reject) => {
    transport.onclose = () => {
      close().then(resolve, reject)
    }
  })
  await connectMcp(server, transport)
  stdin.once('end', () => {
    void server.close()
  })
  await closed
}
