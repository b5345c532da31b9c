import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import { loadConfig } from '../../src/config.ts'
import { CAPABILITIES_URI } from '../../src/mcp/tool.ts'
import { quoteBody } from '../http/testApp.ts'

/** The clone's path in mcp.json, which a user replaces with where they cloned SwapEazi. */
const PLACEHOLDER_ROOT = '/path/to/swapeazi'
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '')
const START_TIMEOUT_MS = 90_000

const StdioEntry = z.strictObject({ command: z.string(), args: z.array(z.string()), env: z.record(z.string(), z.string()) })
const HttpEntry = z.strictObject({ type: z.literal('http'), url: z.url() })
const HostConfig = z.strictObject({ mcpServers: z.strictObject({ swapeazi: StdioEntry, 'swapeazi-http': HttpEntry }) })
type HostConfig = z.infer<typeof HostConfig>

const readHostConfig = async (): Promise<HostConfig> => HostConfig.parse(JSON.parse(await readFile(join(REPO_ROOT, 'mcp.json'), 'utf8')))

/**
 * What a user and Claude Code do to the file: the clone's path put in by hand, then `${VAR}` expanded from the
 * environment. An unset variable fails here rather than reaching the server as literal text.
 */
function substitute(text: string, variables: Record<string, string>): string {
  return text.replaceAll(PLACEHOLDER_ROOT, REPO_ROOT).replace(/\$\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const value = variables[name]
    if (value === undefined) throw new Error(`mcp.json uses \${${name}}, which the test does not set`)
    return value
  })
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('mcp.json', () => {
  it('holds a stdio entry for Claude Desktop and Claude Code, and an HTTP entry', async () => {
    const { swapeazi: stdio } = (await readHostConfig()).mcpServers
    expect(stdio.command).toBe('node')
    expect(stdio.args).toEqual([`${PLACEHOLDER_ROOT}/bin/swapeazi-mcp.js`])
    expect(existsSync(substitute(stdio.args[0] ?? '', {}))).toBe(true)
    // Hosts start servers in a directory of their own: a relative data dir would land anywhere.
    const dataDir = stdio.env['SWAPEAZI_DATA_DIR'] ?? ''
    expect(isAbsolute(dataDir) && dataDir.startsWith(`${PLACEHOLDER_ROOT}/`)).toBe(true)
  })

  it('keeps every secret a ${VAR} placeholder, never a literal', async () => {
    const { swapeazi: stdio } = (await readHostConfig()).mcpServers
    expect(stdio.env['SWAPEAZI_WALLET_PRIVATE_KEY']).toBe('${SWAPEAZI_WALLET_PRIVATE_KEY}')
    const secrets = Object.entries(stdio.env).filter(([name]) => /KEY|SECRET|TOKEN/.test(name))
    for (const [name, value] of secrets) expect({ name, value }).toEqual({ name, value: `\${${name}}` })
    expect(await readFile(join(REPO_ROOT, 'mcp.json'), 'utf8')).not.toMatch(/0x[0-9a-fA-F]{64}|se_[A-Za-z0-9_-]+\./)
  })

  it('points its HTTP entry at /mcp on the address `swapeazi serve` listens on by default', async () => {
    const { 'swapeazi-http': http } = (await readHostConfig()).mcpServers
    const url = new URL(http.url)
    const config = loadConfig({})
    expect({ protocol: url.protocol, hostname: url.hostname, port: Number(url.port), pathname: url.pathname }).toEqual({
      protocol: 'http:',
      hostname: config.host,
      port: config.port,
      pathname: '/mcp',
    })
    // /mcp refuses any other Host (DNS-rebinding protection): the entry's host must be on the default allow-list.
    expect(config.mcp.allowedHosts).toContain(url.hostname)
  })

  it(
    'its stdio entry starts bin/swapeazi-mcp.js from a foreign working directory: the six tools are listed and answer, a paid build included, with nothing but JSON-RPC on stdout and the logs on stderr',
    async () => {
      // The one spawned MCP server of the suite (the other stdio tests run `swapeazi mcp` in-process,
      // test/mcp/stdio.test.ts): what only a real process shows is checked here.
      const cwd = await mkdtemp(join(tmpdir(), 'swapeazi-host-cwd-'))
      const dataDir = join(await mkdtemp(join(tmpdir(), 'swapeazi-host-data-')), 'mcp')
      cleanups.push(() => rm(cwd, { recursive: true, force: true }))
      cleanups.push(() => rm(join(dataDir, '..'), { recursive: true, force: true }))

      const walletKey = generatePrivateKey()
      const wallet = privateKeyToAccount(walletKey).address
      const { swapeazi: stdio } = HostConfig.parse(
        JSON.parse(substitute(await readFile(join(REPO_ROOT, 'mcp.json'), 'utf8'), { SWAPEAZI_WALLET_PRIVATE_KEY: walletKey })),
      ).mcpServers
      expect(stdio.env['SWAPEAZI_DATA_DIR']).toBe(`${REPO_ROOT}/data/mcp`)
      // The entry's own data dir is the developer's; this run keeps its store in a temporary one.
      const transport = new StdioClientTransport({
        command: stdio.command,
        args: stdio.args,
        env: { ...stdio.env, SWAPEAZI_DATA_DIR: dataDir },
        cwd,
        stderr: 'pipe',
      })
      let stderr = ''
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8')
      })
      // Every line the server writes on stdout: the SDK parses each as one JSON-RPC message, and reports a line that
      // is not one (a banner, a console.log) through onerror, which the client chains. Hosts disconnect on it.
      const received: JSONRPCMessage[] = []
      transport.onmessage = (message) => received.push(message)
      const client = new Client({ name: 'host-config-test', version: '0.0.0' })
      const protocolErrors: string[] = []
      client.onerror = (error) => protocolErrors.push(error.message)
      cleanups.push(() => client.close())

      try {
        await client.connect(transport)
      } catch (error) {
        throw new Error(`the stdio entry did not start: ${String(error)}\n--- server stderr ---\n${stderr.slice(-20_000)}`, {
          cause: error,
        })
      }
      expect(client.getServerVersion()?.name).toBe('swapeazi')
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual([
        'discover_routes',
        'probe_corridor',
        'get_quote',
        'build_swap',
        'track_swap',
        'corridor_intelligence',
      ])

      const routes = await client.callTool({ name: 'discover_routes', arguments: { token: 'EURe' } })
      expect(routes.isError, JSON.stringify(routes.content)).not.toBe(true)
      expect((routes.structuredContent as { corridors: unknown[] }).corridors.length).toBeGreaterThan(0)
      const quote = await client.callTool({ name: 'get_quote', arguments: quoteBody() })
      expect(quote.structuredContent, JSON.stringify(quote.content)).toMatchObject({
        supported: true,
        quote: { fromAmount: '1000', toAmount: '995', toAmountMin: '990.025' },
      })
      const swap = await client.callTool({ name: 'build_swap', arguments: quoteBody() })
      expect(swap.isError, JSON.stringify(swap.content)).not.toBe(true)
      const built = swap.structuredContent as { swapEaziRef: string; payment: { transaction: string; payer: string } }
      expect(built.payment).toMatchObject({ transaction: `ledger:${built.swapEaziRef}`, payer: wallet })
      expect((await client.callTool({ name: 'get_quote', arguments: quoteBody({ toToken: 'DOGE' }) })).isError).toBe(true)
      expect((await client.readResource({ uri: CAPABILITIES_URI })).contents).toHaveLength(1)
      // The absolute data dir, not one under the host's working directory.
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
      await client.close()

      expect(protocolErrors).toEqual([])
      // initialize, tools/list, four tools/call and resources/read: seven answers on stdout, and nothing else.
      expect(received).toHaveLength(7)
      expect(received.every((message) => typeof (message as { id?: unknown }).id === 'number' && 'result' in message)).toBe(true)
      // stderr: the pino logs, every line one, with the embedded service's access log and the payment.
      const logs = stderr
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => {
          let parsed: unknown
          expect(() => (parsed = JSON.parse(line)), `stderr line is not a pino log line: ${line.slice(0, 200)}`).not.toThrow()
          return parsed as { event?: string; path?: string; status?: number }
        })
      expect(logs.some((line) => line.event === 'http_request' && line.path === '/api/x402/quote' && line.status === 200)).toBe(true)
      expect(logs.filter((line) => line.event === 'http_request' && line.path === '/api/x402/swap').map((line) => line.status)).toEqual([
        402, 200,
      ])
      expect(logs.some((line) => line.event === 'swap_paid_by_mcp')).toBe(true)
      expect(stderr.toLowerCase()).not.toContain(walletKey.slice(2).toLowerCase())
    },
    START_TIMEOUT_MS,
  )
})
